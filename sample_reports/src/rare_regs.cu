// occupancy-limited (registers). bad: a rarely taken branch squares a 7x7 double matrix held in
// registers, so ptxas gives the whole kernel ~150 registers: one 256-thread block per SM, too few
// warps to hide the latency of the hot gather loop. fixed: __launch_bounds__(256, 8) caps the
// registers (the rare branch spills instead) and eight blocks fit per SM.
#include "sample.cuh"
const int N = 1 << 24, TABLE = 1 << 22, THREADS = 256;
template <int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
lookup_refine(const unsigned* __restrict__ idx, const double* __restrict__ table, double* __restrict__ out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
    double v = table[idx[i] % TABLE];  // ROOT: latency-bound gather with 8 warps per SM
    if (v > 0.99999) {  // rare: refine through repeated squaring of a 7x7 matrix
      double a[7][7], b[7][7];
#pragma unroll
      for (int r = 0; r < 7; ++r)
#pragma unroll
        for (int c = 0; c < 7; ++c) a[r][c] = r == c ? 1.0 + v * 1e-3 : v * 1e-4 * (r - c);
#pragma unroll
      for (int s = 0; s < 4; ++s) {
#pragma unroll
        for (int r = 0; r < 7; ++r)
#pragma unroll
          for (int c = 0; c < 7; ++c) { double t = 0.0; for (int k = 0; k < 7; ++k) t += a[r][k] * a[k][c]; b[r][c] = t; }
#pragma unroll
        for (int r = 0; r < 7; ++r)
#pragma unroll
          for (int c = 0; c < 7; ++c) a[r][c] = b[r][c] * (1.0 / 7.0);
      }
      v = a[0][0] + a[2][3] + a[6][6];
    }
    out[i] = v;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* idx = device_keys(N, 41);
  double* table = device_fill<double>(TABLE, 43);
  double* out; CK(cudaMalloc(&out, (size_t)N * 8));
  float us = median_us([&] {
    if (fixed) lookup_refine<8><<<132 * 8, THREADS>>>(idx, table, out);
    else lookup_refine<1><<<132 * 8, THREADS>>>(idx, table, out);
  }, reps_of(argc, argv));
  report("rare_regs", fixed, us);
}
