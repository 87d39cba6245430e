// Per-group Gram (second-moment) matrices, G_g = sum_s v_s v_s^T for 2^17 groups of 32 samples of
// 14 features each (e.g. local covariance for a per-patch PCA or the normal equations of many small
// least-squares fits), features stored sample-major / feature-major / group-contiguous so each
// load is coalesced; one thread per group keeps the 105 upper-triangle sums in registers (fully
// unrolled i <= j loops), 128-thread blocks; output 105 floats per group, coalesced.
// bad: __launch_bounds__(128, 1): ptxas (CUDA 13, sm_90) is free to use 254 registers per thread
// (105 accumulators and 14 features live through the sample loop, plus a chain of 64-bit addresses
// for the 105 result stores), so only 2 blocks of 128 threads (8 warps) fit on an SM; each warp
// waits a full memory latency per sample (14 loads) with few other warps to switch to.
// fixed: the same kernel with __launch_bounds__(128, 4): at most 128 registers, which ptxas meets
// without spilling (0 bytes spill stores/loads with -Xptxas -v), 4 blocks (16 warps) per SM.
// Same sums in the same order: bit-identical results.
#include "sample.cuh"
const int D = 14, NP = D * (D + 1) / 2, GROUPS = 1 << 17, SAMPLES = 32, BLOCK = 128;
template <int MINB>
__global__ void __launch_bounds__(BLOCK, MINB) gram_accumulate(const float* __restrict__ x, float* __restrict__ gram, int groups, int samples) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  float acc[NP];
#pragma unroll
  for (int p = 0; p < NP; ++p) acc[p] = 0.f;
  for (int s = 0; s < samples; ++s) {
    float v[D];
#pragma unroll
    for (int d = 0; d < D; ++d) v[d] = x[((size_t)s * D + d) * groups + g];
#pragma unroll
    for (int i = 0; i < D; ++i)
#pragma unroll
      for (int j = i; j < D; ++j) {
        const int p = i * D - i * (i - 1) / 2 + (j - i);
        acc[p] = fmaf(v[i], v[j], acc[p]);  // ROOT
      }
  }
#pragma unroll
  for (int p = 0; p < NP; ++p) gram[(size_t)p * groups + g] = acc[p];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)SAMPLES * D * GROUPS, 151);
  float* gram; CK(cudaMalloc(&gram, (size_t)NP * GROUPS * 4));
  float us = median_us([&] {
    if (fixed) gram_accumulate<4><<<GROUPS / BLOCK, BLOCK>>>(x, gram, GROUPS, SAMPLES);
    else gram_accumulate<1><<<GROUPS / BLOCK, BLOCK>>>(x, gram, GROUPS, SAMPLES);
  }, reps_of(argc, argv));
  report("ho2_gram_regs", fixed, us);
}
