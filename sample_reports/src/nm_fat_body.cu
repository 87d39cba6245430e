// Near miss for instruction-overhead: the loop is rolled, but each trip does 16 independent
// FFMAs on registers, so the counter, compare and branch are 3 of 19 issued instructions.
#include "sample.cuh"
const int N = 132 * 2048, TRIPS = 512;
__global__ void fat_body(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[i], a[16];
#pragma unroll
  for (int c = 0; c < 16; ++c) a[c] = x + c;
#pragma unroll 1
  for (int t = 0; t < TRIPS; ++t)
#pragma unroll
    for (int c = 0; c < 16; ++c) a[c] = a[c] * x + 0.25f;  // 16 FFMAs per trip
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < 16; ++c) s += a[c];
  out[i] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 74);
  float* out; CK(cudaMalloc(&out, N * 4));
  float us = median_us([&] { fat_body<<<N / 256, 256>>>(in, out); }, reps_of(argc, argv));
  report("nm_fat_body", fixed, us);
}
