// Work-efficient (Blelloch) exclusive scan of 8192 segments of 2048 floats, one 1024-thread block
// per segment, two elements per thread, up-sweep and down-sweep fully unrolled (the guarded
// steps compile to predicated LDS/STS between BAR.SYNCs), as in GPU Gems 3, chapter 39.
// bad: no padding: the step with stride `offset` has active lanes 2 * offset words apart, 2-way
// conflicts while all warps work and up to 32-way ones in the late steps, where few warps work and
// the rest execute the same instructions predicated off (the per-instruction average then reads
// one wavefront or less).
// fixed: the conflict-free offset n + (n >> 5) on every shared index (one pad word per 32).
// Same additions in the same order: bit-identical.
#include "sample.cuh"
template <bool PAD>
__global__ void __launch_bounds__(1024) scan_segments(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float t[2048 + 64];
  const int tid = threadIdx.x;
  auto cf = [](int n) { return PAD ? (n >> 5) : 0; };
  const float* x = in + (size_t)blockIdx.x * 2048;
  int ai = tid, bi = tid + 1024;
  t[ai + cf(ai)] = x[ai];
  t[bi + cf(bi)] = x[bi];
  int offset = 1;
#pragma unroll
  for (int d = 1024; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
      t[b + cf(b)] += t[a + cf(a)];  // ROOT
    }
    offset *= 2;
  }
  if (tid == 0) t[2047 + cf(2047)] = 0.f;
#pragma unroll
  for (int d = 1; d < 2048; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
      float v = t[a + cf(a)];
      t[a + cf(a)] = t[b + cf(b)];
      t[b + cf(b)] += v;
    }
  }
  __syncthreads();
  float* y = out + (size_t)blockIdx.x * 2048;
  y[ai] = t[ai + cf(ai)];
  y[bi] = t[bi + cf(bi)];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)8192 * 2048, 7);
  float* out; CK(cudaMalloc(&out, (size_t)8192 * 2048 * sizeof(float)));
  float us = median_us([&] {
    if (fixed) scan_segments<true><<<8192, 1024>>>(in, out);
    else scan_segments<false><<<8192, 1024>>>(in, out);
  }, reps_of(argc, argv));
  report("smem_blelloch_scan", fixed, us);
}
