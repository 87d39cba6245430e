// Video-Swin 3-D window partition: x[B][T][H][W][C] (float, B=8, T=16, H=W=56, C=96) viewed as
// [B][T/2][2][H/7][7][W/7][7][C], permuted to [B][T/2][H/7][W/7][2][7][7][C] and made contiguous. A
// generic strided-copy kernel (one element per thread, 128-thread blocks) turns each output index
// into a source offset with a divmod per dimension by run-time sizes, in a loop over the 8
// dimensions that nvcc unrolls completely. bad: `/` by the run-time size. fixed: the same quotient
// from a host-precomputed magic multiplier and shift (mulhi + add + shift), as PyTorch's IntDivider.
#include "sample.cuh"
const int NDIM = 8;
struct StridedView {
  unsigned size[NDIM];    // output sizes, innermost first
  unsigned stride[NDIM];  // matching source strides (elements)
  unsigned magic[NDIM];   // IntDivider: q = (umulhi(n, magic) + n) >> shift, for n < 2^31
  unsigned shift[NDIM];
};
template <bool FIXED>
__global__ void __launch_bounds__(128) strided_copy(const float* __restrict__ src, float* __restrict__ dst, StridedView v, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned lin = i, off = 0;
#pragma unroll
  for (int d = 0; d < NDIM; ++d) {
    unsigned q;
    if (!FIXED) q = lin / v.size[d];  // ROOT
    else q = (__umulhi(lin, v.magic[d]) + lin) >> v.shift[d];
    off += (lin - q * v.size[d]) * v.stride[d];
    lin = q;
  }
  dst[i] = src[off];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const unsigned B = 8, TT = 16, H = 56, W = 56, C = 96, WT = 2, WS = 7;
  const unsigned n = B * TT * H * W * C;
  // output dims innermost first: c, wx, wy, wt, window col, window row, window time, batch
  const unsigned sizes[NDIM] = {C, WS, WS, WT, W / WS, H / WS, TT / WT, B};
  const unsigned strides[NDIM] = {1, C, W * C, H * W * C, WS * C, WS * W * C, WT * H * W * C, TT * H * W * C};
  StridedView v;
  for (int d = 0; d < NDIM; ++d) {
    v.size[d] = sizes[d]; v.stride[d] = strides[d];
    unsigned s = 0; while ((1ull << s) < sizes[d]) ++s;
    v.shift[d] = s;
    v.magic[d] = (unsigned)(((1ull << 32) * ((1ull << s) - sizes[d])) / sizes[d] + 1);
  }
  float* src = device_fill<float>(n, 13);
  float* dst; CK(cudaMalloc(&dst, (size_t)n * 4));
  const unsigned grid = (n + 127) / 128;
  float us = median_us([&] {
    if (fixed) strided_copy<true><<<grid, 128>>>(src, dst, v, n);
    else strided_copy<false><<<grid, 128>>>(src, dst, v, n);
  }, reps_of(argc, argv));
  report("ho_window_divmod", fixed, us);
}
