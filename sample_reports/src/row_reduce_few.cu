// grid-too-small (one block per row). bad: the max of each of 32 long rows is reduced by one
// 256-thread block per row: 32 blocks for 132 SMs. fixed: each row is split over 128 blocks
// (a 2-D grid of column chunks x rows) that combine with atomicMax.
#include "sample.cuh"
const int ROWS = 32, COLS = 1 << 19, THREADS = 256;
__global__ void row_max(const unsigned* __restrict__ m, unsigned* __restrict__ out) {
  __shared__ unsigned part[THREADS / 32];
  int chunk = COLS / gridDim.x, c0 = blockIdx.x * chunk;
  const unsigned* row = m + (size_t)blockIdx.y * COLS;
  unsigned v = 0;
  for (int c = c0 + threadIdx.x; c < c0 + chunk; c += THREADS) v = max(v, row[c]);  // ROOT: 32 blocks stream all 64 MB
  for (int o = 16; o; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < THREADS / 32; ++w) v = max(v, part[w]);
    atomicMax(out + blockIdx.y, v);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* m = device_keys((size_t)ROWS * COLS, 31);
  unsigned* out; CK(cudaMalloc(&out, ROWS * 4)); CK(cudaMemset(out, 0, ROWS * 4));
  dim3 grid(fixed ? 128 : 1, ROWS);  // ROOT-LAUNCH
  float us = median_us([&] { row_max<<<grid, THREADS>>>(m, out); }, reps_of(argc, argv));
  report("row_reduce_few", fixed, us);
}
