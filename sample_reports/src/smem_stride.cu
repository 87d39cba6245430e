// shared-bank-conflict. bad: each thread owns a 32-word slice of shared memory, so word k of
// every slice sits in the same bank (32-way conflicts). fixed: slices padded to 33 words.
#include "sample.cuh"
const int THREADS = 128, SLOTS = 32, ITERS = 32;
template <int PAD>
__global__ void smooth_slots(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float slots[THREADS * (SLOTS + PAD)];
  volatile float* mine = slots + threadIdx.x * (SLOTS + PAD);
  for (int k = 0; k < SLOTS; ++k) mine[k] = 0.f;
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  for (int i = 0; i < ITERS; ++i) {
    float x = in[tid + i * stride];
    for (int k = 0; k < SLOTS; ++k) mine[k] = mine[k] * 0.5f + x;  // ROOT: word k of all slices in one bank
  }
  float s = 0.f;
  for (int k = 0; k < SLOTS; ++k) s += mine[k];
  out[tid] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int blocks = 132 * 8; size_t n = (size_t)blocks * THREADS * ITERS;
  float* in = device_fill<float>(n, 5);
  float* out; CK(cudaMalloc(&out, (size_t)blocks * THREADS * 4));
  float us = median_us([&] {
    if (fixed) smooth_slots<1><<<blocks, THREADS>>>(in, out);
    else smooth_slots<0><<<blocks, THREADS>>>(in, out);
  }, reps_of(argc, argv));
  report("smem_stride", fixed, us);
}
