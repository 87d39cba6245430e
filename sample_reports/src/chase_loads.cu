// memory-latency. bad: each iteration loads an offset and then the value it selects (a
// permutation within the warp's own 128-byte segment, so both loads are coalesced); the loop
// is not unrolled, so a warp has one dependent pair of loads in flight and waits out the
// memory latency every step while DRAM idles. fixed: the loop unrolled by 8, so eight
// independent offset loads are in flight at once.
#include "sample.cuh"
const int N = 132 * 256, STEPS = 256;
template <bool FIXED>
__global__ void gather_sum(const unsigned* __restrict__ idx, const float* __restrict__ val, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  if (FIXED) {
#pragma unroll 8
    for (int s = 0; s < STEPS; ++s) acc += val[(size_t)s * N + (i ^ (idx[(size_t)s * N + i] & 31))];
  } else {
#pragma unroll 1
    for (int s = 0; s < STEPS; ++s) acc += val[(size_t)s * N + (i ^ (idx[(size_t)s * N + i] & 31))];  // ROOT: one dependent load pair in flight
  }
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* idx = device_keys((size_t)N * STEPS, 17);
  float* val = device_fill<float>((size_t)N * STEPS, 19);
  float* out; CK(cudaMalloc(&out, N * 4));
  float us = median_us([&] {
    if (fixed) gather_sum<true><<<N / 256, 256>>>(idx, val, out);
    else gather_sum<false><<<N / 256, 256>>>(idx, val, out);
  }, reps_of(argc, argv));
  report("chase_loads", fixed, us);
}
