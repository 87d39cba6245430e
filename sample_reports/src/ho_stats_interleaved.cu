// Per-block summary statistics (sum, sum of squares, min, max) of 2^26 floats: 512-thread blocks,
// each thread folds 4 coalesced elements, then the block combines its 512 partials in shared memory
// (one float array per statistic) and writes one float4 per block. bad: interleaved tree addressing,
// thread t combines slots 2*s*t and 2*s*t + s. fixed: sequential addressing, thread t combines
// slots t and t + s. Both keep the same number of active threads per step.
#include "sample.cuh"
#include <cfloat>
const int N = 1 << 26, BLOCK = 512, PER = 4;
template <bool FIXED>
__global__ void __launch_bounds__(BLOCK) block_stats(const float* __restrict__ x, float4* __restrict__ partial) {
  __shared__ float s_sum[BLOCK], s_sq[BLOCK], s_min[BLOCK], s_max[BLOCK];
  const int t = threadIdx.x;
  const float* p = x + (size_t)blockIdx.x * BLOCK * PER + t;
  float sum = 0.f, sq = 0.f, mn = FLT_MAX, mx = -FLT_MAX;
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const float v = p[k * BLOCK];
    sum += v; sq = fmaf(v, v, sq); mn = fminf(mn, v); mx = fmaxf(mx, v);
  }
  s_sum[t] = sum; s_sq[t] = sq; s_min[t] = mn; s_max[t] = mx;
  __syncthreads();
  if (!FIXED) {
    for (int s = 1; s < BLOCK; s *= 2) {
      const int i = 2 * s * t;
      if (i < BLOCK) {
        s_sum[i] += s_sum[i + s]; s_sq[i] += s_sq[i + s]; s_min[i] = fminf(s_min[i], s_min[i + s]); s_max[i] = fmaxf(s_max[i], s_max[i + s]);  // ROOT
      }
      __syncthreads();
    }
  } else {
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
      if (t < s) {
        s_sum[t] += s_sum[t + s]; s_sq[t] += s_sq[t + s]; s_min[t] = fminf(s_min[t], s_min[t + s]); s_max[t] = fmaxf(s_max[t], s_max[t + s]);
      }
      __syncthreads();
    }
  }
  if (t == 0) partial[blockIdx.x] = make_float4(s_sum[0], s_sq[0], s_min[0], s_max[0]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const int blocks = N / (BLOCK * PER);
  float* x = device_fill<float>(N, 12);
  float4* partial; CK(cudaMalloc(&partial, blocks * sizeof(float4)));
  float us = median_us([&] {
    if (fixed) block_stats<true><<<blocks, BLOCK>>>(x, partial);
    else block_stats<false><<<blocks, BLOCK>>>(x, partial);
  }, reps_of(argc, argv));
  report("ho_stats_interleaved", fixed, us);
}
