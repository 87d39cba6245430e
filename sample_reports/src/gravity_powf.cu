// slow-math. bad: each body-source interaction computes m / powf(r2, 1.5f): a precise powf
// (log2/exp2 with range checks) plus an IEEE division. fixed: rsqrtf(r2) cubed times m.
#include "sample.cuh"
const int BODIES = 132 * 256, SOURCES = 4096, T = 128;
template <bool FIXED>
__global__ void accel(const float4* __restrict__ body, const float4* __restrict__ src, float4* __restrict__ acc) {
  __shared__ float4 tile[T];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = body[i];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int t0 = 0; t0 < SOURCES; t0 += T) {
    tile[threadIdx.x] = src[t0 + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < T; ++j) {
      float4 q = tile[j];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float r2 = dx * dx + dy * dy + dz * dz + 1e-4f, s;
      if (FIXED) { float inv = rsqrtf(r2); s = q.w * inv * inv * inv; }
      else s = q.w / powf(r2, 1.5f);  // ROOT: precise powf and division per interaction
      ax += s * dx; ay += s * dy; az += s * dz;
    }
    __syncthreads();
  }
  acc[i] = make_float4(ax, ay, az, 0.f);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float4* body = (float4*)device_fill<float>(BODIES * 4, 53);
  float4* src = (float4*)device_fill<float>(SOURCES * 4, 54);
  float4* acc; CK(cudaMalloc(&acc, BODIES * 16));
  float us = median_us([&] {
    if (fixed) accel<true><<<BODIES / T, T>>>(body, src, acc);
    else accel<false><<<BODIES / T, T>>>(body, src, acc);
  }, reps_of(argc, argv));
  report("gravity_powf", fixed, us);
}
