// occupancy-limited. bad: 100 KB of dynamic shared memory per block (never needed) allows
// two 128-thread blocks per SM, too few warps to hide the latency of a random gather.
// fixed: the same kernel launched without the shared-memory reservation.
#include "sample.cuh"
const int N = 1 << 24, THREADS = 128;
__global__ void gather(const unsigned* __restrict__ idx, const float* __restrict__ src, float* __restrict__ dst, int n) {
  extern __shared__ float scratch[];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = src[idx[i] % n];  // ROOT: latency-bound gather with few warps resident
    if (v < -1.f) scratch[threadIdx.x] = v;
    dst[i] = v;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* idx = device_keys(N, 47);
  float* src = device_fill<float>(N, 53);
  float* dst; CK(cudaMalloc(&dst, (size_t)N * 4));
  int smem = fixed ? 0 : 100 * 1024;
  CK(cudaFuncSetAttribute(gather, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  float us = median_us([&] { gather<<<132 * 16, THREADS, smem>>>(idx, src, dst, N); }, reps_of(argc, argv));
  report("smem_occupancy", fixed, us);
}
