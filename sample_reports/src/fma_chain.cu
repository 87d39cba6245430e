// low-ilp. bad: one dependent FFMA chain per thread with one warp per scheduler, so each FFMA
// waits for the previous one. fixed: four independent chains doing the same total work.
#include "sample.cuh"
const int BLOCKS = 132, THREADS = 128, WORK = 1 << 16;
template <int CHAINS>
__global__ void horner(const float* __restrict__ seed, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = seed[i], acc[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) acc[c] = x + c;
#pragma unroll 8
  for (int k = 0; k < WORK / CHAINS; ++k) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * x + 0.5f;  // ROOT: each FFMA needs the last
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += acc[c];
  out[i] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* seed = device_fill<float>(BLOCKS * THREADS, 23);
  float* out; CK(cudaMalloc(&out, BLOCKS * THREADS * 4));
  float us = median_us([&] {
    if (fixed) horner<4><<<BLOCKS, THREADS>>>(seed, out);
    else horner<1><<<BLOCKS, THREADS>>>(seed, out);
  }, reps_of(argc, argv));
  report("fma_chain", fixed, us);
}
