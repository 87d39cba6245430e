// slow-math. bad: precise sinf/expf expand into long FMA sequences with range reduction.
// fixed: the __sinf/__expf intrinsics map onto the SFU (MUFU) directly.
#include "sample.cuh"
const int N = 132 * 2048 * 2, TERMS = 64;
template <bool FIXED>
__global__ void damped_wave(const float* __restrict__ t, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = t[i], acc = 0.f;
  for (int k = 1; k <= TERMS; ++k) {
    float a = x * k;
    if (FIXED) acc += __sinf(a) * __expf(-0.01f * a);
    else acc += sinf(a) * expf(-0.01f * a);  // ROOT: precise math library calls
  }
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* t = device_fill<float>(N, 29);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) damped_wave<true><<<N / 256, 256>>>(t, out);
    else damped_wave<false><<<N / 256, 256>>>(t, out);
  }, reps_of(argc, argv));
  report("precise_math", fixed, us);
}
