// NEAR MISS. Magnitude spectrum of an FFT output: |z| = sqrt(re^2 + im^2) for 2^25 complex float
// bins (256 MB in, 128 MB out), one bin per thread (8-byte float2 load, 4-byte store), loop-free,
// 256-thread blocks; built without --use_fast_math.
// bad: the square root is already written as sqrtf (not powf(x, 0.5f)): nvcc emits MUFU.RSQ, two
// FMUL.FTZ and two FFMA (the correctly rounded sqrt) behind a range test, with a never-taken
// CALL.REL to a slow path for zero/denormal/huge/inf/NaN arguments; no pow routine.
// 'fixed': the same magnitude as ss * rsqrtf(ss) (guarded for ss == 0): MUFU.RSQ + FMUL (plus the
// denormal-scaling selects of rsqrtf), what a user chasing "slow math" might write; results differ
// by at most a couple of ulp.
// Expected ~1.0x: both kernels move 384 MB at DRAM bandwidth (~125 us on an H100) and spend ~15
// instructions per 12 bytes, far from issue-bound; there is no slow math to remove, and slow-math
// should NOT be a high finding for bad.
#include "sample.cuh"
const int NBIN = 1 << 25, BLOCK = 256;
template <bool RSQ>
__global__ void __launch_bounds__(BLOCK) spectrum_magnitude(const float2* __restrict__ z, float* __restrict__ mag) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  const float2 v = z[i];
  const float ss = fmaf(v.x, v.x, v.y * v.y);
  float m;
  if (!RSQ) m = sqrtf(ss);  // ROOT
  else m = ss > 0.f ? ss * rsqrtf(ss) : 0.f;
  mag[i] = m;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* z = device_fill<float>((size_t)NBIN * 2, 141);
  float* mag; CK(cudaMalloc(&mag, (size_t)NBIN * sizeof(float)));
  float us = median_us([&] {
    if (fixed) spectrum_magnitude<true><<<NBIN / BLOCK, BLOCK>>>(reinterpret_cast<const float2*>(z), mag);
    else spectrum_magnitude<false><<<NBIN / BLOCK, BLOCK>>>(reinterpret_cast<const float2*>(z), mag);
  }, reps_of(argc, argv));
  report("ho3_pow_half_nm", fixed, us);
}
