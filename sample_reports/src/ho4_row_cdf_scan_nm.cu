// NEAR MISS (barrier-imbalance). Row-wise CDFs for inverse-transform sampling: 512K rows of 128
// unnormalized bin weights (fp32, 256 MB in, 256 MB out), an inclusive prefix sum per row. A
// 256-thread block handles 8 rows, one warp per row, each thread 4 consecutive bins (float4):
// a sequential scan of its 4 values, then a Hillis-Steele scan of the 32 thread totals written
// the block-scan-library way, through shared memory with __syncthreads() between steps:
// for s = 1..16: a = lane >= s ? buf[t - s] : 0; sync; if (lane >= s) buf[t] += a; sync.
// The guarded loads/adds compile to predicated instructions between 10 BAR.SYNCs, and at step s
// lanes 0..s-1 of every warp idle -- it looks like the barrier-imbalance pattern.
// bad: row_cdf_smem (shared-memory Hillis-Steele with block barriers).
// fixed: row_cdf_shfl, the same scan with __shfl_up_sync and no barriers.
// Why it does not help: every warp does exactly the same work between barriers (each scans its
// own row with the same lane pattern), so all 8 warps reach each barrier together and barrier
// waits are short; with 8 blocks (64 warps) per SM other blocks' loads and stores overlap the scan
// anyway. The kernel moves 1 KB of DRAM traffic per warp per ~50 issued instructions and runs at
// ~90% of DRAM bandwidth in both variants. Expected ~1.0x (0.97-1.05).
// SASS (sm_90, -O3): bad: loop-free (the 5 steps unrolled), LDG.E.128, 3 FADD, STS, 10 BAR.SYNC
// with predicated @P LDS / FADD / STS between them, LDS of the exclusive prefix, 4 FADD,
// STG.E.128; fixed: 5 SHFL.UP + predicated FADD, 1 SHFL.UP for the exclusive prefix, same loads,
// stores and FADDs. Same additions in the same order: bit-identical output.
#include "sample.cuh"
const int ROWS = 512 * 1024, BINS = 128, RPB = 8;  // rows per 256-thread block
__global__ void __launch_bounds__(256) row_cdf_smem(const float4* __restrict__ w, float4* __restrict__ cdf) {
  __shared__ float buf[256];
  const int t = threadIdx.x, lane = t & 31;
  const size_t g = (size_t)blockIdx.x * 256 + t;  // float4 index: row = g / 32, bins 4*lane..4*lane+3
  float4 v = w[g];
  v.y += v.x; v.z += v.y; v.w += v.z;  // thread-local inclusive scan
  float tot = v.w;
  buf[t] = tot;
  __syncthreads();
#pragma unroll
  for (int s = 1; s < 32; s <<= 1) {
    const float a = lane >= s ? buf[t - s] : 0.f;  // ROOT
    __syncthreads();
    if (lane >= s) { tot += a; buf[t] = tot; }
    __syncthreads();
  }
  const float excl = lane > 0 ? buf[t - 1] : 0.f;
  v.x += excl; v.y += excl; v.z += excl; v.w += excl;
  cdf[g] = v;
}
__global__ void __launch_bounds__(256) row_cdf_shfl(const float4* __restrict__ w, float4* __restrict__ cdf) {
  const int t = threadIdx.x, lane = t & 31;
  const size_t g = (size_t)blockIdx.x * 256 + t;
  float4 v = w[g];
  v.y += v.x; v.z += v.y; v.w += v.z;
  float tot = v.w;
#pragma unroll
  for (int s = 1; s < 32; s <<= 1) {
    const float a = __shfl_up_sync(0xffffffffu, tot, s);
    if (lane >= s) tot += a;
  }
  float excl = __shfl_up_sync(0xffffffffu, tot, 1);
  if (lane == 0) excl = 0.f;
  v.x += excl; v.y += excl; v.z += excl; v.w += excl;
  cdf[g] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)ROWS * BINS;
  float* w = device_fill<float>(n, 201);
  const size_t n_out = n;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) row_cdf_shfl<<<ROWS / RPB, 256>>>((const float4*)w, (float4*)out);
    else row_cdf_smem<<<ROWS / RPB, 256>>>((const float4*)w, (float4*)out);
  }, reps_of(argc, argv));
  report("ho4_row_cdf_scan_nm", fixed, us);
}
