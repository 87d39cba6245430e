// 17-tap 1-D convolution of 2^26 floats (taps in __constant__): each 1024-thread block stages its
// 4096-sample tile plus a 16-sample halo in shared memory, waits at a barrier, then every thread
// computes 4 outputs from shared memory. bad: the tile is staged by warp 0 alone (the copy loop of
// a kernel first written for 32-thread blocks), so the other 31 warps sit at the barrier while it
// loads 129 samples per lane. fixed: all 1024 threads stage the tile (5 samples per thread at most).
#include "sample.cuh"
const int N = 1 << 26, BLOCK = 1024, OUT_PER_BLOCK = 4096, R = 8, TAPS = 2 * R + 1, TILE = OUT_PER_BLOCK + 2 * R;
__constant__ float c_taps[TAPS];
template <bool FIXED>
__global__ void __launch_bounds__(BLOCK) conv1d_tiled(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[TILE];
  const int base = blockIdx.x * OUT_PER_BLOCK - R;
  if (!FIXED) {
    if (threadIdx.x < 32)
      for (int j = threadIdx.x; j < TILE; j += 32) tile[j] = x[min(max(base + j, 0), N - 1)];  // ROOT
  } else {
    for (int j = threadIdx.x; j < TILE; j += BLOCK) tile[j] = x[min(max(base + j, 0), N - 1)];
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < OUT_PER_BLOCK / BLOCK; ++q) {
    const int o = q * BLOCK + threadIdx.x;
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k) acc = fmaf(c_taps[k], tile[o + k], acc);
    y[blockIdx.x * OUT_PER_BLOCK + o] = acc;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float h[TAPS], s = 0.f;
  for (int k = 0; k < TAPS; ++k) { h[k] = 1.f / (1.f + 0.1f * (k - R) * (k - R)); s += h[k]; }
  for (int k = 0; k < TAPS; ++k) h[k] /= s;
  CK(cudaMemcpyToSymbol(c_taps, h, sizeof(h)));
  float* x = device_fill<float>(N, 29);
  float* y; CK(cudaMalloc(&y, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) conv1d_tiled<true><<<N / OUT_PER_BLOCK, BLOCK>>>(x, y);
    else conv1d_tiled<false><<<N / OUT_PER_BLOCK, BLOCK>>>(x, y);
  }, reps_of(argc, argv));
  report("ho_conv1d_stage", fixed, us);
}
