// NEAR MISS (slow-math). Fused forward+backward of a per-element weighted squared-error loss
// (reduction='none'), as written in a custom regression head: loss[i] = w[i] * powf(d, 2.0f) and
// grad[i] = 2 w[i] d with d = pred[i] - target[i], over 64M fp32 elements (pred, target, weight
// read: 768 MB; loss and grad written: 512 MB), one float4 group per thread, loop-free.
// bad: powf(d, 2.0f) with an integer-valued literal exponent: CUDA's full powf body, ~60
// instructions per element (FFMA polynomial log2/exp2, MUFU.RCP, FRND, F2I, FSETP/FSEL special
// cases) -- ~85% of the instructions the kernel issues, the textbook slow-math pattern.
// fixed: d * d.
// Why it does not help: the kernel moves 20 bytes of DRAM traffic per element; at ~3.3-4.8 TB/s
// that is ~270-400 us for 1.28 GB, while the powf-heavy instruction stream (~80 instructions per
// element) needs ~150 us of issue time over 4 schedulers per SM (issue slots ~40-55% busy,
// DRAM ~90%). The pow
// instructions execute in the shadow of the memory stream; removing them leaves the DRAM time
// unchanged. Expected ~1.0x (0.97-1.05).
// SASS (sm_90, -O3): loop-free; 3 LDG.E.128.CONSTANT (pred, target, weight), 4 inlined powf
// bodies (~75 instructions each: MUFU.RCP, FFMA polynomials, FRND, F2I, and a short chain of
// special-case branches; ~330 instructions per thread), two STG.E.128; fixed: 8 FADD + 12 FMUL
// (d computed once) and the same loads and stores (~45 instructions per thread). Results differ from d*d by at most an ulp or so
// (powf is not correctly rounded): not bit-identical.
#include "sample.cuh"
#include <cmath>
const int N = 64 << 20;
__global__ void __launch_bounds__(256) wmse_pow(const float4* __restrict__ pred, const float4* __restrict__ tgt,
                                                const float4* __restrict__ w, float4* __restrict__ loss,
                                                float4* __restrict__ grad) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  const float4 p = pred[i], t = tgt[i], wv = w[i];
  float4 l, g;
  g.x = 2.f * wv.x * (p.x - t.x); g.y = 2.f * wv.y * (p.y - t.y); g.z = 2.f * wv.z * (p.z - t.z); g.w = 2.f * wv.w * (p.w - t.w);
  l.x = wv.x * powf(p.x - t.x, 2.0f);  // ROOT
  l.y = wv.y * powf(p.y - t.y, 2.0f);
  l.z = wv.z * powf(p.z - t.z, 2.0f);
  l.w = wv.w * powf(p.w - t.w, 2.0f);
  loss[i] = l; grad[i] = g;
}
__global__ void __launch_bounds__(256) wmse_mul(const float4* __restrict__ pred, const float4* __restrict__ tgt,
                                                const float4* __restrict__ w, float4* __restrict__ loss,
                                                float4* __restrict__ grad) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  const float4 p = pred[i], t = tgt[i], wv = w[i];
  float4 l, g;
  g.x = 2.f * wv.x * (p.x - t.x); g.y = 2.f * wv.y * (p.y - t.y); g.z = 2.f * wv.z * (p.z - t.z); g.w = 2.f * wv.w * (p.w - t.w);
  float d;
  d = p.x - t.x; l.x = wv.x * (d * d);
  d = p.y - t.y; l.y = wv.y * (d * d);
  d = p.z - t.z; l.z = wv.z * (d * d);
  d = p.w - t.w; l.w = wv.w * (d * d);
  loss[i] = l; grad[i] = g;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* pred = device_fill<float>(N, 121);
  float* tgt = device_fill<float>(N, 122);
  float* w = device_fill<float>(N, 123);
  const size_t n_out = N;
  float *out, *grad; CK(cudaMalloc(&out, n_out * 4)); CK(cudaMalloc(&grad, n_out * 4));
  float us = median_us([&] {
    if (fixed) wmse_mul<<<N / 4 / 256, 256>>>((const float4*)pred, (const float4*)tgt, (const float4*)w, (float4*)out, (float4*)grad);
    else wmse_pow<<<N / 4 / 256, 256>>>((const float4*)pred, (const float4*)tgt, (const float4*)w, (float4*)out, (float4*)grad);
  }, reps_of(argc, argv));
  report("ho4_wmse_pow_nm", fixed, us);
}
