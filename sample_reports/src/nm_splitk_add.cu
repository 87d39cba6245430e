// Near miss for atomic-contention: a split-K matrix-vector product where each of 4 slices of K adds
// its partial sum into y[i] with atomicAdd. Every address takes only 4 updates and a warp's 32
// atomics go to 32 consecutive addresses: no contention. Both variants run the same kernel.
#include "sample.cuh"
const int N = 1 << 16, K = 1024, SPLIT = 4;
__global__ void gemv_splitk(const float* __restrict__ A, const float* __restrict__ x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, k0 = blockIdx.y * (K / SPLIT);
  float s = 0.f;
  for (int k = k0; k < k0 + K / SPLIT; ++k) s += A[(size_t)k * N + i] * x[k];
  atomicAdd(&y[i], s);  // 4 updates per address, spread over the grid
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)N * K, 89);
  float* x = device_fill<float>(K, 97);
  float* y; CK(cudaMalloc(&y, N * 4)); CK(cudaMemset(y, 0, N * 4));
  float us = median_us([&] { gemv_splitk<<<dim3(N / 256, SPLIT), 256>>>(A, x, y); }, reps_of(argc, argv));
  report("nm_splitk_add", fixed, us);
}
