// memory-barrier (fence after shared atomics). bad: a block histogram in shared memory issues
// __threadfence() after every shared-memory increment, so each key's load waits for the previous
// fence to drain. fixed: no fence in the loop; __syncthreads() before the merge is all it needs.
#include "sample.cuh"
const int N = 1 << 25, BINS = 256, THREADS = 256;
template <bool FIXED>
__global__ void block_hist(const unsigned* __restrict__ keys, unsigned* __restrict__ hist) {
  __shared__ unsigned h[BINS];
  h[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
    atomicAdd(&h[(keys[i] >> 7) & (BINS - 1)], 1u);
    if (!FIXED) __threadfence();  // ROOT: device-scope fence per key
  }
  __syncthreads();
  if (h[threadIdx.x]) atomicAdd(&hist[threadIdx.x], h[threadIdx.x]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* keys = device_keys(N, 131);
  unsigned* hist; CK(cudaMalloc(&hist, BINS * 4));
  float us = median_us([&] {
    if (fixed) block_hist<true><<<132 * 8, THREADS>>>(keys, hist);
    else block_hist<false><<<132 * 8, THREADS>>>(keys, hist);
  }, reps_of(argc, argv));
  report("fence_hist", fixed, us);
}
