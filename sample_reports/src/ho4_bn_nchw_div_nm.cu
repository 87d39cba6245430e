// NEAR MISS (integer-division). Inference BatchNorm (folded to a per-channel scale and shift) on
// an NCHW fp32 activation N=64, C=256, H=W=56 (205 MB in, 205 MB out), the generic elementwise
// form: one float4 group per thread, loop-free, channel = (i / HW) % C with HW and C runtime
// values -- two runtime unsigned divisions per thread, visible in the SASS as two full
// I2F.U32.RP / MUFU.RCP / F2I / IMAD.HI / ISETP / correction sequences (~30 of the ~63
// instructions a thread issues), the textbook integer-division finding.
// bad: y = x * scale[(i / HW) % C] + shift[...] with runtime `/` and `%`.
// fixed: the same kernel with PyTorch-style IntDivider magic numbers (IMAD.HI + IADD + SHF).
// Why it does not help: each thread moves 32 bytes of DRAM traffic (a 16-byte load and a 16-byte
// store) for ~63 issued instructions; at ~3.3-4.8 TB/s the SM's share of DRAM bandwidth is
// ~15-25 bytes per cycle, so a warp's 1 KB takes ~40-70 cycles of DRAM time but only ~15 cycles
// of issue (4 schedulers). The kernel runs at ~90% of DRAM bandwidth with issue slots ~25% busy;
// the division code is hidden under memory time. Expected ~1.0x (0.97-1.05).
// SASS (sm_90, -O3): bad: loop-free, 2 MUFU.RCP + 2 I2F.U32.RP, IMAD.HI.U32 sequences,
// LDG.E.128 of x, 2 LDG.E.CONSTANT (scale, shift; L1 hits), 4 FFMA, STG.E.128; fixed: 2 IMAD.HI +
// SHF pairs instead (~38 instructions), same memory instructions; 18 registers each.
// Bit-identical output (exact index maps).
#include "sample.cuh"
const unsigned NB = 64, C = 256, HW = 56 * 56;
struct IntDivider {  // PyTorch IntDivider<unsigned>: valid for n < 2^31
  unsigned d, m, sh;
  __device__ __forceinline__ unsigned div(unsigned n) const { return (__umulhi(n, m) + n) >> sh; }
};
IntDivider make_divider(unsigned d) {
  unsigned sh = 0;
  while ((1ull << sh) < d) ++sh;
  return {d, (unsigned)((((1ull << 32) * ((1ull << sh) - d)) / d) + 1), sh};
}
__global__ void __launch_bounds__(256) bn_infer_nchw(const float4* __restrict__ x, const float* __restrict__ scale,
                                                     const float* __restrict__ shift, float4* __restrict__ y,
                                                     unsigned hw, unsigned nc, unsigned n4) {
  const unsigned i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n4) return;
  const unsigned ch = (i * 4 / hw) % nc;  // ROOT
  const float a = scale[ch], b = shift[ch];
  float4 v = x[i];
  v.x = fmaf(v.x, a, b); v.y = fmaf(v.y, a, b); v.z = fmaf(v.z, a, b); v.w = fmaf(v.w, a, b);
  y[i] = v;
}
__global__ void __launch_bounds__(256) bn_infer_nchw_fastdiv(const float4* __restrict__ x, const float* __restrict__ scale,
                                                             const float* __restrict__ shift, float4* __restrict__ y,
                                                             IntDivider hw, IntDivider nc, unsigned n4) {
  const unsigned i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n4) return;
  const unsigned p = hw.div(i * 4), q = nc.div(p), ch = p - q * nc.d;
  const float a = scale[ch], b = shift[ch];
  float4 v = x[i];
  v.x = fmaf(v.x, a, b); v.y = fmaf(v.y, a, b); v.z = fmaf(v.z, a, b); v.w = fmaf(v.w, a, b);
  y[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NB * C * HW;
  const unsigned n4 = (unsigned)(n / 4);
  float* x = device_fill<float>(n, 151);
  float* scale = device_fill<float>(C, 152);
  float* shift = device_fill<float>(C, 153);
  const size_t n_out = n;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  const IntDivider dhw = make_divider(HW), dc = make_divider(C);
  float us = median_us([&] {
    if (fixed) bn_infer_nchw_fastdiv<<<(n4 + 255) / 256, 256>>>((const float4*)x, scale, shift, (float4*)out, dhw, dc, n4);
    else bn_infer_nchw<<<(n4 + 255) / 256, 256>>>((const float4*)x, scale, shift, (float4*)out, HW, C, n4);
  }, reps_of(argc, argv));
  report("ho4_bn_nchw_div_nm", fixed, us);
}
