// atomic-contention. bad: a dot product where every thread adds its product straight into one
// global float, so all updates serialize on one L2 address. fixed: each thread sums a grid-stride
// slice, the warp combines with shuffles, and one lane per warp adds the result.
#include "sample.cuh"
const int N = 1 << 20, BLOCKS = 132 * 4, T = 256;
template <bool FIXED>
__global__ void dot(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ result) {
  float part = 0.f;
  for (int i = blockIdx.x * T + threadIdx.x; i < N; i += BLOCKS * T) {
    if (FIXED) part += x[i] * y[i];
    else atomicAdd(result, x[i] * y[i]);  // ROOT: one hot address for the whole grid
  }
  if (FIXED) {
    for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(0xffffffffu, part, o);
    if (threadIdx.x % 32 == 0) atomicAdd(result, part);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 73);
  float* y = device_fill<float>(N, 79);
  float* r; CK(cudaMalloc(&r, 4)); CK(cudaMemset(r, 0, 4));
  float us = median_us([&] {
    if (fixed) dot<true><<<BLOCKS, T>>>(x, y, r);
    else dot<false><<<BLOCKS, T>>>(x, y, r);
  }, reps_of(argc, argv));
  report("dot_atomic", fixed, us);
}
