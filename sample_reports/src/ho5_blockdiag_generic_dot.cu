// Block-diagonal linear layer (Monarch / block-diagonal adapter style): y = x W^T with W =
// blockdiag(W_0 .. W_127), 128 diagonal blocks of 32x32 fp32 (hidden 4096), 6144 tokens (batch 48 x
// seq 128; 96 MB in, 96 MB out, W 512 KB). One 256-thread block per (diagonal block b, 256 tokens):
// the block stages W_b (4 KB) in shared memory once, each warp walks 32 tokens, lane r computes
// output feature r: y[tok][32b + r] = dot(W_b[r][0..31], x[tok][32b .. 32b+31]) through a small
// library-style helper `dot_n(const float* a, const float* v, int n)` written once for generic
// pointers. A kernel argument picks where the weight rows come from at run time: `use_cache ?
// shared tile : global W` (the global path is the fallback when the caller cannot give the kernel
// shared memory); main runs use_cache = 1. The address space of `a` is unknown to nvcc, so the
// helper's weight loads are generic LD.E (not LDS). The kernel pointers carry no __restrict__
// (library style), so the y store may alias the row and nvcc reloads it for every token (with
// __restrict__ on x, W, y it hoists the 32 row loads out of the token loop).
// bad: blockdiag_linear, the tile has pitch 32: lane r reads word 32 r + j, all 32 lanes in bank j
// (lanes walk down a column): every weight LD.E that lands in shared memory is a 32-way bank
// conflict, 32 wavefronts instead of 1, 32 of them per token per warp.
// fixed: blockdiag_linear_pad, pitch 33: lane r reads word 33 r + j, bank (r + j) % 32, conflict-free.
// Same helper, same loads and FMAs in the same order.
// SASS (sm_90, nvcc 13.0, -O3 -lineinfo): both kernels 30 regs, the same code but for the pitch: a
// 32-trip token loop (not unrolled) whose body is the inlined helper: 32 LD.E (generic, the weight
// row, [R.64+4j]) interleaved with 32 LDG.E (x, one uniform address per warp, L1 hits), 32 FFMA,
// 1 STG.E; before it the use_cache staging: 4 LDG.E + 4 STS (@P0, conflict-free rows) and 1
// @P0 BAR.SYNC. 0 LDS in either kernel.
// Expected gain ~10-15x: bad is bound by the shared data path, ~1056 L1 wavefronts per token per
// warp (32 LD.E x 32 + 32 LDG): 6144 x 128 x 1056 / 132 SMs ~ 6.3M cycles, ~3.2-3.6 ms; fixed
// needs 64 wavefronts per token per warp (one per load) and is bound by the LSU/L1 issue of its 64
// loads per token (~0.2-0.3 ms; DRAM: 192 MB, ~0.07 ms).
// Results: bit-identical (same fmaf chain per output; only the shared pitch differs).
#include "sample.cuh"
const int TOKENS = 6144, NBLK = 128, BS = 32, HIDDEN = NBLK * BS;  // hidden 4096 = 128 blocks of 32
const int THREADS = 256, WARPS = THREADS / 32, TOK_PER_BLOCK = 256, TOK_PER_WARP = TOK_PER_BLOCK / WARPS;
// ---- small linear-algebra helper, written once for any memory space ---------------------------
__device__ __forceinline__ float dot_n(const float* a, const float* v, int n) {
  float s = 0.f;
#pragma unroll 32
  for (int j = 0; j < n; ++j) s = fmaf(a[j], v[j], s);  // ROOT
  return s;
}
// ---- the layer: weight rows from a shared tile (pitch PITCH) or straight from global ------------
template <int PITCH>
__device__ __forceinline__ void blockdiag_body(const float* x, const float* W, float* y,
                                               int use_cache, float* sW) {
  const int b = blockIdx.x % NBLK, tok0 = (blockIdx.x / NBLK) * TOK_PER_BLOCK;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float* Wb = W + (size_t)b * BS * BS;
  if (use_cache) {
#pragma unroll
    for (int i = 0; i < BS * BS / THREADS; ++i) {
      const int idx = threadIdx.x + THREADS * i, r = idx / BS, c = idx % BS;
      sW[r * PITCH + c] = Wb[idx];
    }
    __syncthreads();
  }
  const float* wrow = use_cache ? sW + lane * PITCH : Wb + lane * BS;  // generic: shared or global
  for (int t = 0; t < TOK_PER_WARP; ++t) {
    const size_t tok = (size_t)tok0 + warp * TOK_PER_WARP + t;
    const float* xv = x + tok * HIDDEN + b * BS;
    y[tok * HIDDEN + b * BS + lane] = dot_n(wrow, xv, BS);
  }
}
__global__ void __launch_bounds__(THREADS) blockdiag_linear(const float* x, const float* W,
                                                            float* y, int use_cache) {
  __shared__ float sW[BS * BS];  // pitch 32: lane r's row starts in bank 0
  blockdiag_body<BS>(x, W, y, use_cache, sW);
}
__global__ void __launch_bounds__(THREADS) blockdiag_linear_pad(const float* x, const float* W,
                                                                float* y, int use_cache) {
  __shared__ float sW[BS * (BS + 1)];  // pitch 33: lane r's row starts in bank r
  blockdiag_body<BS + 1>(x, W, y, use_cache, sW);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)TOKENS * HIDDEN, 1001);
  float* W = device_fill<float>((size_t)NBLK * BS * BS, 1002);
  float* y; CK(cudaMalloc(&y, (size_t)TOKENS * HIDDEN * sizeof(float)));
  const int use_cache = 1;  // the shared-memory path (4 KB per block is always available here)
  const int blocks = NBLK * (TOKENS / TOK_PER_BLOCK);
  float us = median_us([&] {
    if (fixed) blockdiag_linear_pad<<<blocks, THREADS>>>(x, W, y, use_cache);
    else blockdiag_linear<<<blocks, THREADS>>>(x, W, y, use_cache);
  }, reps_of(argc, argv));
  report("ho5_blockdiag_generic_dot", fixed, us);
}
