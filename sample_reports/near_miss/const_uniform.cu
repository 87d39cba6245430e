// Near miss for constant-cache-divergence: __constant__ memory indexed by loop counters and a
// kernel argument only (a register index, but the same address in every lane of a warp: no
// serialization). "bad" is that kernel;
// "fixed" reads the table through global memory instead (for comparison, no faster).
#include "../src/sample.cuh"
const int N = 132 * 2048, ROUNDS = 64, TAB = 256;
__constant__ float coef[TAB];
template <bool GLOBAL>
__global__ void poly_rounds(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ gcoef, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i], acc = 0.f;
  for (int r = 0; r < ROUNDS; ++r)
    for (int k = 0; k < 4; ++k) acc = acc * v + (GLOBAL ? gcoef[(r * stride + k) & (TAB - 1)] : coef[(r * stride + k) & (TAB - 1)]);  // uniform index
  y[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 1);
  float* g = device_fill<float>(TAB, 2);
  CK(cudaMemcpyToSymbol(coef, g, TAB * 4, 0, cudaMemcpyDeviceToDevice));
  float* y; CK(cudaMalloc(&y, N * 4));
  float us = median_us([&] {
    if (fixed) poly_rounds<true><<<N / 256, 256>>>(x, y, g, argc > 3 ? atoi(argv[3]) : 5);
    else poly_rounds<false><<<N / 256, 256>>>(x, y, g, argc > 3 ? atoi(argv[3]) : 5);
  }, reps_of(argc, argv));
  report("const_uniform", fixed, us);
}
