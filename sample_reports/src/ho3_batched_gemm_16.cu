// Batched small GEMM C[b] = A[b] B[b] for 4096 independent 64 x 64 x 64 float products (row-major,
// 16 KB per matrix, 192 MB moved, 1.07 G FMA), e.g. the per-head products of a small attention
// block or per-element stiffness blocks.
// bad: the textbook 16 x 16 shared-memory tile kernel, one output per thread: grid (4, 4, 4096) of
// 16 x 16 threads, four k-tiles of 16; per k-tile each thread does 16 FFMA fed by 16 scalar LDS of
// Bs[k][tx] and 4 LDS.128 (broadcast) of As[ty][k..k+3]: 1.25 shared loads per FMA, so the
// shared-memory (LSU/MIO) pipe bounds the kernel at well under half the FMA rate; each A and B
// element is read from shared memory 16 times per block and each tile is loaded by 4 blocks.
// fixed: one 256-thread block per batch item stages all of A (rows padded to 68 floats) and B in
// shared memory (33 KB) with 16-byte loads/stores, and each thread computes a 4 x 4 register block
// (rows 4ty.., cols 4tx..): per 4 k one LDS.128 of A per row (4) and one LDS.128 of B per k (4) feed
// 64 FFMA: 0.125 shared loads per FMA.
// Expected gain ~2-2.5x: bad LSU-bound (~180 us on an H100), fixed near the ~60 us DRAM time of
// 192 MB. Same fmaf order over k = 0..63: bit-identical C.
#include "sample.cuh"
const int NBATCH = 4096, S = 64, T = 16;
__global__ void __launch_bounds__(T * T) bgemm_tile16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ Cm) {
  __shared__ float As[T][T], Bs[T][T];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const size_t off = (size_t)blockIdx.z * S * S;
  const int row = blockIdx.y * T + ty, colx = blockIdx.x * T + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < S; k0 += T) {
    As[ty][tx] = A[off + row * S + k0 + tx];
    Bs[ty][tx] = B[off + (k0 + ty) * S + colx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);  // ROOT
    __syncthreads();
  }
  Cm[off + row * S + colx] = acc;
}
const int AP = S + 4;  // padded A row (keeps 16-byte alignment)
__global__ void __launch_bounds__(256) bgemm_reg4x4(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ Cm) {
  __shared__ __align__(16) float As[S][AP];
  __shared__ __align__(16) float Bs[S][S];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const size_t off = (size_t)blockIdx.x * S * S;
  const float4* A4 = reinterpret_cast<const float4*>(A + off);
  const float4* B4 = reinterpret_cast<const float4*>(B + off);
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int f = tid + 256 * r, m = f >> 4, q = f & 15;  // 16 float4 per row
    *reinterpret_cast<float4*>(&As[m][4 * q]) = A4[f];
    *reinterpret_cast<float4*>(&Bs[m][4 * q]) = B4[f];
  }
  __syncthreads();
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
#pragma unroll 4
  for (int k = 0; k < S; k += 4) {
    float a[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(&As[4 * ty + i][k]);
      a[i][0] = v.x; a[i][1] = v.y; a[i][2] = v.z; a[i][3] = v.w;
    }
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const float4 b = *reinterpret_cast<const float4*>(&Bs[k + kk][4 * tx]);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        acc[i][0] = fmaf(a[i][kk], b.x, acc[i][0]);
        acc[i][1] = fmaf(a[i][kk], b.y, acc[i][1]);
        acc[i][2] = fmaf(a[i][kk], b.z, acc[i][2]);
        acc[i][3] = fmaf(a[i][kk], b.w, acc[i][3]);
      }
    }
  }
  float4* C4 = reinterpret_cast<float4*>(Cm + off);
#pragma unroll
  for (int i = 0; i < 4; ++i) C4[(4 * ty + i) * (S / 4) + tx] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NBATCH * S * S;
  float* A = device_fill<float>(n, 81);
  float* B = device_fill<float>(n, 82);
  float* Cm; CK(cudaMalloc(&Cm, n * sizeof(float)));
  float us = median_us([&] {
    if (fixed) bgemm_reg4x4<<<NBATCH, dim3(16, 16)>>>(A, B, Cm);
    else bgemm_tile16<<<dim3(S / T, S / T, NBATCH), dim3(T, T)>>>(A, B, Cm);
  }, reps_of(argc, argv));
  report("ho3_batched_gemm_16", fixed, us);
}
