// Near miss for warp-divergence: two expensive paths chosen by blockIdx only, so every lane of
// a warp (and of a block) takes the same path; no warp runs both.
#include "sample.cuh"
const int N = 132 * 2048 * 2, ITERS = 256;
__global__ void per_block_model(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if (blockIdx.x % 3 == 0) {  // uniform across the block
    for (int k = 0; k < ITERS; ++k) v = __sinf(v) * 1.5f + 0.25f;
  } else {
    for (int k = 0; k < ITERS; ++k) v = __cosf(v) * 0.75f - 0.125f;
  }
  out[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 83);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] { per_block_model<<<N / 256, 256>>>(in, out); }, reps_of(argc, argv));
  report("nm_block_branch", fixed, us);
}
