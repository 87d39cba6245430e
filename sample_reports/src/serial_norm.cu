// barrier-imbalance. bad: thread 0 computes the row norm alone while the block's other warps
// wait at the barrier. fixed: the whole block reduces the norm with warp shuffles.
#include "sample.cuh"
const int ROWS = 132 * 16, COLS = 4096, THREADS = 256;
template <bool FIXED>
__global__ void normalize_rows(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float part[THREADS / 32];
  __shared__ float inv_norm;
  const float* row = in + (size_t)blockIdx.x * COLS;
  if (FIXED) {
    float s = 0.f;
    for (int c = threadIdx.x; c < COLS; c += blockDim.x) s += row[c] * row[c];
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0.f; for (int w = 0; w < THREADS / 32; ++w) t += part[w]; inv_norm = rsqrtf(t); }
  } else if (threadIdx.x == 0) {
    float s = 0.f;
    for (int c = 0; c < COLS; ++c) s += row[c] * row[c];
    inv_norm = rsqrtf(s);
  }
  __syncthreads();  // ROOT: the block waits here for the norm
  for (int c = threadIdx.x; c < COLS; c += blockDim.x) out[(size_t)blockIdx.x * COLS + c] = row[c] * inv_norm;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)ROWS * COLS, 11);
  float* out; CK(cudaMalloc(&out, (size_t)ROWS * COLS * 4));
  float us = median_us([&] {
    if (fixed) normalize_rows<true><<<ROWS, THREADS>>>(in, out);
    else normalize_rows<false><<<ROWS, THREADS>>>(in, out);
  }, reps_of(argc, argv));
  report("serial_norm", fixed, us);
}
