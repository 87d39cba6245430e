// Near miss for low-ilp: one serial FFMA chain per thread, but the launch fills every SM with
// 64 warps (16 per scheduler), so other warps always have an FFMA ready while one waits.
#include "sample.cuh"
const int N = 132 * 2048 * 2, WORK = 2048;
__global__ void busy_chain(const float* __restrict__ seed, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = seed[i], acc = x;
#pragma unroll 8
  for (int k = 0; k < WORK; ++k) acc = acc * x + 0.5f;  // dependent, but latency hidden by warps
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* seed = device_fill<float>(N, 64);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] { busy_chain<<<N / 256, 256>>>(seed, out); }, reps_of(argc, argv));
  report("nm_chain_busy", fixed, us);
}
