// Direct-sum gravitational accelerations for a small system of 8192 bodies (float4 x, y, z, mass;
// softening 1e-3), all pairs: 67 M interactions. The positions (128 KB) stay in L1/L2 and every
// warp reads the same body j at the same time (broadcast loads).
// bad: the textbook one-thread-per-body kernel: 8192 threads = 32 blocks of 256 threads for 132
// SMs, so 100 SMs get no block and each busy SM runs 8 warps (2 per scheduler), each thread a
// serial 8192-step loop; the GPU is mostly idle.
// fixed: one warp per body (lane l sums bodies l, l + 32, ...; shuffle reduction at the end):
// 8192 warps = 1024 blocks of 256 threads, enough to fill every SM. The work that exists is the
// same; only its split differs (the sum order, hence the last bits, differs).
#include "sample.cuh"
const int NB = 8192;
__global__ void __launch_bounds__(256) nbody_accel(const float4* __restrict__ body, float4* __restrict__ acc, int n, float soft2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 bi = body[i];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = 0; j < n; ++j) {
    const float4 bj = body[j];
    const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
    const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, soft2)));
    const float inv = rsqrtf(r2);
    const float s = bj.w * inv * inv * inv;
    ax = fmaf(dx, s, ax); ay = fmaf(dy, s, ay); az = fmaf(dz, s, az);
  }
  acc[i] = make_float4(ax, ay, az, 0.f);
}
__global__ void __launch_bounds__(256) nbody_accel_warp(const float4* __restrict__ body, float4* __restrict__ acc, int n, float soft2) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (i >= n) return;
  const float4 bi = body[i];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int j = lane; j < n; j += 32) {
    const float4 bj = body[j];
    const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
    const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, soft2)));
    const float inv = rsqrtf(r2);
    const float s = bj.w * inv * inv * inv;
    ax = fmaf(dx, s, ax); ay = fmaf(dy, s, ay); az = fmaf(dz, s, az);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    ax += __shfl_xor_sync(0xffffffffu, ax, o);
    ay += __shfl_xor_sync(0xffffffffu, ay, o);
    az += __shfl_xor_sync(0xffffffffu, az, o);
  }
  if (lane == 0) acc[i] = make_float4(ax, ay, az, 0.f);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float4> h(NB);
  unsigned seed = 141;
  auto u = [&]() { seed = seed * 1664525u + 1013904223u; return (seed >> 8) * (1.0f / 16777216.0f); };
  for (auto& b : h) { b.x = u() - 0.5f; b.y = u() - 0.5f; b.z = u() - 0.5f; b.w = (0.5f + u()) / NB; }
  float4* body; CK(cudaMalloc(&body, NB * sizeof(float4)));
  CK(cudaMemcpy(body, h.data(), NB * sizeof(float4), cudaMemcpyHostToDevice));
  float4* acc; CK(cudaMalloc(&acc, NB * sizeof(float4)));
  float us = median_us([&] {
    if (fixed) nbody_accel_warp<<<NB * 32 / 256, 256>>>(body, acc, NB, 1e-6f);
    else nbody_accel<<<(NB + 255) / 256, 256>>>(body, acc, NB, 1e-6f);  // ROOT
  }, reps_of(argc, argv));
  report("ho2_nbody_small", fixed, us);
}
