// near miss for barrier-imbalance: a tiled transpose has a __syncthreads() between the tile load
// and the tile store, but every warp loads and stores the same number of rows (balanced barrier).
#include "sample.cuh"
const int N = 8192, TILE = 32, ROWS = 8;
__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int r = 0; r < TILE; r += ROWS) tile[threadIdx.y + r][threadIdx.x] = in[(size_t)(y + r) * N + x];
  __syncthreads();  // every warp has done exactly TILE / ROWS loads before it arrives here
  x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
  for (int r = 0; r < TILE; r += ROWS) out[(size_t)(y + r) * N + x] = tile[threadIdx.x][threadIdx.y + r];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)N * N, 23);
  float* out; CK(cudaMalloc(&out, (size_t)N * N * 4));
  dim3 grid(N / TILE, N / TILE), block(TILE, ROWS);
  float us = median_us([&] { transpose_tile<<<grid, block>>>(in, out); }, reps_of(argc, argv));
  report("nm_transpose", fixed, us);
}
