// LAMB/LARS per-layer trust ratio, the scalar tail of an optimizer step for a 64-tensor model: a
// preceding multi-block norm kernel left P = 512 partial sums (sum w^2, sum g^2) per tensor; this
// kernel reduces one tensor's partials (256 threads: two float2 loads each, shuffle + shared
// reduction) and thread 0 writes the tensor's step size lr * ||w|| / (||g|| + wd ||w||) and the
// ratio itself. Per tensor it is ~4 KB of reads and a few scalar writes.
// bad: the Python-style loop over parameter groups: 64 launches of lamb_trust_ratio<<<1, 256>>>,
// one tensor each: every launch is one block on one SM, a few microseconds dominated by launch
// and memory latency; timed as the whole sequence of 64 launches.
// fixed: one launch of the same kernel with 64 blocks (blockIdx.x = tensor), all tensors at once.
// Expected gain ~30-60x for the sequence (64 back-to-back ~2-3 us launches vs one). Bit-identical.
#include "sample.cuh"
#include <cmath>
const int L = 64, P = 512;
__global__ void __launch_bounds__(256) lamb_trust_ratio(const float2* __restrict__ part, float* __restrict__ step,
                                                        float* __restrict__ ratio, float lr, float wd, int layer0) {
  __shared__ float2 red[8];
  const int l = layer0 + blockIdx.x, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const float2* p = part + (size_t)l * P;
  float sw = 0.f, sg = 0.f;
  for (int k = threadIdx.x; k < P; k += blockDim.x) { const float2 v = p[k]; sw += v.x; sg += v.y; }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) { sw += __shfl_xor_sync(0xffffffffu, sw, o); sg += __shfl_xor_sync(0xffffffffu, sg, o); }
  if (lane == 0) red[w] = make_float2(sw, sg);
  __syncthreads();
  if (w == 0) {
    const float2 v = lane < (int)(blockDim.x >> 5) ? red[lane] : make_float2(0.f, 0.f);
    sw = v.x; sg = v.y;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) { sw += __shfl_xor_sync(0xffffffffu, sw, o); sg += __shfl_xor_sync(0xffffffffu, sg, o); }
    if (lane == 0) {
      const float wn = sqrtf(sw), gn = sqrtf(sg);
      const float tr = (wn > 0.f && gn > 0.f) ? wn / (gn + wd * wn) : 1.f;
      ratio[l] = tr;
      step[l] = lr * tr;
    }
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* part = device_fill<float>((size_t)L * P * 2, 305);
  float *step, *ratio;
  CK(cudaMalloc(&step, L * 4)); CK(cudaMalloc(&ratio, L * 4));
  float us = median_us([&] {
    if (fixed) lamb_trust_ratio<<<L, 256>>>((const float2*)part, step, ratio, 1e-3f, 0.01f, 0);
    else for (int l = 0; l < L; ++l) lamb_trust_ratio<<<1, 256>>>((const float2*)part, step, ratio, 1e-3f, 0.01f, l);  // ROOT
  }, reps_of(argc, argv));
  report("ho3_scalar_update", fixed, us);
}

// PROFILE_LAUNCHES: 64
