// Materializes a Sparse-Transformer-style attention mask (Child et al. "fixed" + "strided"
// patterns, causal) for an 8192 x 8192 score matrix as uint8: key k is visible to query q if
// k <= q and (k / blk == q / blk  [same local block]  or  k % blk >= blk - c  [summary columns]
// or  (q - k) % stride == 0  [strided heads]), written FlexAttention-mask_mod style with
// non-short-circuit & and | so every term is evaluated (straight-line, no branches). blk, c and
// stride are runtime configuration (blk = 128, c = 8, stride = 96 here). 64 MB written, nothing read: the kernel is index math.
// Each thread produces 8 consecutive mask bytes (one 8-byte store), unrolled.
// bad: straight-line unrolled code with two runtime divisions per element: k / blk (+ k % blk from
// the same quotient) and (q - k) % stride, plus q / blk once. ptxas hoists the two reciprocals
// (I2F.U32.RP + MUFU.RCP) out of the 8 copies, but each of the 17 divisions still costs ~8-9
// instructions (IMAD.HI.U32, IMAD, ISETP.GE.U32, VIADD/IADD corrections, a second compare and
// correction, SEL for divisor 0): ~145 of the ~265 instructions a thread issues (~55%) are
// division code; the kernel is issue-bound with DRAM far from busy.
// fixed: the index math restructured: one k0 / blk and one (q - k0) % stride per thread, then the
// 8 consecutive keys step the remainders incrementally (r + 1 == blk ? wrap : r + 1, and the
// strided remainder counts down with a wrap): 3 divisions per 8 elements instead of 17. Valid for
// any blk, stride >= 1.
// SASS (sm_90, -O3): both loop-free (the 8-element loop fully unrolled, no branches), 2 MUFU.RCP,
// one STG.E.64 of the packed bytes. bad: ~265 instructions per thread, 19 IMAD.HI.U32, 49
// ISETP.GE.U32, 16 regs; fixed: ~180 instructions, 5 IMAD.HI.U32, the incremental steps as
// VIADD/ISETP/SEL chains, 32 regs.
// Expected gain ~1.4-1.6x (issue-bound: ~33 -> ~22 instructions per mask byte; the 64 MB of
// writes, ~15-20 us, is well below either). Bit-identical output.
#include "sample.cuh"
#include <cstdint>
const int LQ = 8192, LK = 8192, E = 8;  // E mask bytes per thread
__global__ void __launch_bounds__(256) sparse_mask(uint2* __restrict__ mask, unsigned blk, unsigned c, unsigned stride) {
  const unsigned q = blockIdx.y, k0 = (blockIdx.x * 256 + threadIdx.x) * E;
  const unsigned qb = q / blk;
  unsigned char m[E];
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const unsigned k = k0 + j;
    const bool vis = (k <= q) & ((k / blk == qb) | (k % blk >= blk - c) | ((q - k) % stride == 0));  // ROOT
    m[j] = vis;
  }
  uint2 v;
  v.x = m[0] | (m[1] << 8) | (m[2] << 16) | ((unsigned)m[3] << 24);
  v.y = m[4] | (m[5] << 8) | (m[6] << 16) | ((unsigned)m[7] << 24);
  mask[((size_t)q * LK + k0) / E] = v;
}
__global__ void __launch_bounds__(256) sparse_mask_incr(uint2* __restrict__ mask, unsigned blk, unsigned c, unsigned stride) {
  const unsigned q = blockIdx.y, k0 = (blockIdx.x * 256 + threadIdx.x) * E;
  const unsigned qb = q / blk;
  unsigned kb = k0 / blk, kr = k0 - kb * blk;  // k0 / blk and k0 % blk
  unsigned sr = (q - k0) % stride;             // (q - k) % stride for k = k0
  unsigned char m[E];
#pragma unroll
  for (int j = 0; j < E; ++j) {
    const unsigned k = k0 + j;
    const bool vis = (k <= q) & ((kb == qb) | (kr >= blk - c) | (sr == 0));
    m[j] = vis;
    if (++kr == blk) { kr = 0; ++kb; }     // next key: k + 1
    sr = sr == 0 ? stride - 1 : sr - 1;    // (q - (k + 1)) % stride
  }
  uint2 v;
  v.x = m[0] | (m[1] << 8) | (m[2] << 16) | ((unsigned)m[3] << 24);
  v.y = m[4] | (m[5] << 8) | (m[6] << 16) | ((unsigned)m[7] << 24);
  mask[((size_t)q * LK + k0) / E] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n_out = (size_t)LQ * LK / E;
  uint2* out; CK(cudaMalloc(&out, n_out * sizeof(uint2)));
  const unsigned blk = 128, c = 8, stride = 96;
  const dim3 grid(LK / (256 * E), LQ);
  float us = median_us([&] {
    if (fixed) sparse_mask_incr<<<grid, 256>>>(out, blk, c, stride);
    else sparse_mask<<<grid, 256>>>(out, blk, c, stride);
  }, reps_of(argc, argv));
  report("ho4_sparse_mask_mod", fixed, us);
}
