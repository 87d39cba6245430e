// PageRank-style CSR SpMV y = A x on a 32-regular graph (1M rows, 32 nonzeros per row, random
// columns; col 128 MB + val 128 MB streamed, x 4 MB L2-resident): the cuSPARSE/CUSP "vector"
// kernel, one warp per row: lane j loads col[b + j], val[b + j], gathers x[col], then a 5-step
// SHFL.DOWN reduction and lane 0 stores y[row]. Each warp is a chain of three dependent memory
// round trips (rowptr -> col/val -> x) with only 256 B of col/val in flight, so the kernel is
// bound by how many warps each SM can keep waiting on memory.
// bad: spmv_csr_vector<<<1M, 32>>>: one warp per block. An SM holds at most 32 resident blocks,
// so it holds at most 32 warps (50% of its 64 warp slots) although registers (<= 32/thread,
// __launch_bounds__(256, 8)) and shared memory (none) would allow 64: half the memory
// parallelism the SM could have.
// fixed: the same kernel launched <<<1M / 8, 256>>>: 8 rows (warps) per block, same work per
// warp, 8 blocks x 8 warps = 64 resident warps per SM.
// SASS (sm_90, -O3): the j loop is compiled as a remainder loop plus 16x/8x-unrolled bodies; with
// 32 nonzeros per row every warp takes only the one-trip remainder path (LDG.E.CONSTANT rowptr x2,
// then LDG col + LDG val, dependent LDG x, one FFMA), then 5 SHFL.DOWN + FADD and the lane-0 STG;
// 32 registers (cap from __launch_bounds__(256, 8)), no spills; identical code in both variants.
// Expected gain ~1.5-2.5x (twice the warps waiting on memory, and 8x fewer block launches per SM;
// latency-bound -> closer to the
// ~270 MB / DRAM-bandwidth floor). Bit-identical output (same per-row reduction order).
#include "sample.cuh"
const int NR = 1 << 20, NC = 1 << 20, K = 32;
__global__ void __launch_bounds__(256, 8) spmv_csr_vector(const int* __restrict__ rowptr, const int* __restrict__ col,
                                                          const float* __restrict__ val, const float* __restrict__ x,
                                                          float* __restrict__ y, int nrows) {
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (row >= nrows) return;
  const int b = rowptr[row], e = rowptr[row + 1];
  float s = 0.f;
  for (int j = b + lane; j < e; j += 32) s = fmaf(val[j], x[col[j]], s);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) y[row] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<int> rp(NR + 1), ci((size_t)NR * K);
  for (int r = 0; r <= NR; ++r) rp[r] = r * K;
  unsigned seed = 4242;
  for (auto& c : ci) { seed = seed * 1664525u + 1013904223u; c = (seed >> 8) & (NC - 1); }
  int *rowptr, *col; CK(cudaMalloc(&rowptr, rp.size() * 4)); CK(cudaMalloc(&col, ci.size() * 4));
  CK(cudaMemcpy(rowptr, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(col, ci.data(), ci.size() * 4, cudaMemcpyHostToDevice));
  float* val = device_fill<float>((size_t)NR * K, 4243);
  float* x = device_fill<float>(NC, 4244);
  const size_t n_out = NR;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) spmv_csr_vector<<<NR / 8, 256>>>(rowptr, col, val, x, out, NR);
    else spmv_csr_vector<<<NR, 32>>>(rowptr, col, val, x, out, NR);  // ROOT
  }, reps_of(argc, argv));
  report("ho4_spmv_warprow_32t", fixed, us);
}
