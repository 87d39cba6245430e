// NEAR MISS (low-data-reuse). One explicit (FTCS) step of anisotropic heat diffusion on an
// 8192 x 8192 fp32 grid (256 MB in, 256 MB out), insulated (clamped) borders:
// u' = cC*u + cN*uN + cS*uS + cW*uW + cE*uE, written the classic way: a 16x16 block stages its
// 18x18 patch (tile + 1-cell halo, guarded halo loads; padded pitch, conflict-free) in shared memory and each thread computes
// ONE output from 5 shared loads and 5 FMUL/FFMA -- each loaded value feeds one FMA, the exact
// low-reuse shape (1 LDS per FFMA), so register tiling looks like the obvious fix.
// bad: stencil5_tile16, one output per thread.
// fixed: stencil5_reg4, register tiling along y: each thread computes 4 vertically adjacent
// outputs (block tile 16 x 64) and reuses the centre column in registers (6 center + 4 west +
// 4 east loads for 4 outputs instead of 20).
// Why it does not help: the kernel moves 8 bytes of DRAM traffic per 5 FMAs; the bad variant
// already streams at ~90% of DRAM bandwidth (~150-160 us on H100) while the shared-memory pipe is
// ~40-60% busy -- LSU work is hidden under DRAM time, so cutting LDS count by ~2x does not
// shorten the kernel. Expected ~1.0x (0.97-1.05).
// SASS (sm_90, -O3): bad: loop-free; 1 LDG centre + predicated (@P) halo LDGs under tx/ty
// guards, STS, BAR.SYNC, 5 LDS + FMUL + 4 FFMA, STG; fixed: loop-free, the 4-row loops fully
// unrolled: 4 centre LDG + guarded halo LDGs, BAR.SYNC, 14 LDS + 20 FMUL/FFMA, 4 STG.
// Each output is the same expression, contracted the same way (FMUL + 4 FFMA in the same order)
// in both kernels: bit-identical output.
#include "sample.cuh"
const int NX = 8192, NY = 8192;
struct Coef { float c, n, s, w, e; };
__device__ __forceinline__ float at(const float* __restrict__ u, int y, int x) {
  y = min(max(y, 0), NY - 1); x = min(max(x, 0), NX - 1);
  return u[(size_t)y * NX + x];
}
__global__ void __launch_bounds__(256) stencil5_tile16(const float* __restrict__ u, float* __restrict__ v, Coef k) {
  __shared__ float s[18][48];  // pitch 48: the two rows a warp reads sit 16 banks apart (conflict-free)
  const int tx = threadIdx.x, ty = threadIdx.y, x = blockIdx.x * 16 + tx, y = blockIdx.y * 16 + ty;
  s[ty + 1][tx + 1] = u[(size_t)y * NX + x];
  if (tx == 0) s[ty + 1][0] = at(u, y, x - 1);
  if (tx == 15) s[ty + 1][17] = at(u, y, x + 1);
  if (ty == 0) s[0][tx + 1] = at(u, y - 1, x);
  if (ty == 15) s[17][tx + 1] = at(u, y + 1, x);
  __syncthreads();
  v[(size_t)y * NX + x] = k.c * s[ty + 1][tx + 1] + k.n * s[ty][tx + 1] + k.s * s[ty + 2][tx + 1] +
                          k.w * s[ty + 1][tx] + k.e * s[ty + 1][tx + 2];  // ROOT
}
__global__ void __launch_bounds__(256) stencil5_reg4(const float* __restrict__ u, float* __restrict__ v, Coef k) {
  __shared__ float s[66][20];  // pitch 20: rows 4 apart land 16 banks apart (conflict-free)
  const int tx = threadIdx.x, ty = threadIdx.y, x = blockIdx.x * 16 + tx, y0 = blockIdx.y * 64;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int ly = ty + 16 * r, y = y0 + ly;
    s[ly + 1][tx + 1] = u[(size_t)y * NX + x];
    if (tx == 0) s[ly + 1][0] = at(u, y, x - 1);
    if (tx == 15) s[ly + 1][17] = at(u, y, x + 1);
  }
  if (ty == 0) s[0][tx + 1] = at(u, y0 - 1, x);
  if (ty == 15) s[65][tx + 1] = at(u, y0 + 64, x);
  __syncthreads();
  const int ly0 = ty * 4;  // this thread's 4 rows: ly0 .. ly0 + 3
  float col[6];
#pragma unroll
  for (int r = 0; r < 6; ++r) col[r] = s[ly0 + r][tx + 1];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const float w = s[ly0 + r + 1][tx], e = s[ly0 + r + 1][tx + 2];
    v[(size_t)(y0 + ly0 + r) * NX + x] = k.c * col[r + 1] + k.n * col[r] + k.s * col[r + 2] + k.w * w + k.e * e;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NX * NY;
  float* u = device_fill<float>(n, 91);
  const size_t n_out = n;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  const Coef k = {0.52f, 0.14f, 0.10f, 0.13f, 0.11f};
  float us = median_us([&] {
    if (fixed) stencil5_reg4<<<dim3(NX / 16, NY / 64), dim3(16, 16)>>>(u, out, k);
    else stencil5_tile16<<<dim3(NX / 16, NY / 16), dim3(16, 16)>>>(u, out, k);
  }, reps_of(argc, argv));
  report("ho4_heat5pt_smem_nm", fixed, us);
}
