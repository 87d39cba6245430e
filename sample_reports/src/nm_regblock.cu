// near miss for occupancy-limited: a register-blocked SGEMM (8x8 outputs per thread) runs few
// warps per SM by design; its 64 independent FMAs per k-step hide latency without more warps.
// The 'fixed' variant raises occupancy with __launch_bounds__(256, 4), which caps registers at 64.
#include "sample.cuh"
const int M = 2048, N = 2048, K = 2048, BM = 128, BN = 128, BK = 8;
template <int MIN_BLOCKS>
__global__ void __launch_bounds__(256, MIN_BLOCKS)
sgemm_8x8(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  __shared__ float As[BK][BM], Bs[BK][BN];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const float* a = A + (size_t)blockIdx.y * BM * K;
  const float* b = B + blockIdx.x * BN;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      int e = threadIdx.x + l * 256;
      As[e % BK][e / BK] = a[(size_t)(e / BK) * K + k0 + e % BK];
      Bs[e / BN][e % BN] = b[(size_t)(k0 + e / BN) * N + e % BN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float ra[8], rb[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) { ra[i] = As[k][ty * 8 + i]; rb[i] = Bs[k][tx * 8 + i]; }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) C[(size_t)(blockIdx.y * BM + ty * 8 + i) * N + blockIdx.x * BN + tx * 8 + j] = acc[i][j];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)M * K, 71);
  float* B = device_fill<float>((size_t)K * N, 73);
  float* C; CK(cudaMalloc(&C, (size_t)M * N * 4));
  dim3 grid(N / BN, M / BM);
  float us = median_us([&] {
    if (fixed) sgemm_8x8<4><<<grid, 256>>>(A, B, C);
    else sgemm_8x8<1><<<grid, 256>>>(A, B, C);
  }, reps_of(argc, argv));
  report("nm_regblock", fixed, us);
}
