// partial-warps (block = channel count). bad: one 40-thread block per sample (one thread per
// channel): each block is a full warp plus a warp with 8 of 32 lanes. fixed: the same flat
// index space in 256-thread blocks; the channel is the flat index modulo 40.
#include "sample.cuh"
const int SAMPLES = 1 << 16, C = 40, STEPS = 256;
__global__ void channel_decay(const double* __restrict__ in, const double* __restrict__ rate, double* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, c = i % C;
  double v = in[i], k = rate[c];
  for (int s = 0; s < STEPS; ++s) v = v * k + 1e-3;
  out[i] = v;  // ROOT: 40-thread blocks leave 24 of every 64 lanes empty
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* in = device_fill<double>((size_t)SAMPLES * C, 109);
  double* rate = device_fill<double>(C, 113);
  double* out; CK(cudaMalloc(&out, (size_t)SAMPLES * C * 8));
  int threads = fixed ? 256 : C;  // ROOT-LAUNCH
  float us = median_us([&] { channel_decay<<<SAMPLES * C / threads, threads>>>(in, rate, out); }, reps_of(argc, argv));
  report("chan40", fixed, us);
}
