// LayerNorm forward with Welford statistics for a small transformer (d_model 256, 262144 tokens =
// batch 128 x seq 2048, fp32, gamma/beta per feature): one 256-thread block per token (8 blocks =
// 64 warps per SM), one feature per thread, and the two running statistics (mean, M2) reduced
// together through a shared-memory tree with Chan's pairwise combine (equal counts s at step s:
// delta = mb - ma, mean = ma + delta/2, M2 = M2a + M2b + delta^2 s/2), then y = (x - mean) rstd g + b.
// bad: interleaved addressing, for s = 1, 2, ..., 128: `i = 2*s*tid; active = i < 256;` guarded
// loads of s_mean[i], s_mean[i+s], s_m2[i], s_m2[i+s] and guarded stores. The 2s-word stride across
// lanes folds the active lanes of a warp onto 32/min(2s,32) banks: 2-, 4-, 8-, 8-, 8-way for
// s = 1..16 (s = 1 loads fuse into conflict-free LDS.64, the s = 1 STS stays 2-way), then 4-, 2-,
// 1-way for the last steps with 4, 2, 1 lanes. The active threads are packed into the lowest warps:
// 4, 2, 1, 1, ... of the 8 warps, so at every step (active warps) x (conflict degree) <= 8 = the
// warps that execute the instruction. nvcc predicates the whole step (no branch): every warp
// executes every @!P LDS/STS, the idle ones with 0 wavefronts. Per row: ~266 tree wavefronts
// (+32 for the initial stores and final broadcast reads) against ~104 for the conflict-free tree;
// the average per executed tree LDS/STS is ~0.73 wavefronts ("1-way"), while ~2/3 of the kernel's
// shared wavefronts are bank conflicts.
// fixed: the SAME tree (same pairs, same combine order, same active threads per step) on a padded
// layout: entry i lives at i + i/32, so entries 2s apart fall in distinct banks: conflict-free.
// SASS (sm_90, nvcc 13.0, -O3): bad layernorm_fwd_welford (19 regs): 32 LDS (30 predicated @!P0/@!P1,
// 2 of them LDS.64 at s = 1; 2 unpredicated final reads), 18 STS (16 predicated, 2 initial),
// 9 BAR.SYNC, no branch inside the tree (only the final self-BRA). fixed layernorm_fwd_welford_padded
// (22 regs): 34 LDS, 18 STS (16 predicated), 9 BAR.SYNC; nvcc puts each step's 4 loads in a
// BSSY/BRA-skipped region (8 BSSY) and predicates the arithmetic and the 2 stores.
// Expected gain ~1.3-1.8x: the bad kernel is bound by the shared pipe (~300 wavefronts per 256-
// element row, ~1.2 per element) while the fixed one sits at ~0.6-0.8 cycles per element (DRAM:
// 2 KB in/out per row; barrier latency of the 8-step tree with 8 blocks per SM).
// Results: bit-identical (same operations in the same order; only the shared addresses differ).
#include "sample.cuh"
const int TOKENS = 262144, D_MODEL = 256, BLOCK = D_MODEL;  // batch 128 x seq 2048, d_model 256
const float LN_EPS = 1e-5f;
// Interleaved-addressing Welford tree: at step s, entry i = 2*s*tid holds (mean, M2) of the s
// features [i, i+s) and entry i+s those of [i+s, i+2s); Chan's combine with equal counts s:
// delta = mb - ma, mean = ma + delta/2, M2 = M2a + M2b + delta^2 * s/2.
__global__ void __launch_bounds__(BLOCK, 8) layernorm_fwd_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                                                                  const float* __restrict__ beta, float* __restrict__ y) {
  __shared__ float s_mean[BLOCK];
  __shared__ float s_m2[BLOCK];
  const int tid = threadIdx.x;
  const size_t off = (size_t)blockIdx.x * D_MODEL + tid;
  const float v = x[off];
  s_mean[tid] = v;
  s_m2[tid] = 0.f;
  __syncthreads();
#pragma unroll
  for (int s = 1; s < BLOCK; s <<= 1) {
    const int i = 2 * s * tid;
    const bool active = i < BLOCK;  // only the first BLOCK/(2s) threads combine a pair
    const float ma = active ? s_mean[i] : 0.f, mb = active ? s_mean[i + s] : 0.f;  // ROOT
    const float qa = active ? s_m2[i] : 0.f, qb = active ? s_m2[i + s] : 0.f;
    const float delta = mb - ma;
    if (active) {
      s_mean[i] = fmaf(0.5f, delta, ma);
      s_m2[i] = fmaf(delta * delta, 0.5f * s, qa + qb);
    }
    __syncthreads();
  }
  const float mean = s_mean[0];
  const float rstd = rsqrtf(s_m2[0] * (1.f / D_MODEL) + LN_EPS);
  y[off] = fmaf((v - mean) * rstd, gamma[tid], beta[tid]);
}
// Same tree, same combine order, stored with one padding word per 32: element i lives at
// i + i/32, so the lanes of a warp that read entries 2*s apart land in different banks.
__device__ __forceinline__ int pad32(int i) { return i + (i >> 5); }
__global__ void __launch_bounds__(BLOCK, 8) layernorm_fwd_welford_padded(const float* __restrict__ x, const float* __restrict__ gamma,
                                                                         const float* __restrict__ beta, float* __restrict__ y) {
  __shared__ float s_mean[BLOCK + BLOCK / 32];
  __shared__ float s_m2[BLOCK + BLOCK / 32];
  const int tid = threadIdx.x;
  const size_t off = (size_t)blockIdx.x * D_MODEL + tid;
  const float v = x[off];
  s_mean[pad32(tid)] = v;
  s_m2[pad32(tid)] = 0.f;
  __syncthreads();
#pragma unroll
  for (int s = 1; s < BLOCK; s <<= 1) {
    const int i = 2 * s * tid, a = pad32(i), b = pad32(i + s);
    const bool active = i < BLOCK;
    const float ma = active ? s_mean[a] : 0.f, mb = active ? s_mean[b] : 0.f;
    const float qa = active ? s_m2[a] : 0.f, qb = active ? s_m2[b] : 0.f;
    const float delta = mb - ma;
    if (active) {
      s_mean[a] = fmaf(0.5f, delta, ma);
      s_m2[a] = fmaf(delta * delta, 0.5f * s, qa + qb);
    }
    __syncthreads();
  }
  const float mean = s_mean[0];
  const float rstd = rsqrtf(s_m2[0] * (1.f / D_MODEL) + LN_EPS);
  y[off] = fmaf((v - mean) * rstd, gamma[tid], beta[tid]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)TOKENS * D_MODEL;
  float* x = device_fill<float>(n, 501);
  float* gamma = device_fill<float>(D_MODEL, 502);
  float* beta = device_fill<float>(D_MODEL, 503);
  float* y; CK(cudaMalloc(&y, n * sizeof(float)));
  float us = median_us([&] {
    if (fixed) layernorm_fwd_welford_padded<<<TOKENS, BLOCK>>>(x, gamma, beta, y);
    else layernorm_fwd_welford<<<TOKENS, BLOCK>>>(x, gamma, beta, y);
  }, reps_of(argc, argv));
  report("ho5_layernorm_welford_tree", fixed, us);
}
