// NCHW -> NHWC layout conversion of a 32 x 256 x 56 x 56 float activation (channels-last for a
// tensor-core convolution): per image a [C=256][HW=3136] -> [HW][C] transpose through a 32 x 32
// shared-memory tile, 32 x 8 threads per block (4 elements per thread each way), grid 98 x 8 x 32.
// Global loads (along HW) and stores (along C) are both coalesced. bad: the tile is float[32][32],
// so the read-out `tile[threadIdx.x][j]` walks a column: 32 lanes at a stride of 32 words all hit
// one bank, a 32-way conflict on every LDS. fixed: float[32][33] (one word of padding per row), the
// column read hits 32 different banks. Same elements moved.
#include "sample.cuh"
const int N = 32, C = 256, HW = 56 * 56, TILE = 32, ROWS = 8;
template <int PAD>
__global__ void __launch_bounds__(TILE * ROWS) nchw_to_nhwc(const float* __restrict__ in, float* __restrict__ out, int channels, int hw) {
  __shared__ float tile[TILE][TILE + PAD];
  const int p0 = blockIdx.x * TILE, c0 = blockIdx.y * TILE;
  const float* src = in + (size_t)blockIdx.z * channels * hw;
  float* dst = out + (size_t)blockIdx.z * hw * channels;
#pragma unroll
  for (int r = 0; r < TILE; r += ROWS) {
    const int j = r + threadIdx.y;
    tile[j][threadIdx.x] = src[(size_t)(c0 + j) * hw + p0 + threadIdx.x];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < TILE; r += ROWS) {
    const int j = r + threadIdx.y;
    dst[(size_t)(p0 + j) * channels + c0 + threadIdx.x] = tile[threadIdx.x][j];  // ROOT
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)N * C * HW;
  float* in = device_fill<float>(n, 91);
  float* out; CK(cudaMalloc(&out, n * 4));
  const dim3 grid(HW / TILE, C / TILE, N), block(TILE, ROWS);
  float us = median_us([&] {
    if (fixed) nchw_to_nhwc<1><<<grid, block>>>(in, out, C, HW);
    else nchw_to_nhwc<0><<<grid, block>>>(in, out, C, HW);
  }, reps_of(argc, argv));
  report("ho2_nchw_nhwc_tile", fixed, us);
}
