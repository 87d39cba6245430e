// partial-warps. bad: blocks of 16 threads, so every warp runs with 16 of its 32 lanes: half
// of each issue slot is wasted and the SM's limit on resident blocks caps the warps. fixed:
// the same work in 128-thread blocks.
#include "sample.cuh"
const int N = 132 * 4096;
__global__ void damp(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < 256; ++k) v = v * 0.999f + 0.001f;
  y[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 3);
  float* y; CK(cudaMalloc(&y, N * 4));
  int threads = fixed ? 128 : 16;  // ROOT-LAUNCH
  float us = median_us([&] { damp<<<N / threads, threads>>>(x, y, N); }, reps_of(argc, argv));
  report("half_warps", fixed, us);
}
