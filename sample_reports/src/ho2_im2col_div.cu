// im2col for a 3x3 convolution (pad 1, stride 1) of a 32 x 64 x 56 x 56 float NCHW batch: the
// column matrix has C*3*3 = 576 rows and N*OH*OW = 100352 columns (57.8 M floats), one element per
// thread, 256-thread blocks, loop-free. Each thread turns its linear index into (c, ky, kx, n, oy,
// ox) with five quotient/remainder pairs by run-time sizes, as a generic library kernel does.
// bad: plain `/` by the run-time divisors (five unsigned 32-bit division sequences per element:
// I2F.U32, MUFU.RCP, F2I, IMAD.HI and corrections). fixed: the same quotients from host-precomputed
// magic multipliers and shifts (IMAD.HI + IADD + SHF per division, valid for dividends < 2^31).
#include "sample.cuh"
struct FastDiv {  // q = (umulhi(n, magic) + n) >> shift, exact for 1 <= d and n < 2^31
  unsigned d, magic, shift;
};
static FastDiv make_div(unsigned d) {
  FastDiv f; f.d = d;
  unsigned s = 0; while ((1ull << s) < d) ++s;
  f.shift = s;
  f.magic = (unsigned)(((1ull << 32) * ((1ull << s) - d)) / d + 1);
  return f;
}
struct Im2colShape {
  FastDiv cols;   // N*OH*OW: column-matrix row length
  FastDiv kk;     // KH*KW
  FastDiv kw;     // KW
  FastDiv ohw;    // OH*OW
  FastDiv ow;     // OW
  int C, H, W, pad;
};
template <bool FIXED>
__device__ __forceinline__ unsigned divq(unsigned n, const FastDiv& f) {
  if (FIXED) return (__umulhi(n, f.magic) + n) >> f.shift;
  return n / f.d;  // ROOT
}
template <bool FIXED>
__global__ void __launch_bounds__(256) im2col3x3(const float* __restrict__ x, float* __restrict__ col, Im2colShape s, unsigned total) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const unsigned r = divq<FIXED>(i, s.cols), p = i - r * s.cols.d;   // row (c, ky, kx), column (n, oy, ox)
  const unsigned c = divq<FIXED>(r, s.kk), kr = r - c * s.kk.d;
  const unsigned ky = divq<FIXED>(kr, s.kw), kx = kr - ky * s.kw.d;
  const unsigned n = divq<FIXED>(p, s.ohw), q = p - n * s.ohw.d;
  const unsigned oy = divq<FIXED>(q, s.ow), ox = q - oy * s.ow.d;
  const int iy = (int)(oy + ky) - s.pad, ix = (int)(ox + kx) - s.pad;
  float v = 0.f;
  if (iy >= 0 && iy < s.H && ix >= 0 && ix < s.W) v = x[(((size_t)n * s.C + c) * s.H + iy) * s.W + ix];
  col[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const int N = 32, C = 64, H = 56, W = 56, KH = 3, KW = 3, PAD = 1;
  const int OH = H + 2 * PAD - KH + 1, OW = W + 2 * PAD - KW + 1;
  const unsigned rows = C * KH * KW, cols = (unsigned)N * OH * OW, total = rows * cols;
  Im2colShape s;
  s.cols = make_div(cols); s.kk = make_div(KH * KW); s.kw = make_div(KW);
  s.ohw = make_div(OH * OW); s.ow = make_div(OW);
  s.C = C; s.H = H; s.W = W; s.pad = PAD;
  float* x = device_fill<float>((size_t)N * C * H * W, 51);
  float* col; CK(cudaMalloc(&col, (size_t)total * 4));
  const unsigned grid = (total + 255) / 256;
  float us = median_us([&] {
    if (fixed) im2col3x3<true><<<grid, 256>>>(x, col, s, total);
    else im2col3x3<false><<<grid, 256>>>(x, col, s, total);
  }, reps_of(argc, argv));
  report("ho2_im2col_div", fixed, us);
}
