// slow-math. bad: pow(d, 2.0) and pow(d, 3.0) on doubles call the general pow (log, exp,
// special cases) for every sample. fixed: the integer powers written as d * d and d * d * d.
#include "sample.cuh"
const int CENTERS = 132 * 256, SAMPLES = 1024, T = 128;
template <bool FIXED>
__global__ void moments(const double* __restrict__ c, const double* __restrict__ x, double* __restrict__ out) {
  __shared__ double xs[SAMPLES];
  for (int j = threadIdx.x; j < SAMPLES; j += blockDim.x) xs[j] = x[j];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double mu = c[i], m2 = 0.0, m3 = 0.0;
  for (int j = 0; j < SAMPLES; ++j) {
    double d = xs[j] - mu;
    if (FIXED) { double d2 = d * d; m2 += d2; m3 += d2 * d; }
    else { m2 += pow(d, 2.0); m3 += pow(d, 3.0); }  // ROOT: general pow for integer powers
  }
  out[2 * i] = m2 / SAMPLES;
  out[2 * i + 1] = m3 / SAMPLES;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* c = device_fill<double>(CENTERS, 51);
  double* x = device_fill<double>(SAMPLES, 52);
  double* out; CK(cudaMalloc(&out, (size_t)CENTERS * 16));
  float us = median_us([&] {
    if (fixed) moments<true><<<CENTERS / T, T>>>(c, x, out);
    else moments<false><<<CENTERS / T, T>>>(c, x, out);
  }, reps_of(argc, argv));
  report("moment_pow", fixed, us);
}
