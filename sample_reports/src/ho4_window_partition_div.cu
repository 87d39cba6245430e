// Swin-Transformer window_partition on a bf16 activation [B=64, H=56, W=56, C=128] with 7x7
// windows: out[b, ny, nx, wy, wx, c] = in[b, ny*7 + wy, nx*7 + wx, c] (the
// x.view(B, H/ws, ws, W/ws, ws, C).permute(0, 1, 3, 2, 4, 5).contiguous() copy), 25.7M 2-byte
// elements (51 MB in, 51 MB out). All shapes are runtime values (one kernel serves every stage and
// window size), so a generic one-element-per-thread, loop-free gather kernel decomposes the output
// index with runtime divisions: o % C, o / C, then % / by ws, ws, nW, nH -- 5 unsigned divisions.
// bad: `/` and `%` by runtime divisors: each 32-bit division is an ~17-instruction sequence
// (I2F.U32.RP, MUFU.RCP, IADD, F2I.FTZ.U32.TRUNC, IMAD, IMAD.HI, IMAD, ISETP, 2 predicated IADD,
// a second ISETP/IADD correction, LOP3/SEL for the divisor == 0 case) and the remainder an IMAD:
// ~90 of the ~115 instructions a thread issues are division code; the kernel is issue-bound
// while DRAM sits at ~30%.
// fixed: PyTorch's IntDivider: the host precomputes a magic multiplier and shift per divisor and
// the kernel does q = (umulhi(n, m) + n) >> s, r = n - q*d: IMAD.HI + IADD + SHF + IMAD, ~4
// instructions per division.
// SASS (sm_90, -O3): bad: straight-line code, ~115 instructions, 4 I2F.U32.RP + 4 MUFU.RCP per
// thread (the two divisions by ws share one reciprocal; the divisors are uniform kernel
// parameters, but every thread computes its own reciprocals), 9 IMAD.HI.U32, 11 ISETP.GE.U32,
// one LDG.E.U16 and one STG.E.U16; fixed: ~45 instructions, 5 IMAD.HI.U32 + 5 SHF.R.U32, no
// MUFU, same memory instructions. 16 registers each.
// Expected gain ~2-2.5x (issue-bound division code -> close to the ~30-40 us DRAM/LSU time).
// Bit-identical output (pure copy; both index maps are exact).
#include "sample.cuh"
#include <cstdint>
const unsigned NB = 64, HH = 56, WW = 56, CC = 128, WS = 7;
struct WinShape { unsigned C, ws, nW, nH, H, W; };
__global__ void __launch_bounds__(256) window_partition(const uint16_t* __restrict__ in, uint16_t* __restrict__ out,
                                                        WinShape s, unsigned total) {
  const unsigned o = blockIdx.x * 256 + threadIdx.x;
  if (o >= total) return;
  const unsigned c = o % s.C;  // ROOT
  unsigned r = o / s.C;
  const unsigned wx = r % s.ws; r /= s.ws;
  const unsigned wy = r % s.ws; r /= s.ws;
  const unsigned nx = r % s.nW; r /= s.nW;
  const unsigned ny = r % s.nH; const unsigned b = r / s.nH;
  out[o] = in[((b * s.H + ny * s.ws + wy) * s.W + nx * s.ws + wx) * s.C + c];
}
struct IntDivider {  // PyTorch IntDivider<unsigned>: valid for n < 2^31
  unsigned d, m, sh;
  __device__ __forceinline__ unsigned div(unsigned n) const { return (__umulhi(n, m) + n) >> sh; }
};
IntDivider make_divider(unsigned d) {
  unsigned sh = 0;
  while ((1ull << sh) < d) ++sh;
  return {d, (unsigned)((((1ull << 32) * ((1ull << sh) - d)) / d) + 1), sh};
}
struct WinShapeFast { IntDivider C, ws, nW, nH; unsigned H, W; };
__global__ void __launch_bounds__(256) window_partition_fastdiv(const uint16_t* __restrict__ in, uint16_t* __restrict__ out,
                                                                WinShapeFast s, unsigned total) {
  const unsigned o = blockIdx.x * 256 + threadIdx.x;
  if (o >= total) return;
  unsigned r = s.C.div(o);
  const unsigned c = o - r * s.C.d;
  unsigned q = s.ws.div(r); const unsigned wx = r - q * s.ws.d; r = q;
  q = s.ws.div(r); const unsigned wy = r - q * s.ws.d; r = q;
  q = s.nW.div(r); const unsigned nx = r - q * s.nW.d; r = q;
  const unsigned b = s.nH.div(r), ny = r - b * s.nH.d;
  out[o] = in[((b * s.H + ny * s.ws.d + wy) * s.W + nx * s.ws.d + wx) * s.C.d + c];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const unsigned total = NB * HH * WW * CC;
  std::vector<uint16_t> h(total);
  unsigned seed = 1313;
  for (auto& v : h) { seed = seed * 1664525u + 1013904223u; v = (uint16_t)(seed >> 16); }
  uint16_t* in; CK(cudaMalloc(&in, (size_t)total * 2));
  CK(cudaMemcpy(in, h.data(), (size_t)total * 2, cudaMemcpyHostToDevice));
  const size_t n_out = total;
  uint16_t* out; CK(cudaMalloc(&out, n_out * 2));
  const WinShape s = {CC, WS, WW / WS, HH / WS, HH, WW};
  const WinShapeFast sf = {make_divider(CC), make_divider(WS), make_divider(WW / WS), make_divider(HH / WS), HH, WW};
  const unsigned blocks = (total + 255) / 256;
  float us = median_us([&] {
    if (fixed) window_partition_fastdiv<<<blocks, 256>>>(in, out, sf, total);
    else window_partition<<<blocks, 256>>>(in, out, s, total);
  }, reps_of(argc, argv));
  report("ho4_window_partition_div", fixed, us);
}
