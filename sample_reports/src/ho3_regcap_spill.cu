// FP32 GEMM C = A B, 2048 x 2048 x 2048, row-major (17.2 GFLOP), the classic register-blocked
// kernel: 128 x 128 block tile, 256 threads, an 8 x 8 accumulator tile per thread (64 FFMA per k
// from two LDS.128 of A and two of B), the 128 x 8 / 8 x 128 k-slices double-buffered in shared
// memory and the next slice prefetched from global into registers during the FMAs. 16 x 16 = 256
// blocks.
// bad: __launch_bounds__(256): ptxas (nvcc 13.0, sm_90) keeps the 64 accumulators, the 16
// fragment values and the prefetch in 130 registers, no spills: 256 x 136 = 34.8 K registers per
// block, so ONE block (8 warps, 12.5% occupancy) per SM and 256 blocks take two rounds of 132 and
// 124, but each warp has 64 independent FFMAs per 4 shared loads: plenty of ILP.
// 'fixed' (what a user might try after an occupancy hint): the same kernel under
// __launch_bounds__(256, 3), i.e. at most 80 registers so 3 blocks fit per SM (all 256 blocks
// resident at once, ~2 per SM); the 64 accumulators no longer fit and ptxas spills: 176-byte
// stack frame, 492 bytes spill stores, 460 bytes spill loads (114 STL / 110 LDL in the SASS, in
// the k loop).
// NEAR MISS: expected no gain, likely slower (the extra warps add nothing to an ILP-rich inner
// loop, and the spill traffic goes through L1 next to the shared-memory loads); occupancy-limited
// should not be called high. Same arithmetic order, bit-identical C.
#include "sample.cuh"
const int M = 2048, NN = 2048, K = 2048, BM = 128, BN = 128, BK = 8;
template <int MINB>
__global__ void __launch_bounds__(256, MINB) sgemm_128x128(const float* __restrict__ A, const float* __restrict__ B,
                                                           float* __restrict__ C, int m, int n, int k) {
  __shared__ __align__(16) float As[2][BK][BM];  // A slice stored transposed: As[kk][row]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int arow = tid >> 1, acol = (tid & 1) * 4;    // A slice: 128 rows x 8 k, one float4 each
  const int brow = tid >> 5, bcol = (tid & 31) * 4;   // B slice: 8 k x 128 cols, one float4 each
  const float* Ab = A + (size_t)(blockIdx.y * BM + arow) * k + acol;
  const float* Bb = B + (size_t)brow * n + blockIdx.x * BN + bcol;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  float4 ra = *(const float4*)Ab, rb = *(const float4*)Bb;
  As[0][acol + 0][arow] = ra.x; As[0][acol + 1][arow] = ra.y; As[0][acol + 2][arow] = ra.z; As[0][acol + 3][arow] = ra.w;
  *(float4*)&Bs[0][brow][bcol] = rb;
  __syncthreads();
  for (int k0 = 0; k0 < k; k0 += BK) {
    const int buf = (k0 / BK) & 1;
    const bool more = k0 + BK < k;
    if (more) { ra = *(const float4*)(Ab + k0 + BK); rb = *(const float4*)(Bb + (size_t)(k0 + BK) * n); }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = *(const float4*)&As[buf][kk][ty * 8], a1 = *(const float4*)&As[buf][kk][ty * 8 + 4];
      const float4 b0 = *(const float4*)&Bs[buf][kk][tx * 8], b1 = *(const float4*)&Bs[buf][kk][tx * 8 + 4];
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {
      As[buf ^ 1][acol + 0][arow] = ra.x; As[buf ^ 1][acol + 1][arow] = ra.y;
      As[buf ^ 1][acol + 2][arow] = ra.z; As[buf ^ 1][acol + 3][arow] = ra.w;
      *(float4*)&Bs[buf ^ 1][brow][bcol] = rb;
    }
    __syncthreads();
  }
  float* Cb = C + (size_t)(blockIdx.y * BM + ty * 8) * n + blockIdx.x * BN + tx * 8;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    *(float4*)(Cb + (size_t)i * n) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *(float4*)(Cb + (size_t)i * n + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)M * K, 317);
  float* B = device_fill<float>((size_t)K * NN, 318);
  float* C; CK(cudaMalloc(&C, (size_t)M * NN * 4));
  const dim3 grid(NN / BN, M / BM);
  float us = median_us([&] {
    if (fixed) sgemm_128x128<3><<<grid, 256>>>(A, B, C, M, NN, K);
    else sgemm_128x128<1><<<grid, 256>>>(A, B, C, M, NN, K);  // ROOT
  }, reps_of(argc, argv));
  if (!fixed) {  // spot-check a few elements against a double-precision dot product
    std::vector<float> ha((size_t)M * K), hb((size_t)K * NN), hc((size_t)M * NN);
    CK(cudaMemcpy(ha.data(), A, ha.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), B, hb.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
    const int pts[4][2] = {{0, 0}, {1, 2047}, {1000, 77}, {2047, 2047}};
    for (auto& q : pts) {
      double s = 0.0;
      for (int kk = 0; kk < K; ++kk) s += (double)ha[(size_t)q[0] * K + kk] * hb[(size_t)kk * NN + q[1]];
      if (fabs(s - hc[(size_t)q[0] * NN + q[1]]) > 1e-3 * fabs(s)) fprintf(stderr, "check failed at (%d, %d)\n", q[0], q[1]);
    }
  }
  report("ho3_regcap_spill", fixed, us);
}
