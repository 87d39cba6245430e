// barrier-imbalance. bad: thread t sums tile[0..t] serially, so warp 15 loops 16x longer than
// warp 0 and the early warps idle at the next barrier. fixed: shuffle scan within each warp,
// then a scan of the 16 warp totals: every warp does the same short work.
#include "sample.cuh"
const int N = 1 << 24, T = 512, TILES_PER_BLOCK = 8;
template <bool FIXED>
__global__ void prefix_tiles(const unsigned* __restrict__ in, unsigned* __restrict__ out) {
  __shared__ unsigned tile[T];
  __shared__ unsigned warp_sum[T / 32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int k = 0; k < TILES_PER_BLOCK; ++k) {
    size_t i = ((size_t)blockIdx.x * TILES_PER_BLOCK + k) * T + threadIdx.x;
    unsigned v = in[i], s = 0;
    if (FIXED) {
      for (int o = 1; o < 32; o <<= 1) { unsigned u = __shfl_up_sync(0xffffffffu, v, o); if (lane >= o) v += u; }
      if (lane == 31) warp_sum[w] = v;
      __syncthreads();
      for (int j = 0; j < w; ++j) s += warp_sum[j];
      s += v;
    } else {
      tile[threadIdx.x] = v;
      __syncthreads();
      for (int j = 0; j <= (int)threadIdx.x; ++j) s += tile[j];
    }
    out[i] = s;
    __syncthreads();  // ROOT: the short-loop warps wait here for warp 15's 512-step loop
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* in = device_keys(N, 5);
  unsigned* out; CK(cudaMalloc(&out, (size_t)N * 4));
  int blocks = N / (T * TILES_PER_BLOCK);
  float us = median_us([&] {
    if (fixed) prefix_tiles<true><<<blocks, T>>>(in, out);
    else prefix_tiles<false><<<blocks, T>>>(in, out);
  }, reps_of(argc, argv));
  report("tri_scan", fixed, us);
}
