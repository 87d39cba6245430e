// 64-tap FIR (valid correlation) y[i] = sum_k h[k] * x[i + k] over 2^25 float outputs, taps and
// input tile staged in shared memory, 256-thread blocks, the tap loop fully unrolled.
// bad: one output per thread (256 outputs per block): each of the 64 FFMAs reads its x[t + k] from
// shared memory (LDS) and the taps come 4 at a time (LDS.128 broadcast), ~1.25 shared loads per
// FMA, so the shared-memory pipe, not the FMA pipe, bounds the kernel; each input sample is loaded
// from shared memory 64 times.
// fixed: eight consecutive outputs per thread (2048 per block) with a sliding window of 8 inputs in
// registers: per tap one new x from shared memory plus the broadcast tap feed 8 FFMAs (the window
// shift is register renaming in the unrolled loop); the tile index is padded one word per 8
// (p + p/8) so the stride-8 reads are conflict-free, and the outputs go back through shared memory
// for coalesced stores. Same taps, same fmaf order per output: bit-identical results.
#include "sample.cuh"
const int TAPS = 64, NOUT = 1 << 25, OPT = 8, BLOCK = 256;
__global__ void __launch_bounds__(BLOCK) fir64(const float* __restrict__ x, const float* __restrict__ h, float* __restrict__ y) {
  __shared__ float xs[BLOCK + TAPS - 1];
  __shared__ float hs[TAPS];
  const int t = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * BLOCK;
  for (int p = t; p < BLOCK + TAPS - 1; p += BLOCK) xs[p] = x[base + p];
  if (t < TAPS) hs[t] = h[t];
  __syncthreads();
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < TAPS; ++k) acc = fmaf(hs[k], xs[t + k], acc);  // ROOT
  y[base + t] = acc;
}
#define XP(p) ((p) + ((p) >> 3))
const int FB = BLOCK * OPT, FTILE = FB + TAPS - 1;
__global__ void __launch_bounds__(BLOCK) fir64_reg8(const float* __restrict__ x, const float* __restrict__ h, float* __restrict__ y) {
  __shared__ float xs[XP(FTILE) + 1];
  __shared__ float hs[TAPS];
  const int t = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * FB;
  for (int p = t; p < FTILE; p += BLOCK) xs[XP(p)] = x[base + p];
  if (t < TAPS) hs[t] = h[t];
  __syncthreads();
  const int o = t * OPT;
  float win[OPT], acc[OPT];
#pragma unroll
  for (int j = 0; j < OPT; ++j) { win[j] = xs[XP(o + j)]; acc[j] = 0.f; }
#pragma unroll
  for (int k = 0; k < TAPS; ++k) {
    const float w = hs[k];
#pragma unroll
    for (int j = 0; j < OPT; ++j) acc[j] = fmaf(w, win[j], acc[j]);  // output o + j uses x[o + j + k]
    if (k + 1 < TAPS) {
#pragma unroll
      for (int j = 0; j < OPT - 1; ++j) win[j] = win[j + 1];
      win[OPT - 1] = xs[XP(o + OPT + k)];
    }
  }
  __syncthreads();  // the tile is reused for the outputs
#pragma unroll
  for (int j = 0; j < OPT; ++j) xs[XP(o + j)] = acc[j];
  __syncthreads();
  for (int p = t; p < FB; p += BLOCK) y[base + p] = xs[XP(p)];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)NOUT + TAPS, 111);
  float* h = device_fill<float>(TAPS, 112);
  float* y; CK(cudaMalloc(&y, (size_t)NOUT * 4));
  float us = median_us([&] {
    if (fixed) fir64_reg8<<<NOUT / FB, BLOCK>>>(x, h, y);
    else fir64<<<NOUT / BLOCK, BLOCK>>>(x, h, y);
  }, reps_of(argc, argv));
  report("ho2_fir64_window", fixed, us);
}
