// constant-cache-divergence. bad: a sum of 8 piecewise-linear response curves whose (slope, offset)
// segments sit in __constant__ memory, selected by each element's value, so a warp reads up to 32
// constant addresses per lookup. fixed: the same table read from global memory (const __restrict__).
#include "sample.cuh"
const int N = 1 << 23, SEGS = 64, CURVES = 8;
__constant__ float2 c_seg[CURVES * SEGS];
template <bool FIXED>
__global__ void response(const float* __restrict__ x, const float2* __restrict__ g_seg, float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
    float v = x[i], acc = 0.f;
    int s = min(SEGS - 1, max(0, (int)(v * SEGS)));
#pragma unroll
    for (int c = 0; c < CURVES; ++c) {
      float2 p;
      if (FIXED) p = g_seg[c * SEGS + s];
      else p = c_seg[c * SEGS + s];  // ROOT: segment index differs across the warp
      acc += p.x * v + p.y;
    }
    y[i] = acc;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float2* g_seg = (float2*)device_fill<float>(2 * CURVES * SEGS, 107);
  CK(cudaMemcpyToSymbol(c_seg, g_seg, CURVES * SEGS * 8, 0, cudaMemcpyDeviceToDevice));
  float* x = device_fill<float>(N, 109);
  float* y; CK(cudaMalloc(&y, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) response<true><<<132 * 8, 256>>>(x, g_seg, y);
    else response<false><<<132 * 8, 256>>>(x, g_seg, y);
  }, reps_of(argc, argv));
  report("interp_knots", fixed, us);
}
