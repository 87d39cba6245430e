// Row softmax of a [2^21 x 32] float matrix (e.g. attention weights over 32 keys): 2-D blocks of
// 32 x 8 threads, one row per warp (threadIdx.x = column), one element per thread, loop-free.
// bad: both row reductions (max, then sum of exponentials) use the classic shared-memory tree
// `if (tx < s) sh[ty][tx] = op(sh[ty][tx], sh[ty][tx + s])` for s = 16, 8, 4, 2, 1 with a
// __syncthreads after every step (unrolled); nvcc predicates the guarded LDS/LDS/op/STS, so every
// warp issues all 10 steps with 16, 8, 4, 2, then 1 of its 32 lanes enabled, and waits at 13 barriers.
// fixed: the same reductions with __shfl_xor_sync butterflies (all 32 lanes active, no barrier).
// Same exponentials and sums; every lane ends with the same row maximum and row sum.
#include "sample.cuh"
const int COLS = 32, ROWS_PER_BLOCK = 8, ROWS = 1 << 21;
template <bool FIXED>
__global__ void __launch_bounds__(COLS * ROWS_PER_BLOCK) softmax_rows32(const float* __restrict__ x, float* __restrict__ y) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const size_t row = (size_t)blockIdx.x * ROWS_PER_BLOCK + ty;
  const float v = x[row * COLS + tx];
  float m, s, e;
  if (!FIXED) {
    __shared__ float sh[ROWS_PER_BLOCK][COLS];
    sh[ty][tx] = v;
    __syncthreads();
#pragma unroll
    for (int st = COLS / 2; st > 0; st >>= 1) {
      if (tx < st) sh[ty][tx] = fmaxf(sh[ty][tx], sh[ty][tx + st]);  // ROOT
      __syncthreads();
    }
    m = sh[ty][0];
    __syncthreads();
    e = __expf(v - m);
    sh[ty][tx] = e;
    __syncthreads();
#pragma unroll
    for (int st = COLS / 2; st > 0; st >>= 1) {
      if (tx < st) sh[ty][tx] += sh[ty][tx + st];
      __syncthreads();
    }
    s = sh[ty][0];
  } else {
    m = v;
#pragma unroll
    for (int o = COLS / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    e = __expf(v - m);
    s = e;
#pragma unroll
    for (int o = COLS / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  }
  y[row * COLS + tx] = __fdividef(e, s);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)ROWS * COLS, 41);
  float* y; CK(cudaMalloc(&y, (size_t)ROWS * COLS * 4));
  const dim3 block(COLS, ROWS_PER_BLOCK);
  const int grid = ROWS / ROWS_PER_BLOCK;
  float us = median_us([&] {
    if (fixed) softmax_rows32<true><<<grid, block>>>(x, y);
    else softmax_rows32<false><<<grid, block>>>(x, y);
  }, reps_of(argc, argv));
  report("ho2_softmax_tree", fixed, us);
}
