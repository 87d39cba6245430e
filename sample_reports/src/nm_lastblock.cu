// near miss for partial-warps: 256-thread blocks over n = 2^24 + 37 elements; the bounds check
// idles lanes only in the last of 65537 blocks (37 of its 256 threads have an element).
#include "sample.cuh"
#include <cuda_fp16.h>
const int N = (1 << 24) + 37, THREADS = 256, STEPS = 64;
__global__ void soft_clip(const __half* __restrict__ x, __half* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // only the last block has lanes past the end
  float v = __half2float(x[i]);
  for (int s = 0; s < STEPS; ++s) v = v - 0.05f * v * v * v + 0.01f;
  y[i] = __float2half(v);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<__half> h(N);
  for (int i = 0; i < N; ++i) h[i] = __float2half((i % 1000) * 1e-3f);
  __half *x, *y; CK(cudaMalloc(&x, N * 2)); CK(cudaMalloc(&y, N * 2));
  CK(cudaMemcpy(x, h.data(), N * 2, cudaMemcpyHostToDevice));
  int blocks = (N + THREADS - 1) / THREADS;
  float us = median_us([&] { soft_clip<<<blocks, THREADS>>>(x, y, N); }, reps_of(argc, argv));
  report("nm_lastblock", fixed, us);
}
