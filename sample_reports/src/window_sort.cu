// local-memory. bad: a 3x3 median filter insertion-sorts its window with data-dependent indices,
// so the 9-float array lives in local memory. fixed: an unrolled odd-even transposition network
// with compile-time indices keeps the window in registers.
#include "sample.cuh"
const int W = 4096, H = 4096;
template <bool FIXED>
__global__ void median3x3(const float* __restrict__ img, float* __restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x >= W - 1 || y >= H - 1) return;
  float w[9];
#pragma unroll
  for (int k = 0; k < 9; ++k) w[k] = img[(size_t)(y + k / 3 - 1) * W + x + k % 3 - 1];
  if (FIXED) {
#pragma unroll
    for (int p = 0; p < 9; ++p)
#pragma unroll
      for (int k = p & 1; k < 8; k += 2) { float lo = fminf(w[k], w[k + 1]), hi = fmaxf(w[k], w[k + 1]); w[k] = lo; w[k + 1] = hi; }
  } else {
    for (int a = 1; a < 9; ++a) {
      float v = w[a];
      int b = a - 1;
      for (; b >= 0 && w[b] > v; --b) w[b + 1] = w[b];  // ROOT: data-dependent index into w[]
      w[b + 1] = v;
    }
  }
  out[(size_t)y * W + x] = w[4];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* img = device_fill<float>((size_t)W * H, 67);
  float* out; CK(cudaMalloc(&out, (size_t)W * H * 4));
  dim3 block(32, 8), grid((W - 2 + 31) / 32, (H - 2 + 7) / 8);
  float us = median_us([&] {
    if (fixed) median3x3<true><<<grid, block>>>(img, out);
    else median3x3<false><<<grid, block>>>(img, out);
  }, reps_of(argc, argv));
  report("window_sort", fixed, us);
}
