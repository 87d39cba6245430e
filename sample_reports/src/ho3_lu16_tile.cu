// Block-Jacobi preconditioner setup + apply for a small problem: 8 diagonal 16 x 16 blocks, each
// LU-factored (Doolittle, no pivoting, diagonally dominant) and then applied to its own 512
// right-hand-side panels of 16 x 16 floats (forward + backward substitution). The thread block IS
// the tile: 16 threads, thread c owns column c (column of A during the factorization, exchanged
// with width-16 shuffles; column c of each RHS panel during the solves, with L/U and 1/diag(U)
// read from shared memory as broadcasts). Per panel: 16 coalesced 64-byte row loads, ~256 FFMA
// (dependent chains through the substitution), 16 stores.
// bad: 8 blocks of 16 threads: each of the 8 warps runs half empty (and 124 SMs are idle).
// 'fixed' (what a user might try after a partial-warps hint): 32-thread blocks whose two
// half-warps handle two tiles, 4 blocks; the per-tile shared arrays are offset by 16 banks so the
// two half-warps' broadcast reads do not conflict. NEAR MISS: every warp still issues the same
// instruction stream (the same number of warp instructions per tile pair as per tile before),
// and the kernel is bound by each lone warp's dependency chain and load latency (one warp per
// SM), not by lanes or issue slots; filling the lanes only halves the number of busy SMs.
// Expected ~1.0x (or slightly slower); partial-warps should not be called high. Same results.
#include "sample.cuh"
#include <cmath>
const int T = 16, TILES = 8, PANELS = 512, TSTRIDE = T * T + 16;  // +16 words: the two tiles 16 banks apart
template <int TPB>  // tiles per block: 1 (16 threads) or 2 (32 threads)
__global__ void __launch_bounds__(T * TPB) lu16_block_jacobi(const float* __restrict__ A, const float* __restrict__ B,
                                                             float* __restrict__ LU, float* __restrict__ X, int panels) {
  __shared__ __align__(16) float sLU[TPB * TSTRIDE];
  __shared__ float sInv[TPB * 32];
  const int c = threadIdx.x & (T - 1), sub = threadIdx.x / T, tile = blockIdx.x * TPB + sub;
  const unsigned mask = TPB == 2 ? 0xffffffffu : 0x0000ffffu;
  float* lu = sLU + sub * TSTRIDE;
  float* inv = sInv + sub * 32;
  float a[T];
#pragma unroll
  for (int r = 0; r < T; ++r) a[r] = A[(size_t)tile * T * T + r * T + c];
#pragma unroll
  for (int k = 0; k < T; ++k) {
    const float piv = __shfl_sync(mask, a[k], k, T);
    const float pinv = 1.f / piv;
    if (c == k) {
      inv[k] = pinv;
#pragma unroll
      for (int i = k + 1; i < T; ++i) a[i] *= pinv;  // column k becomes L(:, k)
    }
#pragma unroll
    for (int i = k + 1; i < T; ++i) {
      const float l = __shfl_sync(mask, a[i], k, T);
      if (c > k) a[i] = fmaf(-l, a[k], a[i]);
    }
  }
#pragma unroll
  for (int r = 0; r < T; ++r) { lu[r * T + c] = a[r]; LU[(size_t)tile * T * T + r * T + c] = a[r]; }
  __syncwarp(mask);
  const float* Bt = B + (size_t)tile * panels * T * T + c;
  float* Xt = X + (size_t)tile * panels * T * T + c;
  for (int p = 0; p < panels; ++p) {
    float x[T];
#pragma unroll
    for (int r = 0; r < T; ++r) x[r] = Bt[(size_t)p * T * T + r * T];
#pragma unroll
    for (int r = 1; r < T; ++r)
#pragma unroll
      for (int k = 0; k < r; ++k) x[r] = fmaf(-lu[r * T + k], x[k], x[r]);
#pragma unroll
    for (int r = T - 1; r >= 0; --r) {
#pragma unroll
      for (int k = r + 1; k < T; ++k) x[r] = fmaf(-lu[r * T + k], x[k], x[r]);
      x[r] *= inv[r];
    }
#pragma unroll
    for (int r = 0; r < T; ++r) Xt[(size_t)p * T * T + r * T] = x[r];
    __syncwarp(mask);  // keeps L/U in shared memory (without it ptxas hoists all 256 values into registers and spills)
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float> ha((size_t)TILES * T * T);
  unsigned seed = 306;
  for (int t = 0; t < TILES; ++t)
    for (int r = 0; r < T; ++r)
      for (int c = 0; c < T; ++c) {
        seed = seed * 1664525u + 1013904223u;
        const float u = (seed >> 8) * (1.0f / 16777216.0f);
        ha[(size_t)t * T * T + r * T + c] = r == c ? 4.f + u : 0.2f * (u - 0.5f);
      }
  float* A; CK(cudaMalloc(&A, ha.size() * 4));
  CK(cudaMemcpy(A, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  const size_t nb = (size_t)TILES * PANELS * T * T;
  float* B = device_fill<float>(nb, 307);
  float *LU, *X;
  CK(cudaMalloc(&LU, ha.size() * 4)); CK(cudaMalloc(&X, nb * 4));
  float us = median_us([&] {
    if (fixed) lu16_block_jacobi<2><<<TILES / 2, 2 * T>>>(A, B, LU, X, PANELS);
    else lu16_block_jacobi<1><<<TILES, T>>>(A, B, LU, X, PANELS);  // ROOT
  }, reps_of(argc, argv));
  {  // check: A * X(panel 0 of the last tile) == B(panel 0)
    const int t = TILES - 1;
    std::vector<float> hb(T * T), hx(T * T);
    CK(cudaMemcpy(hb.data(), B + (size_t)t * PANELS * T * T, T * T * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hx.data(), X + (size_t)t * PANELS * T * T, T * T * 4, cudaMemcpyDeviceToHost));
    float err = 0.f;
    for (int r = 0; r < T; ++r)
      for (int c = 0; c < T; ++c) {
        float s = 0.f;
        for (int k = 0; k < T; ++k) s += ha[(size_t)t * T * T + r * T + k] * hx[k * T + c];
        err = fmaxf(err, fabsf(s - hb[r * T + c]));
      }
    if (!(err < 1e-4f)) fprintf(stderr, "check failed: max residual %g\n", err);
  }
  report("ho3_lu16_tile", fixed, us);
}
