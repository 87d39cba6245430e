// PROFILE_LAUNCHES: 8
// NEAR MISS (serial-kernel). SGD with momentum and weight decay over an 8-tensor parameter group
// (8 x 8M fp32 = 8 x 32 MB), the per-parameter loop of a non-foreach optimizer: for each tensor
// one launch of sgd_momentum, a grid-stride float4 kernel (p, g, m: 3 x 16-byte loads, 2 x 16-byte
// stores per element group). It looks like the serial-launch pattern (a host loop of launches of
// one kernel, one tensor per launch), but every launch already covers the whole GPU:
// grid 1056 x 256 = 8 blocks (64 warps) on every SM, and each launch streams 160 MB
// (read p, g, m; write p, m) at DRAM bandwidth for ~40-50 us.
// bad: 8 launches sgd_momentum<<<(1056, 1), 256>>>(..., t0 = tensor), timed as the sequence.
// fixed: one multi-tensor launch sgd_momentum<<<(1056, 8), 256>>> (blockIdx.y = tensor), the
// foreach/multi_tensor_apply form.
// Why it does not help: the sequence is DRAM-bound in every launch (dram throughput ~90% of
// peak, SMs fully occupied); batching only removes 7 launch gaps (~1-2 us each) and 7 wave
// tails out of ~350-400 us. Expected ~1.02-1.06x.
// SASS (sm_90, -O3): the grid-stride loop is not unrolled: per iteration 3 LDG.E.128 + 2
// STG.E.128 + 12 FFMA (g is read with LDG.E.128.CONSTANT); the tensor pointers are read from the parameter bank with a runtime
// index (LDC.64 c[0x0][R]). Same kernel in both variants. Bit-identical output.
#include "sample.cuh"
const int T = 8, N = 8 << 20, BLOCK = 256, GRIDX = 132 * 8;
struct TensorList { float4* p[T]; const float4* g[T]; float4* m[T]; };
__global__ void __launch_bounds__(BLOCK) sgd_momentum(TensorList tl, int n4, int t0, float lr, float mu, float wd) {
  const int t = t0 + blockIdx.y;
  float4* __restrict__ p = tl.p[t];
  const float4* __restrict__ g = tl.g[t];
  float4* __restrict__ m = tl.m[t];
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n4; i += gridDim.x * BLOCK) {
    float4 pv = p[i], gv = g[i], mv = m[i];
    gv.x = fmaf(wd, pv.x, gv.x); gv.y = fmaf(wd, pv.y, gv.y); gv.z = fmaf(wd, pv.z, gv.z); gv.w = fmaf(wd, pv.w, gv.w);
    mv.x = fmaf(mu, mv.x, gv.x); mv.y = fmaf(mu, mv.y, gv.y); mv.z = fmaf(mu, mv.z, gv.z); mv.w = fmaf(mu, mv.w, gv.w);
    pv.x = fmaf(-lr, mv.x, pv.x); pv.y = fmaf(-lr, mv.y, pv.y); pv.z = fmaf(-lr, mv.z, pv.z); pv.w = fmaf(-lr, mv.w, pv.w);
    m[i] = mv; p[i] = pv;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n_out = (size_t)T * N;
  float* out = device_fill<float>(n_out, 91);   // parameters (updated in place)
  float* grad = device_fill<float>(n_out, 92);
  float* mom = device_fill<float>(n_out, 93);
  TensorList tl;
  for (int t = 0; t < T; ++t) {
    tl.p[t] = (float4*)(out + (size_t)t * N); tl.g[t] = (const float4*)(grad + (size_t)t * N); tl.m[t] = (float4*)(mom + (size_t)t * N);
  }
  float us = median_us([&] {
    if (fixed) sgd_momentum<<<dim3(GRIDX, T), BLOCK>>>(tl, N / 4, 0, 1e-3f, 0.9f, 1e-4f);
    else for (int t = 0; t < T; ++t) sgd_momentum<<<dim3(GRIDX, 1), BLOCK>>>(tl, N / 4, t, 1e-3f, 0.9f, 1e-4f);  // ROOT
  }, reps_of(argc, argv));
  report("ho4_sgd_pertensor_nm", fixed, us);
}
