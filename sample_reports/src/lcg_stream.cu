// low-ilp. bad: each thread sums a linear congruential sequence; every IMAD needs the previous
// one and only one warp per scheduler runs. fixed: jump-ahead splits it into 4 interleaved streams.
#include "sample.cuh"
const int BLOCKS = 264, T = 64, LEN = 1 << 16;
template <int S>
__global__ void lcg_sum(const unsigned* __restrict__ seed, unsigned* __restrict__ out, unsigned a, unsigned c,
                        unsigned aS, unsigned cS) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y[S], s[S];
  y[0] = a * seed[i] + c;
#pragma unroll
  for (int j = 1; j < S; ++j) y[j] = a * y[j - 1] + c;
#pragma unroll
  for (int j = 0; j < S; ++j) s[j] = 0u;
#pragma unroll 4
  for (int k = 0; k < LEN / S; ++k) {
#pragma unroll
    for (int j = 0; j < S; ++j) { s[j] += y[j] >> 8; y[j] = aS * y[j] + cS; }  // ROOT: y[j] waits for the last y[j]
  }
  unsigned t = 0u;
#pragma unroll
  for (int j = 0; j < S; ++j) t += s[j];
  out[i] = t;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* seed = device_keys(BLOCKS * T, 61);
  unsigned* out; CK(cudaMalloc(&out, BLOCKS * T * 4));
  const unsigned a = 1664525u, c = 1013904223u;
  const unsigned a4 = a * a * a * a, c4 = c * (a * a * a + a * a + a + 1u);  // x[n+4] = a4 x[n] + c4
  float us = median_us([&] {
    if (fixed) lcg_sum<4><<<BLOCKS, T>>>(seed, out, a, c, a4, c4);
    else lcg_sum<1><<<BLOCKS, T>>>(seed, out, a, c, a, c);
  }, reps_of(argc, argv));
  report("lcg_stream", fixed, us);
}
