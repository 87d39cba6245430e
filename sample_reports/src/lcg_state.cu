// loop-invariant-load. bad: an in-place generator update re-reads its multiplier and increment
// through pointers every step, because the store to state[i] might alias them; each step waits
// for those loads. fixed: both parameters are read once before the loop.
#include "sample.cuh"
const int N = 132 * 512, STEPS = 4096;
template <bool FIXED>
__global__ void advance(unsigned* state, const unsigned* mul, const unsigned* inc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (FIXED) {
    unsigned a = *mul, c = *inc, x = state[i];
    for (int s = 0; s < STEPS; ++s) { x = x * a + c; x ^= x >> 15; state[i] = x; }
  } else {
    for (int s = 0; s < STEPS; ++s) {
      unsigned x = state[i] * *mul + *inc;  // ROOT: reloaded each step (state may alias mul/inc)
      state[i] = x ^ (x >> 15);
    }
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* state; CK(cudaMalloc(&state, N * 4 + 64));
  unsigned* params = state + N + 8;
  unsigned h[2] = {1664525u, 1013904223u}; CK(cudaMemcpy(params, h, 8, cudaMemcpyHostToDevice));
  CK(cudaMemset(state, 0, N * 4));
  float us = median_us([&] {
    if (fixed) advance<true><<<N / 256, 256>>>(state, params, params + 1);
    else advance<false><<<N / 256, 256>>>(state, params, params + 1);
  }, reps_of(argc, argv));
  report("lcg_state", fixed, us);
}
