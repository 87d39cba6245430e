// Near miss for slow-math: the hot loop already uses the SFU intrinsics (__sinf, __expf,
// __fdividef) and writes the square as a * a, so there is no precise math left to replace.
#include "sample.cuh"
const int N = 132 * 2048, TERMS = 128;
__global__ void fast_series(const float* __restrict__ t, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = t[i], acc = 0.f;
  for (int k = 1; k <= TERMS; ++k) {
    float a = x * k;
    acc += __fdividef(__sinf(a) * __expf(-0.01f * a), 1.f + a * a);  // intrinsics already
  }
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* t = device_fill<float>(N, 55);
  float* out; CK(cudaMalloc(&out, N * 4));
  float us = median_us([&] { fast_series<<<N / 256, 256>>>(t, out); }, reps_of(argc, argv));
  report("nm_fast_sfu", fixed, us);
}
