// shared-bank-conflict. bad: each warp keeps a 32x32 float matrix in shared memory and lane t reads
// row t, so at every step all 32 lanes hit the same bank (32-way). fixed: rows padded to 33 words.
#include "sample.cuh"
const int WARPS = 4, ITERS = 32, MATS = 132 * 64;
template <int PAD>
__global__ void power_steps(const float* __restrict__ mats, float* __restrict__ out) {
  __shared__ float m[WARPS][32][32 + PAD];
  __shared__ float v[WARPS][32];
  int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  size_t mat = (size_t)blockIdx.x * WARPS + w;
  for (int r = 0; r < 32; ++r) m[w][r][lane] = mats[mat * 1024 + r * 32 + lane];
  v[w][lane] = 1.f;
  __syncwarp();
  for (int it = 0; it < ITERS; ++it) {
    float y = 0.f;
    for (int k = 0; k < 32; ++k) y += m[w][lane][k] * v[w][k];  // ROOT: row per lane, one bank per k
    __syncwarp();
    v[w][lane] = y * 0.0625f;
    __syncwarp();
  }
  out[mat * 32 + lane] = v[w][lane];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* mats = device_fill<float>((size_t)MATS * 1024, 31);
  float* out; CK(cudaMalloc(&out, (size_t)MATS * 32 * 4));
  float us = median_us([&] {
    if (fixed) power_steps<1><<<MATS / WARPS, WARPS * 32>>>(mats, out);
    else power_steps<0><<<MATS / WARPS, WARPS * 32>>>(mats, out);
  }, reps_of(argc, argv));
  report("power_tile", fixed, us);
}
