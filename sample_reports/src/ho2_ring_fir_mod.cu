// Circular (periodic) 15-tap FIR over 8192 independent rings of 4096 float samples each, e.g. a
// smoothing filter along the angle of a polar grid: y[b][i] = sum_k h[k] * x[b][(i + k - 7) mod n].
// One output per thread, 256-thread blocks, blockIdx.y = ring, taps passed by value, the 15-tap
// loop fully unrolled. bad: the wrap is written `(i + k - 7 + n) % n` with the ring length n a
// run-time int, so every tap costs a signed 32-bit remainder: nvcc computes the reciprocal of n once
// (I2F.RP, MUFU.RCP, F2I) and then spends ~10 integer instructions per tap (IABS, IMAD.HI, IMAD, two
// compare-and-subtract fix-ups, sign fix-up, select): 15 remainders per output, ~2.3x the SASS of
// the fixed kernel. fixed: the host checks that n is a power of two and passes mask = n - 1; the
// wrap is `(i + k - 7) & mask` (one LOP3). Same taps, same sums in the same order.
#include "sample.cuh"
const int TAPS = 15, HALF = TAPS / 2, RINGS = 8192, LEN = 4096;
struct Taps { float h[TAPS]; };
template <bool FIXED>
__global__ void __launch_bounds__(256) ring_fir(const float* __restrict__ x, float* __restrict__ y, Taps t, int n, int mask) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int rb = blockIdx.y * n;  // ring base (RINGS * n < 2^31)
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < TAPS; ++k) {
    int j;
    if (!FIXED) j = (i + k - HALF + n) % n;  // ROOT
    else j = (i + k - HALF) & mask;
    acc = fmaf(t.h[k], x[rb + j], acc);
  }
  y[rb + i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const int n = LEN;
  if (n & (n - 1)) { fprintf(stderr, "ring length must be a power of two\n"); return 1; }
  Taps t;
  float sum = 0.f;
  for (int k = 0; k < TAPS; ++k) { t.h[k] = 1.f + (float)(HALF - (k > HALF ? k - HALF : HALF - k)); sum += t.h[k]; }
  for (int k = 0; k < TAPS; ++k) t.h[k] /= sum;
  float* x = device_fill<float>((size_t)RINGS * n, 61);
  float* y; CK(cudaMalloc(&y, (size_t)RINGS * n * 4));
  const dim3 grid((n + 255) / 256, RINGS);
  float us = median_us([&] {
    if (fixed) ring_fir<true><<<grid, 256>>>(x, y, t, n, n - 1);
    else ring_fir<false><<<grid, 256>>>(x, y, t, n, n - 1);
  }, reps_of(argc, argv));
  report("ho2_ring_fir_mod", fixed, us);
}
