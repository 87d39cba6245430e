// Monte Carlo pricing of a European call under the Heston model: each path (with its antithetic
// mirror) takes 32 Euler steps driven by a counter-based hash RNG and Box-Muller with the fast
// intrinsics; each path's discounted payoff is written to out[path]. 1024-thread blocks (two resident
// per SM). The path count is 1.1 waves' worth of 8192-path tiles (wave from the occupancy API).
// bad: one block per tile (each thread runs 8 paths): 1.1 waves of equally long blocks, so the last
// 0.1 wave runs on a few SMs while the rest idle. fixed: a persistent grid of exactly one wave
// strides over the same paths one path at a time, so every thread runs 8 or 9 paths.
#include "sample.cuh"
const int STEPS = 32, TILE = 8192, BLOCK = 1024;
struct Heston { float s0, v0, r, kappa, theta, xi, rho, dt, strike; };
__device__ __forceinline__ unsigned mix32(unsigned h) {
  h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
  return h;
}
__device__ float heston_path(unsigned path, const Heston& P) {
  float s = P.s0, v = P.v0, sa = P.s0, va = P.v0;  // path and its antithetic mirror
  const float rc = sqrtf(1.f - P.rho * P.rho), sdt = sqrtf(P.dt);
  for (int k = 0; k < STEPS; ++k) {
    const unsigned h1 = mix32(path * (2 * STEPS) + 2 * k), h2 = mix32(path * (2 * STEPS) + 2 * k + 1);
    const float u1 = (h1 >> 8) * (1.f / 16777216.f) + (0.5f / 16777216.f), u2 = (h2 >> 8) * (1.f / 16777216.f);
    const float rad = sqrtf(-2.f * __logf(u1));
    float sn, cs; __sincosf(6.2831853f * u2, &sn, &cs);
    const float z1 = rad * cs, z2 = P.rho * z1 + rc * rad * sn;
    const float vp = fmaxf(v, 0.f), sv = sqrtf(vp), vq = fmaxf(va, 0.f), sq = sqrtf(vq);
    s *= __expf((P.r - 0.5f * vp) * P.dt + sv * sdt * z1);
    v += P.kappa * (P.theta - vp) * P.dt + P.xi * sv * sdt * z2;
    sa *= __expf((P.r - 0.5f * vq) * P.dt - sq * sdt * z1);
    va += P.kappa * (P.theta - vq) * P.dt - P.xi * sq * sdt * z2;
  }
  return 0.5f * __expf(-P.r * P.dt * STEPS) * (fmaxf(s - P.strike, 0.f) + fmaxf(sa - P.strike, 0.f));
}
template <bool PERSISTENT>
__global__ void __launch_bounds__(BLOCK) heston_paths(Heston P, float* __restrict__ out, unsigned npaths) {
  if (!PERSISTENT) {
    const unsigned base = blockIdx.x * TILE;
    for (unsigned p = base + threadIdx.x; p < base + TILE; p += blockDim.x) out[p] = heston_path(p, P);
  } else {
    for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < npaths; p += gridDim.x * blockDim.x) out[p] = heston_path(p, P);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int sms, per_sm;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, heston_paths<false>, BLOCK, 0));
  const int wave = sms * per_sm, tiles = wave + wave / 10;
  const unsigned npaths = (unsigned)tiles * TILE;
  const Heston P{100.f, 0.04f, 0.02f, 1.5f, 0.04f, 0.3f, -0.7f, 1.f / 256.f, 100.f};
  float* out; CK(cudaMalloc(&out, (size_t)npaths * 4));
  float us = median_us([&] {
    if (fixed) heston_paths<true><<<wave, BLOCK>>>(P, out, npaths);
    else heston_paths<false><<<tiles, BLOCK>>>(P, out, npaths);  // ROOT
  }, reps_of(argc, argv));
  report("ho_heston_tail", fixed, us);
}
