// fp64-conversion. bad: double literals promote the float recurrence to double, so every
// step is F2F.F64.F32 + DFMA + F2F.F32.F64. fixed: float literals keep it in FFMA.
#include "sample.cuh"
const int N = 132 * 2048 * 4, STEPS = 256;
template <bool FIXED>
__global__ void relax(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int s = 0; s < STEPS; ++s) {
    if (FIXED) v = v * 0.999f + 0.001f;
    else v = v * 0.999 + 0.001;  // ROOT: 0.999 and 0.001 are doubles
  }
  out[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 7);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) relax<true><<<N / 256, 256>>>(in, out);
    else relax<false><<<N / 256, 256>>>(in, out);
  }, reps_of(argc, argv));
  report("double_literal", fixed, us);
}
