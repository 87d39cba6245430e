// Blocked lower-triangular solve L X = B with one 16 x 16 factor L applied to 2^18 right-hand-side
// panels of 16 x 16 floats (1 KB each, stored panel after panel, row-major inside a panel), the
// diagonal-block step of a blocked TRSM. The thread block IS the tile: 16 threads, thread c owns
// column c of a panel (16 coalesced 64-byte row loads, forward substitution in registers with L
// and 1/diag(L) in __constant__ memory as FFMA operands, 16 stores). Each block walks panels with a
// grid stride, loading the next panel's column into registers while it solves the current one;
// 4096 blocks, all resident at once (32 blocks per SM).
// bad: 16-thread blocks, so every warp runs with half of its lanes empty.
// 'fixed' (what a user might try): 32-thread blocks whose two half-warps solve two panels, same
// grid. NEAR MISS: the kernel streams 2 KB per panel against ~230 warp instructions per panel
// (about 60 issue cycles of an SM, against ~140 cycles of its share of DRAM bandwidth), and 31-32
// resident warps each keep the next panel's 16 loads in flight (~32 KB per SM), so it should be
// bound by DRAM bandwidth, not by lanes or issue slots; filling the empty lanes is not expected to
// help much (measure).
// Same arithmetic, same result.
#include "sample.cuh"
const int T = 16, PANELS = 1 << 18, GRID = 4096;
__constant__ float cL[T][T];      // the factor, read as constant-bank operands of the FFMAs
__constant__ float cInvDiag[T];
template <int TILES>
__global__ void __launch_bounds__(T * TILES) trsm_lower16(const float* __restrict__ B, float* __restrict__ X, int panels) {
  const int lane = threadIdx.x & (T - 1), sub = threadIdx.x / T, stride = gridDim.x * TILES;
  int p = blockIdx.x * TILES + sub;
  float nx[T];  // the next panel's column, loaded while the current one is solved
#pragma unroll
  for (int r = 0; r < T; ++r) nx[r] = p < panels ? B[(size_t)p * T * T + r * T + lane] : 0.f;
  for (; p < panels; p += stride) {
    float x[T];
#pragma unroll
    for (int r = 0; r < T; ++r) x[r] = nx[r];
    const int pn = p + stride;
    if (pn < panels) {
#pragma unroll
      for (int r = 0; r < T; ++r) nx[r] = B[(size_t)pn * T * T + r * T + lane];
    }
#pragma unroll
    for (int r = 0; r < T; ++r) {
      float s = x[r];
#pragma unroll
      for (int k = 0; k < r; ++k) s = fmaf(-cL[r][k], x[k], s);
      x[r] = s * cInvDiag[r];
    }
    float* o = X + (size_t)p * T * T + lane;
#pragma unroll
    for (int r = 0; r < T; ++r) o[r * T] = x[r];
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float> hl(T * T, 0.f);
  unsigned seed = 131;
  for (int r = 0; r < T; ++r)
    for (int c = 0; c <= r; ++c) {
      seed = seed * 1664525u + 1013904223u;
      const float u = (seed >> 8) * (1.0f / 16777216.0f);
      hl[r * T + c] = r == c ? 1.f + u : 0.1f * (u - 0.5f);
    }
  std::vector<float> hinv(T);
  for (int r = 0; r < T; ++r) hinv[r] = 1.f / hl[r * T + r];
  CK(cudaMemcpyToSymbol(cL, hl.data(), T * T * 4));
  CK(cudaMemcpyToSymbol(cInvDiag, hinv.data(), T * 4));
  float* B = device_fill<float>((size_t)PANELS * T * T, 132);
  float* X; CK(cudaMalloc(&X, (size_t)PANELS * T * T * 4));
  float us = median_us([&] {
    if (fixed) trsm_lower16<2><<<GRID, 2 * T>>>(B, X, PANELS);
    else trsm_lower16<1><<<GRID, T>>>(B, X, PANELS);  // ROOT
  }, reps_of(argc, argv));
  report("ho2_trsm16_halfwarp", fixed, us);
}
