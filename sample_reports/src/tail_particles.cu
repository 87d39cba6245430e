// tail-effect. bad: 160 blocks of 1024 threads (47 registers per thread: one block per SM)
// make 1.2 waves on 132 SMs: the second wave runs 28 blocks while 104 SMs idle.
// fixed: the same particles in 128-thread blocks: 1280 small blocks spread evenly in one wave.
#include "sample.cuh"
const int PARTICLES = 160 * 1024, PER_THREAD = 8, STEPS = 500;
__global__ void __launch_bounds__(1024) advance(float4* __restrict__ p, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 s[PER_THREAD];
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) s[k] = p[(size_t)k * PARTICLES + i];
  for (int t = 0; t < STEPS; ++t) {
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {  // position (x, y), velocity (z, w) in a soft central well
      float f = -rsqrtf(s[k].x * s[k].x + s[k].y * s[k].y + 0.01f);
      s[k].z += dt * (f * s[k].x - 0.1f * s[k].z);
      s[k].w += dt * (f * s[k].y - 0.1f * s[k].w);
      s[k].x += dt * s[k].z;
      s[k].y += dt * s[k].w;
    }
  }
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) p[(size_t)k * PARTICLES + i] = s[k];  // ROOT: equal long blocks, 1.2 waves
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float4* p = (float4*)device_fill<float>((size_t)PARTICLES * PER_THREAD * 4, 79);
  int threads = fixed ? 128 : 1024;  // ROOT-LAUNCH
  float us = median_us([&] { advance<<<PARTICLES / threads, threads>>>(p, 1e-3f); }, reps_of(argc, argv));
  report("tail_particles", fixed, us);
}
