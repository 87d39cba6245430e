// global-uncoalesced. bad: a naive transpose reads rows but writes columns, so each warp's 32
// stores hit 32 sectors 32 KB apart. fixed: a padded 32x32 shared tile turns the column walk into row writes.
#include "sample.cuh"
const int N = 4096, TILE = 32, ROWS = 8;
template <bool FIXED>
__global__ void transpose(const double* __restrict__ in, double* __restrict__ out) {
  __shared__ double tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  if (!FIXED) {
    for (int r = threadIdx.y; r < TILE; r += ROWS)
      out[(size_t)x * N + y0 + r] = in[(size_t)(y0 + r) * N + x];  // ROOT: lanes store N doubles apart
  } else {
    for (int r = threadIdx.y; r < TILE; r += ROWS) tile[r][threadIdx.x] = in[(size_t)(y0 + r) * N + x];
    __syncthreads();
    int ox = y0 + threadIdx.x, oy0 = blockIdx.x * TILE;
    for (int r = threadIdx.y; r < TILE; r += ROWS) out[(size_t)(oy0 + r) * N + ox] = tile[threadIdx.x][r];
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* in = device_fill<double>((size_t)N * N, 7);
  double* out; CK(cudaMalloc(&out, (size_t)N * N * 8));
  dim3 grid(N / TILE, N / TILE), block(TILE, ROWS);
  float us = median_us([&] {
    if (fixed) transpose<true><<<grid, block>>>(in, out);
    else transpose<false><<<grid, block>>>(in, out);
  }, reps_of(argc, argv));
  report("naive_transpose", fixed, us);
}
