// shared-bank-conflict. bad: each thread sorts its own 16-double segment in shared memory; the
// segments are 128 bytes apart, so element k of every lane sits in the same bank. fixed: segments padded to 17 doubles.
#include "sample.cuh"
const int T = 128, SEG = 16, BLOCKS = 132 * 8;
template <int PAD>
__global__ void sort_segments(const double* __restrict__ in, double* __restrict__ out) {
  __shared__ double s[T * (SEG + PAD)];
  size_t base = (size_t)blockIdx.x * T * SEG;
  for (int j = threadIdx.x; j < T * SEG; j += T) s[(j / SEG) * (SEG + PAD) + j % SEG] = in[base + j];
  __syncthreads();
  double* mine = s + threadIdx.x * (SEG + PAD);
#pragma unroll 1
  for (int pass = 0; pass < SEG; ++pass) {
#pragma unroll 1
    for (int k = pass & 1; k + 1 < SEG; k += 2) {
      double a = mine[k], b = mine[k + 1]; mine[k] = fmin(a, b); mine[k + 1] = fmax(a, b);  // ROOT: lanes 128 B apart
    }
  }
  __syncthreads();
  for (int j = threadIdx.x; j < T * SEG; j += T) out[base + j] = s[(j / SEG) * (SEG + PAD) + j % SEG];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  size_t n = (size_t)BLOCKS * T * SEG;
  double* in = device_fill<double>(n, 43);
  double* out; CK(cudaMalloc(&out, n * 8));
  float us = median_us([&] {
    if (fixed) sort_segments<1><<<BLOCKS, T>>>(in, out);
    else sort_segments<0><<<BLOCKS, T>>>(in, out);
  }, reps_of(argc, argv));
  report("seg_sort", fixed, us);
}
