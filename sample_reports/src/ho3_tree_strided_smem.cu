// Row sums of a 16384 x 1024 uint32 count matrix (e.g. per-document term counts), one 1024-thread
// block per row, one element per thread, then a shared-memory tree reduction, fully unrolled.
// bad: the "interleaved addressing" tree: for s = 1, 2, 4, ..., 512,
// `idx = 2 * s * tid; if (idx < 1024) sh[idx] += sh[idx + s];`. The active threads are packed into
// the lowest warps (no divergence inside the busy warps), but the shared index has a stride of 2s
// words across the lanes of a warp, so the predicated LDS, LDS and STS of each step hit the same
// bank min(2s, 32)-ways: 4-, 8-, 16-, 32-way conflicts for s = 2..16 and 16/8/4/2-way for the last
// steps (the s = 1 step is vectorized by nvcc into one conflict-free LDS.64); ~6x the shared
// wavefronts of the fixed tree, on the critical path between barriers.
// fixed: sequential addressing, `if (tid < s) sh[tid] += sh[tid + s]` for s = 512..1: the same
// number of active threads per step, consecutive lanes on consecutive words (conflict-free).
// Expected gain ~1.3-1.8x: per row the work is one 4-byte load, so the tree's serialized shared
// traffic between barriers is the cost. Unsigned (wrap-around) sums: bit-identical.
#include "sample.cuh"
const int ROWS = 16384, COLS = 1024, BLOCK = 1024;
__global__ void __launch_bounds__(BLOCK) row_sum_interleaved(const unsigned* __restrict__ x, unsigned* __restrict__ sums) {
  __shared__ unsigned sh[BLOCK];
  const int tid = threadIdx.x;
  sh[tid] = x[(size_t)blockIdx.x * COLS + tid];
  __syncthreads();
#pragma unroll
  for (int s = 1; s < BLOCK; s <<= 1) {
    const int idx = 2 * s * tid;
    if (idx < BLOCK) sh[idx] += sh[idx + s];  // ROOT
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = sh[0];
}
__global__ void __launch_bounds__(BLOCK) row_sum_sequential(const unsigned* __restrict__ x, unsigned* __restrict__ sums) {
  __shared__ unsigned sh[BLOCK];
  const int tid = threadIdx.x;
  sh[tid] = x[(size_t)blockIdx.x * COLS + tid];
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sh[tid] += sh[tid + s];
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = sh[0];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* x = device_keys((size_t)ROWS * COLS, 101);
  unsigned* sums; CK(cudaMalloc(&sums, ROWS * sizeof(unsigned)));
  float us = median_us([&] {
    if (fixed) row_sum_sequential<<<ROWS, BLOCK>>>(x, sums);
    else row_sum_interleaved<<<ROWS, BLOCK>>>(x, sums);
  }, reps_of(argc, argv));
  report("ho3_tree_strided_smem", fixed, us);
}
