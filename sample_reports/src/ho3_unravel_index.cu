// PyTorch-style elementwise op on a non-contiguous fp16 tensor: out = relu(a * scale + shift), where
// a is x.transpose(1, 2) of a contiguous [16, 20, 24, 36, 56] half tensor (a view of logical shape
// [16, 24, 20, 36, 56], innermost dim still unit-stride) and out is contiguous. One element per
// thread, 256-thread blocks, loop-free; like TensorIterator's OffsetCalculator each thread unravels
// its linear output index over the 5 dims (innermost first, loop fully unrolled) and dots the
// coordinates with a's strides.
// bad: the unravel is written with `/` and `%` by the run-time dim sizes: five unsigned 32-bit
// divisions per element, each a full sequence (I2F.U32.RP, MUFU.RCP, F2I.FTZ.U32.TRUNC, IMAD.HI,
// IMAD, two compare-and-correct steps, divisor-zero select ...) because every divisor is different:
// 5 MUFU + 10 conversions + ~80 integer instructions per 4 bytes moved.
// fixed: the host precomputes PyTorch's IntDivider magic numbers per dim (shift = ceil(log2 d),
// m = floor(2^32 (2^shift - d) / d) + 1); q = (umulhi(n, m) + n) >> shift (IMAD.HI + IADD + SHF),
// exact for n < 2^31, checked on the host.
// Expected gain ~2x: the bad kernel is issue/XU-bound on the division sequences (~60 us of
// instructions on an H100) while 31 MB in + 31 MB out take ~20 us of DRAM; the fixed kernel should
// be memory-bound. Bit-identical output.
#include "sample.cuh"
#include <cuda_fp16.h>
const int NDIM = 5;
struct Layout { unsigned size[NDIM]; unsigned stride[NDIM]; };  // logical sizes / a's strides, dim 0 outermost
struct Magic { unsigned mul[NDIM]; unsigned shr[NDIM]; };
__device__ __forceinline__ unsigned offset_divmod(unsigned linear, const Layout& L) {
  unsigned off = 0;
#pragma unroll
  for (int d = NDIM - 1; d >= 0; --d) {
    off += (linear % L.size[d]) * L.stride[d]; linear /= L.size[d];  // ROOT
  }
  return off;
}
__device__ __forceinline__ unsigned offset_magic(unsigned linear, const Layout& L, const Magic& M) {
  unsigned off = 0;
#pragma unroll
  for (int d = NDIM - 1; d >= 0; --d) {
    const unsigned q = (__umulhi(linear, M.mul[d]) + linear) >> M.shr[d];
    off += (linear - q * L.size[d]) * L.stride[d];
    linear = q;
  }
  return off;
}
template <bool MAGIC>
__global__ void __launch_bounds__(256) strided_relu(const __half* __restrict__ a, __half* __restrict__ out, Layout L, Magic M,
                                                    float scale, float shift, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned off = MAGIC ? offset_magic(i, L, M) : offset_divmod(i, L);
  const float v = __half2float(a[off]) * scale + shift;
  out[i] = __float2half(fmaxf(v, 0.f));
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const unsigned phys[NDIM] = {16, 20, 24, 36, 56};  // contiguous storage of x
  unsigned pstride[NDIM];
  pstride[NDIM - 1] = 1;
  for (int d = NDIM - 2; d >= 0; --d) pstride[d] = pstride[d + 1] * phys[d + 1];
  Layout L;  // a = x.transpose(1, 2)
  const int perm[NDIM] = {0, 2, 1, 3, 4};
  unsigned n = 1;
  for (int d = 0; d < NDIM; ++d) { L.size[d] = phys[perm[d]]; L.stride[d] = pstride[perm[d]]; n *= L.size[d]; }
  Magic M;
  for (int d = 0; d < NDIM; ++d) {
    const unsigned dv = L.size[d];
    unsigned s = 0;
    while (s < 32 && (1u << s) < dv) ++s;
    M.shr[d] = s;
    M.mul[d] = (unsigned)(((1ull << 32) * ((1ull << s) - dv)) / dv + 1);
    for (unsigned x = 0; x < n; x += 997) {  // host check of the magic quotient
      const unsigned q = (unsigned)((((unsigned long long)x * M.mul[d]) >> 32) + x) >> s;
      if (q != x / dv) { fprintf(stderr, "magic divisor check failed\n"); return 1; }
    }
  }
  std::vector<__half> h(n);
  unsigned seed = 5;
  for (auto& v : h) { seed = seed * 1664525u + 1013904223u; v = __float2half((float)(seed >> 8) * (1.0f / 16777216.0f) - 0.5f); }
  __half *a, *out;
  CK(cudaMalloc(&a, n * sizeof(__half))); CK(cudaMalloc(&out, n * sizeof(__half)));
  CK(cudaMemcpy(a, h.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  const unsigned blocks = (n + 255) / 256;
  float us = median_us([&] {
    if (fixed) strided_relu<true><<<blocks, 256>>>(a, out, L, M, 1.7f, 0.1f, n);
    else strided_relu<false><<<blocks, 256>>>(a, out, L, M, 1.7f, 0.1f, n);
  }, reps_of(argc, argv));
  report("ho3_unravel_index", fixed, us);
}
