// Particle-filter propagation for a small 2-D robot-localisation filter: 1000 particles (x, y,
// heading, log-weight), each pushed through T = 256 steps of a unicycle motion model (per-step
// control (v, w) plus Box-Muller process noise from a counter-based hash RNG) and weighted at every
// step against range measurements to 8 beacons (log-likelihood accumulated). Controls, beacons and
// measurements live in __constant__ memory (all lanes read the same word: broadcast); the only
// global traffic is the initial and the final particle state. One thread per particle; per step
// ~150 SASS instructions (the 8 beacon terms are unrolled and independent, MUFU for log/sin/cos/sqrt).
// bad: the 1000 threads as 2 blocks of 512: only 2 of the 132 SMs get work, 16 warps each
// (4 per scheduler), so the two busy SMs are issue-bound while 130 SMs idle.
// fixed: the same 1000 threads (1024 launched) as 16 blocks of 64: 16 SMs with 2 warps each, every
// warp on its own scheduler. This is all the re-launch the work allows (1000 work items = 32 warps,
// each a serial 256-step chain); expected gain ~2-3x: bad is bound by 4 warps sharing a scheduler
// (~4 x 38 K issue cycles), fixed by one warp's own dependency chain (IPC ~0.5-0.7 with the
// unrolled beacon terms). Same per-particle code, bit-identical results.
#include "sample.cuh"
#include <cmath>
const int NP = 1000, T = 256, NBC = 8;
__constant__ float2 cCtl[T];        // (v, w) per step
__constant__ float2 cBeacon[NBC];
__constant__ float cMeas[T][NBC];   // measured ranges
__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x;
}
__device__ __forceinline__ float u01(unsigned h) { return ((h >> 8) + 0.5f) * (1.0f / 16777216.0f); }
__global__ void __launch_bounds__(512) pf_propagate(const float4* __restrict__ in, float4* __restrict__ out, int n,
                                                    float dt, float sig_v, float sig_w, float inv_sig2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 s = in[i];
  float x = s.x, y = s.y, th = s.z, lw = s.w;
  for (int t = 0; t < T; ++t) {
    const unsigned h1 = hash32((unsigned)i * 0x9e3779b9u ^ ((unsigned)t * 0x85ebca6bu + 0x2545f491u));
    const unsigned h2 = hash32(h1 + 0x6a09e667u);
    const float r = sqrtf(-2.f * __logf(u01(h1)));
    float sn, cs;
    __sincosf(6.2831853f * u01(h2), &sn, &cs);
    const float2 c = cCtl[t];
    const float v = fmaf(sig_v * r, cs, c.x), w = fmaf(sig_w * r, sn, c.y);
    th = fmaf(w, dt, th);
    float sth, cth;
    __sincosf(th, &sth, &cth);
    x = fmaf(v * dt, cth, x);
    y = fmaf(v * dt, sth, y);
    float ll = 0.f;
#pragma unroll
    for (int b = 0; b < NBC; ++b) {
      const float dx = x - cBeacon[b].x, dy = y - cBeacon[b].y;
      const float e = sqrtf(fmaf(dx, dx, dy * dy)) - cMeas[t][b];
      ll = fmaf(e, e, ll);
    }
    lw = fmaf(-0.5f * inv_sig2, ll, lw);
  }
  out[i] = make_float4(x, y, th, lw);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const float dt = 0.05f;
  unsigned seed = 301;
  auto u = [&]() { seed = seed * 1664525u + 1013904223u; return (seed >> 8) * (1.0f / 16777216.0f); };
  std::vector<float2> ctl(T), bc(NBC);
  std::vector<float> meas(T * NBC);
  for (int b = 0; b < NBC; ++b) bc[b] = make_float2(20.f * u() - 10.f, 20.f * u() - 10.f);
  float tx = 0.f, ty = 0.f, tth = 0.f;  // true trajectory that produced the measurements
  for (int t = 0; t < T; ++t) {
    ctl[t] = make_float2(1.f + 0.5f * u(), 0.4f * (u() - 0.5f));
    tth += ctl[t].y * dt; tx += ctl[t].x * dt * cosf(tth); ty += ctl[t].x * dt * sinf(tth);
    for (int b = 0; b < NBC; ++b)
      meas[t * NBC + b] = sqrtf((tx - bc[b].x) * (tx - bc[b].x) + (ty - bc[b].y) * (ty - bc[b].y)) + 0.1f * (u() - 0.5f);
  }
  CK(cudaMemcpyToSymbol(cCtl, ctl.data(), T * sizeof(float2)));
  CK(cudaMemcpyToSymbol(cBeacon, bc.data(), NBC * sizeof(float2)));
  CK(cudaMemcpyToSymbol(cMeas, meas.data(), T * NBC * sizeof(float)));
  std::vector<float4> hp(NP);
  for (auto& p : hp) p = make_float4(0.2f * (u() - 0.5f), 0.2f * (u() - 0.5f), 0.1f * (u() - 0.5f), 0.f);
  float4 *in, *out;
  CK(cudaMalloc(&in, NP * sizeof(float4))); CK(cudaMalloc(&out, NP * sizeof(float4)));
  CK(cudaMemcpy(in, hp.data(), NP * sizeof(float4), cudaMemcpyHostToDevice));
  float us = median_us([&] {
    if (fixed) pf_propagate<<<16, 64>>>(in, out, NP, dt, 0.1f, 0.05f, 1.f / (0.1f * 0.1f));
    else pf_propagate<<<2, 512>>>(in, out, NP, dt, 0.1f, 0.05f, 1.f / (0.1f * 0.1f));  // ROOT
  }, reps_of(argc, argv));
  report("ho3_particle_filter_small", fixed, us);
}
