// memory-barrier (fence in a loop, charged through the loads it delays). bad: a system-scope
// fence after each store; the next iteration's load waits until the fence has drained
// memory, so the warps wait on the load (long scoreboard), not on the fence line itself.
// fixed: one fence after the loop.
#include "sample.cuh"
const int N = 132 * 2048, ITEMS = 32;
template <bool FIXED>
__global__ void stage_copy(const float* __restrict__ src, float* dst, int* done) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < ITEMS; ++k) {
    float v = src[(size_t)k * N + i];
    acc += v;
    dst[(size_t)k * N + i] = acc;
    if (!FIXED) __threadfence_system();  // ROOT: drains memory before the next load
  }
  if (FIXED) __threadfence_system();
  done[i] = 1;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* src = device_fill<float>((size_t)N * ITEMS, 71);
  float* dst; CK(cudaMalloc(&dst, (size_t)N * ITEMS * 4));
  int* done; CK(cudaMalloc(&done, N * 4));
  float us = median_us([&] {
    if (fixed) stage_copy<true><<<N / 256, 256>>>(src, dst, done);
    else stage_copy<false><<<N / 256, 256>>>(src, dst, done);
  }, reps_of(argc, argv));
  report("sysfence_loop", fixed, us);
}
