// near miss for memory-barrier: a single-pass sum in which each block publishes its partial sum
// with one __threadfence() at the end of the kernel before taking a ticket; the last block adds
// the partials. One fence per block, outside the hot loop.
#include "sample.cuh"
const int N = 1 << 25, THREADS = 256, BLOCKS = 132 * 8;
__global__ void sum_last_block(const float* __restrict__ x, float* partial, unsigned* ticket, float* total) {
  __shared__ float warp_sum[THREADS / 32];
  __shared__ bool last;
  float s = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) s += x[i];
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < THREADS / 32; ++w) s += warp_sum[w];
    partial[blockIdx.x] = s;
    __threadfence();  // once per block: the partial is visible before the ticket is taken
    last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float t = 0.f;
    for (int b = 0; b < gridDim.x; ++b) t += ((volatile float*)partial)[b];
    *total = t;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 137);
  float *partial, *total; CK(cudaMalloc(&partial, BLOCKS * 4)); CK(cudaMalloc(&total, 4));
  unsigned* ticket; CK(cudaMalloc(&ticket, 4)); CK(cudaMemset(ticket, 0, 4));
  float us = median_us([&] { sum_last_block<<<BLOCKS, THREADS>>>(x, partial, ticket, total); }, reps_of(argc, argv));
  report("nm_onefence", fixed, us);
}
