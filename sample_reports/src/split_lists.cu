// atomic-contention. bad: a two-way split (one partition pass of a radix sort) where each key claims
// its output slot with atomicAdd on one of two global counters. fixed: a ballot counts the warp's
// keys per side, one lane claims both runs, and lanes take their offset from a popc of lower lanes.
#include "sample.cuh"
const int N = 1 << 20;
template <bool FIXED>
__global__ void split2(const unsigned* __restrict__ keys, unsigned* __restrict__ out, unsigned* count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  unsigned k = keys[i], side = (k >> 7) & 1u;
  if (FIXED) {
    unsigned ones = __ballot_sync(0xffffffffu, side), below = (1u << lane) - 1u, b0 = 0, b1 = 0;
    if (lane == 0) { b1 = atomicAdd(&count[1], (unsigned)__popc(ones)); b0 = atomicAdd(&count[0], 32u - __popc(ones)); }
    b0 = __shfl_sync(0xffffffffu, b0, 0); b1 = __shfl_sync(0xffffffffu, b1, 0);
    unsigned slot = side ? b1 + __popc(ones & below) : b0 + __popc(~ones & below);
    out[side * N + slot] = k;
  } else {
    out[side * N + atomicAdd(&count[side], 1u)] = k;  // ROOT: two counters for the whole grid
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* keys = device_keys(N, 83);
  unsigned* out; CK(cudaMalloc(&out, 2 * (size_t)N * 4));
  unsigned* count; CK(cudaMalloc(&count, 8));
  float us = median_us([&] {
    CK(cudaMemsetAsync(count, 0, 8));
    if (fixed) split2<true><<<N / 256, 256>>>(keys, out, count);
    else split2<false><<<N / 256, 256>>>(keys, out, count);
  }, reps_of(argc, argv));
  report("split_lists", fixed, us);
}
