// Near miss for shared-bank-conflict: a double-precision 1-D convolution from a shared tile. Lanes
// read consecutive doubles (two wavefronts per request, the minimum for 64-bit data) and the taps at
// one shared address (broadcast): no bank conflicts. Both variants run the same kernel.
#include "sample.cuh"
const int T = 256, R = 4, N = 1 << 24;
__global__ void conv_tile(const double* __restrict__ in, const double* __restrict__ w, double* __restrict__ out) {
  __shared__ double tile[T + 2 * R];
  __shared__ double taps[2 * R + 1];
  size_t base = (size_t)blockIdx.x * T;
  for (int j = threadIdx.x; j < T + 2 * R; j += T) tile[j] = in[base + j];
  if (threadIdx.x <= 2 * R) taps[threadIdx.x] = w[threadIdx.x];
  __syncthreads();
  double s = 0.0;
#pragma unroll
  for (int k = 0; k <= 2 * R; ++k) s += taps[k] * tile[threadIdx.x + k];  // stride-1 doubles + broadcast
  out[base + threadIdx.x] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* in = device_fill<double>((size_t)N + 2 * R, 47);
  double* w = device_fill<double>(2 * R + 1, 53);
  double* out; CK(cudaMalloc(&out, (size_t)N * 8));
  float us = median_us([&] { conv_tile<<<N / T, T>>>(in, w, out); }, reps_of(argc, argv));
  report("nm_dconv_smem", fixed, us);
}
