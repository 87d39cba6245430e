// FP32 GEMM C = A * B, A 2048 x 512, B 512 x 2048, C 2048 x 2048, all row-major (4.3 GFLOP).
// bad: the textbook shared-memory tiled kernel, 16 x 16 thread blocks, 16 x 16 tiles of A and B
// staged per k-step, ONE output per thread: every FFMA needs a fresh B element from shared memory
// (LDS) and an A element (LDS, vectorized at best 4-wide), so the kernel issues about one shared
// load per FMA and is bound by the LSU/shared pipe, not by the FMA units.
// fixed: register blocking: 64 x 64 output tiles per 256-thread block, each thread computes a 4 x 4
// block of C; per k it loads one float4 of A and one float4 of B from shared memory (A staged
// transposed) and does 16 FFMAs from registers, 8x the reuse per load. Both accumulate each output
// with fmaf over k in the same order, so C is bit-identical.
#include "sample.cuh"
const int M = 2048, N = 2048, K = 512;
__global__ void __launch_bounds__(256) sgemm_tile16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  __shared__ float As[16][16], Bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < k; k0 += 16) {
    As[ty][tx] = A[(size_t)row * k + k0 + tx];
    Bs[ty][tx] = B[(size_t)(k0 + ty) * n + col];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);  // ROOT
    __syncthreads();
  }
  C[(size_t)row * n + col] = acc;
}
const int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4, APAD = 4;
__global__ void __launch_bounds__(256) sgemm_reg4x4(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  __shared__ __align__(16) float As[BK][BM + APAD];  // A tile, transposed: As[kk][row]
  __shared__ __align__(16) float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int a_row = tid >> 2, a_k = (tid & 3) * 4;   // 64 rows x 4 float4 of the A tile
  const int b_k = tid >> 4, b_n = (tid & 15) * 4;    // 16 rows x 16 float4 of the B tile
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < k; k0 += BK) {
    const float4 av = *reinterpret_cast<const float4*>(A + (size_t)(m0 + a_row) * k + k0 + a_k);
    const float4 bv = *reinterpret_cast<const float4*>(B + (size_t)(k0 + b_k) * n + n0 + b_n);
    As[a_k + 0][a_row] = av.x;
    As[a_k + 1][a_row] = av.y;
    As[a_k + 2][a_row] = av.z;
    As[a_k + 3][a_row] = av.w;
    *reinterpret_cast<float4*>(&Bs[b_k][b_n]) = bv;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(&As[kk][ty * TM]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[kk][tx * TN]);
      const float ar[TM] = {a.x, a.y, a.z, a.w};
      const float br[TN] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
    *reinterpret_cast<float4*>(C + (size_t)(m0 + ty * TM + i) * n + n0 + tx * TN) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)M * K, 101);
  float* B = device_fill<float>((size_t)K * N, 102);
  float* C; CK(cudaMalloc(&C, (size_t)M * N * 4));
  const dim3 block(16, 16);
  float us = median_us([&] {
    if (fixed) sgemm_reg4x4<<<dim3(N / BN, M / BM), block>>>(A, B, C, M, N, K);
    else sgemm_tile16<<<dim3(N / 16, M / 16), block>>>(A, B, C, M, N, K);
  }, reps_of(argc, argv));
  report("ho2_sgemm_regblock", fixed, us);
}
