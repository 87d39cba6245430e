// atomic-contention. bad: every thread adds into one of 8 global counters, so the whole GPU
// serializes on 8 addresses in L2. fixed: each block counts in shared memory first and
// publishes 8 atomics per block.
#include "sample.cuh"
const int BINS = 8, THREADS = 256, BLOCKS = 132 * 8, PER_THREAD = 16;
template <bool FIXED>
__global__ void bin_count(const unsigned* __restrict__ keys, unsigned* __restrict__ counts) {
  __shared__ unsigned local[BINS];
  if (FIXED && threadIdx.x < BINS) local[threadIdx.x] = 0;
  if (FIXED) __syncthreads();
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  for (int i = 0; i < PER_THREAD; ++i) {
    unsigned b = keys[tid + i * stride] % BINS;
    if (FIXED) atomicAdd(&local[b], 1u);
    else atomicAdd(&counts[b], 1u);  // ROOT: 8 hot addresses for the whole grid
  }
  if (FIXED) {
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  size_t n = (size_t)THREADS * BLOCKS * PER_THREAD;
  unsigned* keys = device_keys(n, 37);
  unsigned* counts; CK(cudaMalloc(&counts, BINS * 4)); CK(cudaMemset(counts, 0, BINS * 4));
  float us = median_us([&] {
    if (fixed) bin_count<true><<<BLOCKS, THREADS>>>(keys, counts);
    else bin_count<false><<<BLOCKS, THREADS>>>(keys, counts);
  }, reps_of(argc, argv));
  report("global_atomics", fixed, us);
}
