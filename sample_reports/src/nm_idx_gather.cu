// Near miss for memory-latency: an indexed gather (load an index, then the value it selects) looks
// like a dependent chain, but each thread does it once and the grid fills every SM, so thousands of
// independent pairs are in flight and DRAM bandwidth, not latency, sets the time. Both variants run
// the same kernel.
#include "sample.cuh"
const int N = 1 << 25;
__global__ void gather(const unsigned* __restrict__ sel, const float* __restrict__ val, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = val[i ^ (sel[i] & 31u)];  // dependent pair, but one per thread across 32M threads
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* sel = device_keys(N, 139);
  float* val = device_fill<float>(N, 149);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] { gather<<<N / 256, 256>>>(sel, val, out); }, reps_of(argc, argv));
  report("nm_idx_gather", fixed, us);
}
