// Unfused attention scores S = scale * Q K^T (the baddbmm step of eager attention) for 64
// batch-heads, 512 queries x 512 keys, head dim 64, fp32: 1.07 G FMAs, 8 MB of Q/K (L2-resident),
// 64 MB of S written.
// bad: the textbook 16x16 shared-tile kernel: 256 threads, one score per thread; per 16-wide k
// chunk the block stages a 16x16 Q tile and a 16x16 K tile ([16][17], padded against bank
// conflicts) and each thread runs acc = fma(qs[ty][kk], ks[tx][kk], acc) for kk = 0..15. Every
// FFMA needs two fresh shared loads (one broadcast Q value, one K value), and each loaded value
// feeds exactly one FFMA of that thread: 2 LDS per FFMA, so the shared-memory (MIO/LSU) pipe --
// at most one 128-byte wavefront per cycle per SM -- bounds the kernel at ~1/4-1/8 of the FMA rate.
// fixed: register tiling, the cuBLAS/CUTLASS SIMT shape: 64x64 tile per 256-thread block, each
// thread computes a 4x4 block of scores; per kk it loads 4 Q values and 4 K values as two
// LDS.128 from k-major tiles ([16][68]) and issues 16 FFMAs: 8 loaded values feed 16 FFMAs
// (each value feeds 4), so the FMA pipe, not shared memory, becomes the limit.
// SASS (sm_90, -O3): bad (32 regs): both the k0 loop (4 chunks) and the kk loop are fully
// unrolled, loop-free: 128 LDS.32 (the padded rows defeat vectorization) for 64 FFMA, 8 LDG,
// 8 STS, 8 BAR.SYNC, one STG; fixed (45 regs): the k0 loop stays a 4-trip loop, kk fully
// unrolled: per chunk 2 LDG.E.128, 8 transposing STS.32, 2 BAR.SYNC, 16 x (2 LDS.128 + 16 FFMA);
// 4 STG.E.128 per thread at the end.
// Expected gain ~3-4x (LDS-bound at ~1 FFMA per LDS wavefront -> FMA-bound). Each score is the same
// fmaf chain over k = 0..63 from 0 followed by the same scale multiply: bit-identical output.
#include "sample.cuh"
const int BH = 64, L = 512, D = 64;
__global__ void __launch_bounds__(256) qk_scores_tile16(const float* __restrict__ Q, const float* __restrict__ K,
                                                        float* __restrict__ S, float scale) {
  __shared__ float qs[16][17], ks[16][17];
  const int bh = blockIdx.z, i0 = blockIdx.y * 16, j0 = blockIdx.x * 16, tx = threadIdx.x, ty = threadIdx.y;
  const float* q = Q + (size_t)bh * L * D;
  const float* k = K + (size_t)bh * L * D;
  float acc = 0.f;
  for (int k0 = 0; k0 < D; k0 += 16) {
    qs[ty][tx] = q[(i0 + ty) * D + k0 + tx];
    ks[ty][tx] = k[(j0 + ty) * D + k0 + tx];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) acc = fmaf(qs[ty][kk], ks[tx][kk], acc);  // ROOT
    __syncthreads();
  }
  S[((size_t)bh * L + i0 + ty) * L + j0 + tx] = acc * scale;
}
__global__ void __launch_bounds__(256) qk_scores_reg4x4(const float* __restrict__ Q, const float* __restrict__ K,
                                                        float* __restrict__ S, float scale) {
  __shared__ __align__(16) float qs[16][68], ks[16][68];  // k-major: [kk][row]
  const int bh = blockIdx.z, i0 = blockIdx.y * 64, j0 = blockIdx.x * 64, tx = threadIdx.x, ty = threadIdx.y;
  const int t = ty * 16 + tx, lr = t >> 2, lc = (t & 3) * 4;  // loader: row lr, 4 k values at lc
  const float* q = Q + (size_t)bh * L * D;
  const float* k = K + (size_t)bh * L * D;
  float acc[4][4];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b) acc[a][b] = 0.f;
  for (int k0 = 0; k0 < D; k0 += 16) {
    const float4 qv = *reinterpret_cast<const float4*>(q + (i0 + lr) * D + k0 + lc);
    const float4 kv = *reinterpret_cast<const float4*>(k + (j0 + lr) * D + k0 + lc);
    qs[lc + 0][lr] = qv.x; qs[lc + 1][lr] = qv.y; qs[lc + 2][lr] = qv.z; qs[lc + 3][lr] = qv.w;
    ks[lc + 0][lr] = kv.x; ks[lc + 1][lr] = kv.y; ks[lc + 2][lr] = kv.z; ks[lc + 3][lr] = kv.w;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      const float4 a4 = *reinterpret_cast<const float4*>(&qs[kk][ty * 4]);
      const float4 b4 = *reinterpret_cast<const float4*>(&ks[kk][tx * 4]);
      const float a[4] = {a4.x, a4.y, a4.z, a4.w}, b[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[u][v] = fmaf(a[u], b[v], acc[u][v]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
    *reinterpret_cast<float4*>(S + ((size_t)bh * L + i0 + ty * 4 + u) * L + j0 + tx * 4) =
        make_float4(acc[u][0] * scale, acc[u][1] * scale, acc[u][2] * scale, acc[u][3] * scale);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* Q = device_fill<float>((size_t)BH * L * D, 61);
  float* K = device_fill<float>((size_t)BH * L * D, 62);
  const size_t n_out = (size_t)BH * L * L;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  const float scale = 0.125f;
  float us = median_us([&] {
    if (fixed) qk_scores_reg4x4<<<dim3(L / 64, L / 64, BH), dim3(16, 16)>>>(Q, K, out, scale);
    else qk_scores_tile16<<<dim3(L / 16, L / 16, BH), dim3(16, 16)>>>(Q, K, out, scale);
  }, reps_of(argc, argv));
  report("ho4_attn_scores_tile16", fixed, us);
}
