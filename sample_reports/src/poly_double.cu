// low-ilp. bad: a degree-1023 double polynomial by Horner's rule is one serial DFMA chain per
// thread with 4 warps per SM. fixed: Estrin-style split into 4 chains in x^4, combined at the end.
#include "sample.cuh"
const int BLOCKS = 132, T = 128, DEG = 1024, PTS = 32;
__constant__ double coef[DEG];
template <bool FIXED>
__global__ void series(const double* __restrict__ x0, double* __restrict__ out, double dx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double x = x0[i] - 0.5, sum = 0.0;
#pragma unroll 1
  for (int p = 0; p < PTS; ++p, x += dx) {
    if (!FIXED) {
      double acc = coef[DEG - 1];
#pragma unroll 8
      for (int k = DEG - 2; k >= 0; --k) acc = acc * x + coef[k];  // ROOT: each DFMA needs the last
      sum += acc;
    } else {
      double x2 = x * x, x4 = x2 * x2, a0 = coef[DEG - 4], a1 = coef[DEG - 3], a2 = coef[DEG - 2], a3 = coef[DEG - 1];
#pragma unroll 8
      for (int k = DEG - 8; k >= 0; k -= 4) {
        a0 = a0 * x4 + coef[k]; a1 = a1 * x4 + coef[k + 1]; a2 = a2 * x4 + coef[k + 2]; a3 = a3 * x4 + coef[k + 3];
      }
      sum += (a0 + a1 * x) + x2 * (a2 + a3 * x);
    }
  }
  out[i] = sum;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* x0 = device_fill<double>(BLOCKS * T, 62);
  double* c = device_fill<double>(DEG, 63);
  CK(cudaMemcpyToSymbol(coef, c, DEG * 8, 0, cudaMemcpyDeviceToDevice));
  double* out; CK(cudaMalloc(&out, BLOCKS * T * 8));
  float us = median_us([&] {
    if (fixed) series<true><<<BLOCKS, T>>>(x0, out, 1e-3);
    else series<false><<<BLOCKS, T>>>(x0, out, 1e-3);
  }, reps_of(argc, argv));
  report("poly_double", fixed, us);
}
