// memory-latency. bad: each thread follows 4 linked lists through a 128 MB successor table one list
// after another, so it has a single dependent load in flight and waits out DRAM latency each hop.
// fixed: the thread advances its 4 lists in lockstep, keeping 4 independent loads in flight.
#include "sample.cuh"
const int THREADS = 132 * 256, LISTS = 4, HOPS = 256;
const unsigned N = 1u << 25;
template <bool FIXED>
__global__ void follow_lists(const unsigned* __restrict__ next, unsigned* __restrict__ out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  if (FIXED) {
    unsigned p[LISTS];
#pragma unroll
    for (int l = 0; l < LISTS; ++l) p[l] = ((unsigned)(t * LISTS + l) * 2654435761u) & (N - 1);
    for (int h = 0; h < HOPS; ++h)
#pragma unroll
      for (int l = 0; l < LISTS; ++l) p[l] = next[p[l]];
#pragma unroll
    for (int l = 0; l < LISTS; ++l) acc += p[l];
  } else {
    for (int l = 0; l < LISTS; ++l) {
      unsigned p = ((unsigned)(t * LISTS + l) * 2654435761u) & (N - 1);
      for (int h = 0; h < HOPS; ++h) p = next[p];  // ROOT: each hop's address is the previous load
      acc += p;
    }
  }
  out[t] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* next = device_keys(N, 131);  // values < 2^25: a random successor for every node
  unsigned* out; CK(cudaMalloc(&out, THREADS * 4));
  float us = median_us([&] {
    if (fixed) follow_lists<true><<<THREADS / 256, 256>>>(next, out);
    else follow_lists<false><<<THREADS / 256, 256>>>(next, out);
  }, reps_of(argc, argv));
  report("hop_chains", fixed, us);
}
