// Row L2 norms of a 50688 x 1024 float matrix, one 1024-thread block per row at a time (persistent
// grid of 2 blocks per SM, the next row's element prefetched). bad: the classic guarded tree
// reduction in shared memory, `if (tid < s) sh[tid] += sh[tid + s]` over 10 unrolled steps; nvcc
// predicates the loads, add and store, so every warp issues each step and most lanes are off.
// fixed: warp shuffles, then one warp-sum exchange through shared memory (all lanes active).
#include "sample.cuh"
const int COLS = 1024, ROWS = 264 * 192;
template <bool FIXED>
__global__ void __launch_bounds__(1024, 2) row_l2norm(const float* __restrict__ x, float* __restrict__ norms, int rows) {
  __shared__ float sh[COLS];
  __shared__ float wsum[32];
  const int tid = threadIdx.x;
  int row = blockIdx.x;
  float next = row < rows ? x[(size_t)row * COLS + tid] : 0.f;
  for (; row < rows; row += gridDim.x) {
    const float v = next;
    const int nr = row + gridDim.x;
    if (nr < rows) next = x[(size_t)nr * COLS + tid];
    float s;
    if (!FIXED) {
      sh[tid] = v * v;
      __syncthreads();
#pragma unroll
      for (int st = COLS / 2; st > 0; st >>= 1) {
        if (tid < st) sh[tid] += sh[tid + st];  // ROOT
        __syncthreads();
      }
      s = sh[0];
      __syncthreads();
    } else {
      float p = v * v;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) p += __shfl_xor_sync(0xffffffffu, p, o);
      if ((tid & 31) == 0) wsum[tid >> 5] = p;
      __syncthreads();
      p = wsum[tid & 31];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) p += __shfl_xor_sync(0xffffffffu, p, o);
      s = p;
      __syncthreads();
    }
    if (tid == 0) norms[row] = sqrtf(s);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* x = device_fill<float>((size_t)ROWS * COLS, 11);
  float* norms; CK(cudaMalloc(&norms, ROWS * 4));
  const int grid = 2 * sms;
  float us = median_us([&] {
    if (fixed) row_l2norm<true><<<grid, COLS>>>(x, norms, ROWS);
    else row_l2norm<false><<<grid, COLS>>>(x, norms, ROWS);
  }, reps_of(argc, argv));
  report("ho_rownorm_tree", fixed, us);
}
