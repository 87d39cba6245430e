// 32-point DCT-II of 2^18 rows of 32 floats (block transform of a signal / image rows): y = C x with
// the 32 x 32 orthonormal DCT matrix C. 1024 blocks of 256 threads; each block stages C once in a
// shared 32 x 32 tile; each warp then loops over its rows (32 per warp, grid-stride): lane j loads
// x[j] (coalesced 128 B), the row goes to a per-warp shared buffer, and lane j computes
// y[j] = sum_k C[j][k] * x[k] with the k loop fully unrolled (x[k] is a broadcast LDS.128 every 4 k).
// bad: the tile is float Cs[32][32]: in the inner loop lane j reads Cs[j][k], i.e. a warp reads
// column k of the tile at a 32-word stride, all 32 lanes in the same bank. nvcc also vectorizes the
// aligned rows to LDS.128 (Cs[j][k..k+3]), but a quarter-warp's 8 lanes then all hit the same 4
// banks: each LDS.128 is replayed 8-way per quarter (32 wavefronts instead of 4), ~8x the shared
// traffic of the fixed kernel, which bounds the kernel.
// fixed: the tile is padded to float Cs[32][33]: lane j's word j*33 + k lands in bank (j + k) % 32,
// all 32 lanes in distinct banks (32 scalar LDS, one wavefront each).
// Expected gain ~3-6x (bad shared-pipe bound with ~256 wavefronts per row vs ~40; fixed should
// approach the ~20 us DRAM time of 32 MB in + 32 MB out). Same fmaf order: bit-identical output.
#include "sample.cuh"
#include <cmath>
const int NVEC = 1 << 18, WARPS = 8, BLOCKS = 1024;
template <int LD>
__global__ void __launch_bounds__(WARPS * 32) dct32_rows(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ C) {
  __shared__ __align__(16) float Cs[32][LD];
  __shared__ __align__(16) float xs[WARPS][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int i = threadIdx.x; i < 32 * 32; i += WARPS * 32) Cs[i >> 5][i & 31] = C[i];
  __syncthreads();
  for (int v = blockIdx.x * WARPS + w; v < NVEC; v += BLOCKS * WARPS) {
    xs[w][lane] = x[(size_t)v * 32 + lane];
    __syncwarp();
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < 32; ++k) acc = fmaf(Cs[lane][k], xs[w][k], acc);  // ROOT
    __syncwarp();
    y[(size_t)v * 32 + lane] = acc;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float> hc(32 * 32);
  for (int j = 0; j < 32; ++j)
    for (int k = 0; k < 32; ++k)
      hc[j * 32 + k] = (float)((j == 0 ? std::sqrt(1.0 / 32) : std::sqrt(2.0 / 32)) * std::cos(M_PI * (k + 0.5) * j / 32));
  float* C; CK(cudaMalloc(&C, hc.size() * sizeof(float)));
  CK(cudaMemcpy(C, hc.data(), hc.size() * sizeof(float), cudaMemcpyHostToDevice));
  float* x = device_fill<float>((size_t)NVEC * 32, 121);
  float* y; CK(cudaMalloc(&y, (size_t)NVEC * 32 * sizeof(float)));
  float us = median_us([&] {
    if (fixed) dct32_rows<33><<<BLOCKS, WARPS * 32>>>(x, y, C);
    else dct32_rows<32><<<BLOCKS, WARPS * 32>>>(x, y, C);
  }, reps_of(argc, argv));
  report("ho3_matrix_col_smem", fixed, us);
}
