// local-memory. bad: a per-thread histogram indexed by data lives in local memory (LDL/STL
// for every element). fixed: compare-and-add over a fully unrolled loop keeps it in registers.
#include "sample.cuh"
const int THREADS = 256, BLOCKS = 132 * 8, PER_THREAD = 64, BINS = 16;
template <bool FIXED>
__global__ void nibble_hist(const unsigned* __restrict__ in, unsigned* __restrict__ out) {
  unsigned h[BINS];
#pragma unroll
  for (int b = 0; b < BINS; ++b) h[b] = 0;
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  for (int i = 0; i < PER_THREAD; ++i) {
    unsigned v = in[tid + i * stride];
    if (FIXED) {
#pragma unroll
      for (int b = 0; b < BINS; ++b) h[b] += ((v & 15u) == (unsigned)b);
    } else {
      h[v & 15u] += 1;  // ROOT: data-dependent index forces h[] into local memory
    }
  }
#pragma unroll
  for (int b = 0; b < BINS; ++b) out[b * stride + tid] = h[b];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  size_t n = (size_t)THREADS * BLOCKS * PER_THREAD;
  unsigned* in = device_keys(n, 19);
  unsigned* out; CK(cudaMalloc(&out, (size_t)THREADS * BLOCKS * BINS * 4));
  float us = median_us([&] {
    if (fixed) nibble_hist<true><<<BLOCKS, THREADS>>>(in, out);
    else nibble_hist<false><<<BLOCKS, THREADS>>>(in, out);
  }, reps_of(argc, argv));
  report("local_hist", fixed, us);
}
