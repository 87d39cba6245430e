// 128-tap FIR low-pass over a batch of 64 sensor channels x 256K samples (fp32, valid-mode:
// y[c][n] = sum_t h[t] * x[c][n + t]), taps in __constant__ memory: 2.1 G FMAs, 64 MB in, 64 MB out.
// bad: the usual shared-window kernel: a 256-thread block stages its 256 + 127 input samples in
// shared memory and each thread computes ONE output: 128 x (LDS xs[tid + t]; FFMA with the tap
// as a constant-bank operand). Each loaded sample feeds one FFMA of its thread, so the kernel
// issues one LDS (one 128-byte wavefront) per FFMA: the shared-memory pipe (1 wavefront/cycle/SM)
// runs at its limit while the FMA pipe (4 warp-FFMA/cycle/SM) is ~25% busy.
// fixed: register tiling along time: each thread computes 4 consecutive outputs from a sliding
// register window; per 4 taps it loads one aligned float4 (LDS.128, 4 wavefronts per warp, no
// conflicts) and issues 16 FFMAs, so each loaded sample feeds 4 FFMAs (0.25 wavefront per FFMA,
// FMA and shared pipes balanced).
// SASS (sm_90, -O3): both tap loops fully unrolled (no loop around the FMAs); the taps come from
// the constant bank into uniform registers (ULDC.64) and feed FFMA R, R, UR, R. bad: 128 LDS.32 +
// 128 FFMA (the unaligned tid + t addresses keep the loads scalar), one STG; fixed: 33 LDS.128 +
// 512 FFMA, one STG.E.128. Both: 32 registers, one BAR.SYNC after the staging loop.
// Expected gain ~2.5-3.5x (LDS-bound at ~1 FFMA per cycle per SM -> ~3-4 per cycle; the
// 128 MB of DRAM traffic, ~40 us, becomes the next floor). Each output is the same fmaf chain over
// t = 0..127 in the same order: bit-identical output.
#include "sample.cuh"
const int NCH = 64, NS = 256 * 1024, T = 128, NX = NS + T;  // NX: per-channel input length (padded)
__constant__ float c_taps[T];
__global__ void __launch_bounds__(256) fir_window(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float xs[256 + T];
  const int c = blockIdx.y, n0 = blockIdx.x * 256, tid = threadIdx.x;
  const float* xc = x + (size_t)c * NX + n0;
  for (int i = tid; i < 256 + T; i += 256) xs[i] = xc[i];
  __syncthreads();
  float acc = 0.f;
#pragma unroll
  for (int t = 0; t < T; ++t) acc = fmaf(c_taps[t], xs[tid + t], acc);  // ROOT
  y[(size_t)c * NS + n0 + tid] = acc;
}
__global__ void __launch_bounds__(256) fir_window_reg4(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ __align__(16) float xs[1024 + T];
  const int c = blockIdx.y, n0 = blockIdx.x * 1024, tid = threadIdx.x;
  const float* xc = x + (size_t)c * NX + n0;
  for (int i = tid; i < 1024 + T; i += 256) xs[i] = xc[i];
  __syncthreads();
  const float4* xs4 = reinterpret_cast<const float4*>(xs);
  float w[8], acc[4] = {0.f, 0.f, 0.f, 0.f};
  { const float4 a = xs4[tid]; w[0] = a.x; w[1] = a.y; w[2] = a.z; w[3] = a.w; }
#pragma unroll
  for (int t = 0; t < T; t += 4) {
    const float4 b = xs4[tid + t / 4 + 1];
    w[4] = b.x; w[5] = b.y; w[6] = b.z; w[7] = b.w;
#pragma unroll
    for (int d = 0; d < 4; ++d)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[r] = fmaf(c_taps[t + d], w[d + r], acc[r]);
#pragma unroll
    for (int r = 0; r < 4; ++r) w[r] = w[r + 4];
  }
  reinterpret_cast<float4*>(y)[((size_t)c * NS + n0) / 4 + tid] = make_float4(acc[0], acc[1], acc[2], acc[3]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)NCH * NX, 71);
  std::vector<float> h(T);
  for (int t = 0; t < T; ++t) { const float u = (t - (T - 1) / 2.f) / T; h[t] = (0.54f + 0.46f * cosf(6.2831853f * u)) / T; }
  CK(cudaMemcpyToSymbol(c_taps, h.data(), T * 4));
  const size_t n_out = (size_t)NCH * NS;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) fir_window_reg4<<<dim3(NS / 1024, NCH), 256>>>(x, out);
    else fir_window<<<dim3(NS / 256, NCH), 256>>>(x, out);
  }, reps_of(argc, argv));
  report("ho4_fir128_window", fixed, us);
}
