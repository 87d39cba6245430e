// Near miss for local-memory: a running 8-sample mean down each column keeps the last 8 samples in a
// per-thread array, but the loop is unrolled by 8, so every index is a compile-time constant and the
// array lives in registers (no local loads or stores). Both variants run the same kernel.
#include "sample.cuh"
const int W = 132 * 2048, STEPS = 128, WIN = 8;
__global__ void running_mean(const float* __restrict__ in, float* __restrict__ out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  float ring[WIN] = {}, sum = 0.f;
  for (int s0 = 0; s0 < STEPS; s0 += WIN) {
#pragma unroll
    for (int j = 0; j < WIN; ++j) {
      float x = in[(size_t)(s0 + j) * W + c];
      sum += x - ring[j];  // ring[j]: constant index after unrolling
      ring[j] = x;
      out[(size_t)(s0 + j) * W + c] = sum * (1.f / WIN);
    }
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)W * STEPS, 71);
  float* out; CK(cudaMalloc(&out, (size_t)W * STEPS * 4));
  float us = median_us([&] { running_mean<<<W / 256, 256>>>(in, out); }, reps_of(argc, argv));
  report("nm_reg_ring", fixed, us);
}
