// memory-barrier. bad: __threadfence() after every store makes each warp wait until the
// store is visible GPU-wide. fixed: one fence after the loop, before the flag is published.
#include "sample.cuh"
const int N = 132 * 2048, ITEMS = 64;
template <bool FIXED>
__global__ void publish(const float* __restrict__ in, float* data, int* flags) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int k = 0; k < ITEMS; ++k) {
    v = v * 1.01f + 0.5f;
    data[(size_t)k * N + i] = v;
    if (!FIXED) __threadfence();  // ROOT: fence per store
  }
  if (FIXED) __threadfence();
  flags[i] = 1;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 43);
  float* data; CK(cudaMalloc(&data, (size_t)N * ITEMS * 4));
  int* flags; CK(cudaMalloc(&flags, N * 4));
  float us = median_us([&] {
    if (fixed) publish<true><<<N / 256, 256>>>(in, data, flags);
    else publish<false><<<N / 256, 256>>>(in, data, flags);
  }, reps_of(argc, argv));
  report("fence_loop", fixed, us);
}
