// memory-latency. bad: each thread binary-searches 16 queries in a 256 MB sorted double array one
// query after another; every probe's address depends on the previous probe, so a warp has one load
// in flight. fixed: the 16 searches advance in lockstep (16 independent probes in flight per step).
#include "sample.cuh"
const int THREADS = 132 * 256, Q = 16, LOG_N = 25;
const unsigned N = 1u << LOG_N;
template <bool FIXED>
__global__ void lower_bounds(const double* __restrict__ keys, const double* __restrict__ q, unsigned* __restrict__ pos) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (FIXED) {
    double v[Q]; unsigned b[Q];
#pragma unroll
    for (int j = 0; j < Q; ++j) { v[j] = q[j * THREADS + t] * N; b[j] = 0; }
    for (unsigned half = N / 2; half > 0; half >>= 1)
#pragma unroll
      for (int j = 0; j < Q; ++j) b[j] = keys[b[j] + half - 1] < v[j] ? b[j] + half : b[j];
#pragma unroll
    for (int j = 0; j < Q; ++j) pos[j * THREADS + t] = b[j];
  } else {
    for (int j = 0; j < Q; ++j) {
      double v = q[j * THREADS + t] * N;
      unsigned b = 0;
      for (unsigned half = N / 2; half > 0; half >>= 1) b = keys[b + half - 1] < v ? b + half : b;  // ROOT
      pos[j * THREADS + t] = b;
    }
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<double> h(N); for (unsigned i = 0; i < N; ++i) h[i] = i;
  double* keys; CK(cudaMalloc(&keys, (size_t)N * 8)); CK(cudaMemcpy(keys, h.data(), (size_t)N * 8, cudaMemcpyHostToDevice));
  double* q = device_fill<double>((size_t)Q * THREADS, 137);
  unsigned* pos; CK(cudaMalloc(&pos, (size_t)Q * THREADS * 4));
  float us = median_us([&] {
    if (fixed) lower_bounds<true><<<THREADS / 256, 256>>>(keys, q, pos);
    else lower_bounds<false><<<THREADS / 256, 256>>>(keys, q, pos);
  }, reps_of(argc, argv));
  report("bsearch_batch", fixed, us);
}
