// NEAR MISS. FP32 GEMM C = A B, A 2048 x 1024, B 1024 x 2048, row-major (8.6 GFLOP), one templated
// register-blocked kernel: 256 threads (16 x 16), k-tiles of 16 staged in shared memory (A stored
// k-major so both operands are read as 16-byte vectors), each thread owning a TM x TN register block
// made of 4 x 4 sub-blocks 64 rows / 64 columns apart (so the LDS.128 of a quarter-warp are
// contiguous, conflict-free).
// bad: sgemm_regblock<64, 64, 4, 4>: 64 x 64 block tile, 4 x 4 outputs per thread; per k one LDS.128
// of A and one of B feed 16 FFMA (0.125 shared loads per FMA, ~89% of the inner-loop instructions
// are FFMA), 1024 blocks, 64 registers, 4 blocks (32 warps) per SM.
// 'fixed': sgemm_regblock<128, 128, 8, 8>: 128 x 128 block tile, 8 x 8 per thread: per k two + two
// LDS.128 feed 64 FFMA (0.0625 per FMA), half the L2->SM tile traffic per FMA, 256 blocks (one wave
// at 2 blocks per SM), 119 registers.
// The 4 x 4 kernel already has enough operand reuse: its shared pipe runs at well under its limit and
// the FMA pipe issues most cycles, so doubling the register block only trims the remaining LDS and
// address/loop overhead. Expected small gain (<= ~1.2x), low-data-reuse should NOT be the top
// finding for bad. Same fmaf order over k: bit-identical C.
#include "sample.cuh"
const int M = 2048, N = 2048, KD = 1024, BK = 16;
template <int BM, int BN, int TM, int TN>
__global__ void __launch_bounds__(256, 2) sgemm_regblock(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ Cm) {
  static_assert(BM == 16 * TM && BN == 16 * TN && TM % 4 == 0 && TN % 4 == 0, "tile shape");
  __shared__ __align__(16) float As[BK][BM + 4];  // k-major copy of the A tile
  __shared__ __align__(16) float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < KD; k0 += BK) {
#pragma unroll
    for (int r = 0; r < BM * BK / 4 / 256; ++r) {  // A tile: BM rows x 4 float4
      const int f = tid + 256 * r, m = f >> 2, q = f & 3;
      const float4 v = *reinterpret_cast<const float4*>(&A[(size_t)(m0 + m) * KD + k0 + 4 * q]);
      As[4 * q][m] = v.x; As[4 * q + 1][m] = v.y; As[4 * q + 2][m] = v.z; As[4 * q + 3][m] = v.w;
    }
#pragma unroll
    for (int r = 0; r < BN * BK / 4 / 256; ++r) {  // B tile: 16 rows x BN/4 float4
      const int f = tid + 256 * r, k = f / (BN / 4), q = f % (BN / 4);
      *reinterpret_cast<float4*>(&Bs[k][4 * q]) = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + k) * N + n0 + 4 * q]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int g = 0; g < TM / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k][64 * g + 4 * ty]);
        a[4 * g] = v.x; a[4 * g + 1] = v.y; a[4 * g + 2] = v.z; a[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k][64 * g + 4 * tx]);
        b[4 * g] = v.x; b[4 * g + 1] = v.y; b[4 * g + 2] = v.z; b[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);  // ROOT
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + 64 * (i / 4) + 4 * ty + (i % 4);
#pragma unroll
    for (int g = 0; g < TN / 4; ++g)
      *reinterpret_cast<float4*>(&Cm[(size_t)m * N + n0 + 64 * g + 4 * tx]) =
          make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)M * KD, 91);
  float* B = device_fill<float>((size_t)KD * N, 92);
  float* Cm; CK(cudaMalloc(&Cm, (size_t)M * N * sizeof(float)));
  float us = median_us([&] {
    if (fixed) sgemm_regblock<128, 128, 8, 8><<<dim3(N / 128, M / 128), dim3(16, 16)>>>(A, B, Cm);
    else sgemm_regblock<64, 64, 4, 4><<<dim3(N / 64, M / 64), dim3(16, 16)>>>(A, B, Cm);
  }, reps_of(argc, argv));
  report("ho3_gemm_regblock_nm", fixed, us);
}
