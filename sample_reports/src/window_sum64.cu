// instruction-overhead. bad: a rolled moving-sum loop with 64-bit indices and a bounds check per
// element: one FADD per ~10 issued instructions. fixed: 32-bit index, check hoisted, unrolled by 8, 4 accumulators.
#include "sample.cuh"
const long long N = 1 << 22;
const int K = 128;
template <bool FIXED>
__global__ void box_sum(const float* __restrict__ x, float* __restrict__ y, long long n, int k) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  if (!FIXED || i + k > n) {
#pragma unroll 1
    for (long long j = 0; j < k; ++j) if (i + j < n) acc += x[i + j];  // ROOT: 64-bit index math and checks per FADD
  } else {
    const float* p = x + i;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll 2
    for (int j = 0; j < k; j += 4) { a0 += p[j]; a1 += p[j + 1]; a2 += p[j + 2]; a3 += p[j + 3]; }
    acc = (a0 + a1) + (a2 + a3);
  }
  y[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 71);
  float* y; CK(cudaMalloc(&y, N * 4));
  float us = median_us([&] {
    if (fixed) box_sum<true><<<N / 512, 512>>>(x, y, N, K);
    else box_sum<false><<<N / 512, 512>>>(x, y, N, K);
  }, reps_of(argc, argv));
  report("window_sum64", fixed, us);
}
