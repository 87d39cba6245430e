// Near miss for fp64-conversion: the hot loop is all float (float literals, float intrinsics);
// only the final result is widened to double once per thread for a double output. Both variants run that kernel.
#include "sample.cuh"
const int N = 132 * 2048, STEPS = 4096;
__global__ void widen_out(const float* __restrict__ in, double* __restrict__ out, double scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i], acc = 0.f;
  for (int s = 0; s < STEPS; ++s) {
    v = v * 0.999f + 0.001f;
    acc += v * v;
  }
  out[i] = (double)acc * scale;  // one conversion per thread, outside the loop
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 44);
  double* out; CK(cudaMalloc(&out, (size_t)N * 8));
  float us = median_us([&] { widen_out<<<N / 256, 256>>>(in, out, 1.0 / STEPS); }, reps_of(argc, argv));
  report("nm_f64_final", fixed, us);
}
