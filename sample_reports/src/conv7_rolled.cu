// instruction-overhead. bad: the 7x7 taps of a 2-D convolution run in two rolled loops, so each
// FFMA comes with LDC, index IMADs, compares and branches. fixed: both loops fully unrolled.
#include "sample.cuh"
const int W = 4096, H = 2048, R = 3, TW = 32, TH = 8;
__constant__ float wts[(2 * R + 1) * (2 * R + 1)];
template <bool FIXED>
__global__ void conv7(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[TH + 2 * R][TW + 2 * R];
  int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  for (int t = threadIdx.y * TW + threadIdx.x; t < (TH + 2 * R) * (TW + 2 * R); t += TW * TH) {
    int ty = t / (TW + 2 * R), tx = t % (TW + 2 * R);
    int gx = min(max(x0 + tx - R, 0), W - 1), gy = min(max(y0 + ty - R, 0), H - 1);
    tile[ty][tx] = in[gy * W + gx];
  }
  __syncthreads();
  float acc = 0.f;
  if (!FIXED) {
#pragma unroll 1
    for (int dy = 0; dy <= 2 * R; ++dy)
#pragma unroll 1
      for (int dx = 0; dx <= 2 * R; ++dx) acc += wts[dy * (2 * R + 1) + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];  // ROOT
  } else {
#pragma unroll
    for (int dy = 0; dy <= 2 * R; ++dy)
#pragma unroll
      for (int dx = 0; dx <= 2 * R; ++dx) acc += wts[dy * (2 * R + 1) + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
  }
  out[(y0 + threadIdx.y) * W + x0 + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)W * H, 72);
  float* w = device_fill<float>((2 * R + 1) * (2 * R + 1), 73);
  CK(cudaMemcpyToSymbol(wts, w, (2 * R + 1) * (2 * R + 1) * 4, 0, cudaMemcpyDeviceToDevice));
  float* out; CK(cudaMalloc(&out, (size_t)W * H * 4));
  dim3 block(TW, TH), grid(W / TW, H / TH);
  float us = median_us([&] {
    if (fixed) conv7<true><<<grid, block>>>(in, out);
    else conv7<false><<<grid, block>>>(in, out);
  }, reps_of(argc, argv));
  report("conv7_rolled", fixed, us);
}
