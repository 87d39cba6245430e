// local-memory. bad: __launch_bounds__(256, 8) caps a register-blocked 8x8 outer-product GEMM at
// 32 registers, so its 64 accumulators spill to local memory. fixed: a 2-block minimum (128 registers).
#include "sample.cuh"
const int M = 2048, NC = 2048, K = 256, TM = 8;
template <int MIN_BLOCKS>
__global__ void __launch_bounds__(256, MIN_BLOCKS) outer8(const float* __restrict__ At, const float* __restrict__ B, float* __restrict__ C) {
  int c0 = (blockIdx.x * 32 + threadIdx.x % 32) * TM, r0 = (blockIdx.y * 8 + threadIdx.x / 32) * TM;
  float acc[TM][TM] = {};
  for (int k = 0; k < K; ++k) {
    float a[TM], b[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) { a[i] = At[(size_t)k * M + r0 + i]; b[i] = B[(size_t)k * NC + c0 + i]; }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TM; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);  // ROOT: accumulators live in local memory
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TM; ++j) C[(size_t)(r0 + i) * NC + c0 + j] = acc[i][j];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* At = device_fill<float>((size_t)K * M, 59);
  float* B = device_fill<float>((size_t)K * NC, 61);
  float* C; CK(cudaMalloc(&C, (size_t)M * NC * 4));
  dim3 grid(NC / (32 * TM), M / (8 * TM));
  float us = median_us([&] {
    if (fixed) outer8<2><<<grid, 256>>>(At, B, C);
    else outer8<8><<<grid, 256>>>(At, B, C);
  }, reps_of(argc, argv));
  report("spill_tile", fixed, us);
}
