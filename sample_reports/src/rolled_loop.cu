// instruction-overhead. bad: a rolled loop with one accumulator: each multiply-add drags a
// shared-memory load, index arithmetic, a compare and a branch along, so most issued
// instructions are overhead and the schedulers are busy with them. fixed: the loop unrolled
// by 8 with four accumulators and the index math folded into constant offsets.
#include "sample.cuh"
const int N = 132 * 2048, TAPS = 1024;
template <bool FIXED>
__global__ void fir_taps(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ taps) {
  __shared__ float t[TAPS];
  for (int j = threadIdx.x; j < TAPS; j += blockDim.x) t[j] = taps[j];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  if (!FIXED) {
    float acc = 0.f;
#pragma unroll 1
    for (int j = 0; j < TAPS; ++j) acc += t[(j + threadIdx.x) & (TAPS - 1)] * v;  // ROOT: one FFMA per 6 instructions
    y[i] = acc;
  } else {
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    const int o = threadIdx.x;
#pragma unroll 8
    for (int j = 0; j < TAPS; j += 4) {
      a0 += t[(j + o) & (TAPS - 1)] * v;
      a1 += t[(j + 1 + o) & (TAPS - 1)] * v;
      a2 += t[(j + 2 + o) & (TAPS - 1)] * v;
      a3 += t[(j + 3 + o) & (TAPS - 1)] * v;
    }
    y[i] = (a0 + a1) + (a2 + a3);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 5);
  float* taps = device_fill<float>(TAPS, 6);
  float* y; CK(cudaMalloc(&y, N * 4));
  float us = median_us([&] {
    if (fixed) fir_taps<true><<<N / 256, 256>>>(x, y, taps);
    else fir_taps<false><<<N / 256, 256>>>(x, y, taps);
  }, reps_of(argc, argv));
  report("rolled_loop", fixed, us);
}
