// barrier-imbalance. bad: warp w of each block sums segment w alone; one of the 32 segments per block
// is 256x longer than the others, so 31 warps wait at the barrier for the last one.
// fixed: the whole block sums each segment in turn, so every warp does an equal share.
#include "sample.cuh"
const int BLOCKS = 1024, SEGS = 32, LONG = 16384, SHORT = 64, THREADS = SEGS * 32;
template <bool FIXED>
__global__ void segment_sums(const double* __restrict__ x, const int* __restrict__ start, double* __restrict__ share) {
  __shared__ double seg_sum[SEGS], part[SEGS];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, base = blockIdx.x * SEGS;
  if (FIXED) {
    for (int s = 0; s < SEGS; ++s) {
      double acc = 0.0;
      for (int i = start[base + s] + threadIdx.x; i < start[base + s + 1]; i += THREADS) acc += x[i];
      for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
      if (lane == 0) part[w] = acc;
      __syncthreads();
      if (threadIdx.x == 0) { double t = 0.0; for (int j = 0; j < SEGS; ++j) t += part[j]; seg_sum[s] = t; }
      __syncthreads();
    }
  } else {
    double acc = 0.0;
    for (int i = start[base + w] + lane; i < start[base + w + 1]; i += 32) acc += x[i];
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) seg_sum[w] = acc;
    __syncthreads();  // ROOT: 31 warps wait here while one sums the long segment
  }
  if (threadIdx.x < SEGS) {
    double total = 0.0;
    for (int j = 0; j < SEGS; ++j) total += seg_sum[j];
    share[base + threadIdx.x] = seg_sum[threadIdx.x] / total;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<int> h(BLOCKS * SEGS + 1, 0);
  for (int s = 0; s < BLOCKS * SEGS; ++s) h[s + 1] = h[s] + ((s % SEGS) == (s / SEGS) % SEGS ? LONG : SHORT);
  double* x = device_fill<double>(h.back(), 19);
  int* start; CK(cudaMalloc(&start, h.size() * 4));
  CK(cudaMemcpy(start, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  double* share; CK(cudaMalloc(&share, BLOCKS * SEGS * 8));
  float us = median_us([&] {
    if (fixed) segment_sums<true><<<BLOCKS, THREADS>>>(x, start, share);
    else segment_sums<false><<<BLOCKS, THREADS>>>(x, start, share);
  }, reps_of(argc, argv));
  report("skew_segments", fixed, us);
}
