// NEAR MISS. Segmented sort: 4096 independent segments of 2048 floats sorted ascending in shared
// memory with a bitonic network, one 1024-thread block per segment, each thread owns one
// compare-exchange pair per step; the 66 (k, j) steps are fully unrolled, a __syncthreads after each.
// Per step thread t works on i = 2t - (t & (j-1)) and p = i + j; the direction guard up = (i & k) == 0
// splits the lanes into an ascending and a descending half (within a warp while k <= 32), which looks
// like divergence, but both halves do identical work: min and max of the pair, then two stores whose
// order is chosen by the guard.
// bad: the direction applied with selects (`s[i] = up ? lo : hi; s[p] = up ? hi : lo;`): FMNMX x2,
// SEL x2, no predicated-off lanes, no branch.
// 'fixed': the same step written as `if (up) {...} else {...}`: nvcc if-converts the two-store bodies
// into the same selects (or predicated stores with complementary predicates, every lane storing
// twice either way), so both variants issue the same work with every lane busy.
// Expected ~1.0x: there are no idle lanes to recover; the kernel is bound by the 66 barrier steps
// and shared-memory traffic (the j < 32 steps have 2-way bank conflicts in both variants).
// Identical output.
#include "sample.cuh"
const int SEG = 2048, BLOCK = 1024, NSEG = 4096;
template <bool BRANCH>
__global__ void __launch_bounds__(BLOCK) bitonic_sort2048(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[SEG];
  const int t = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * SEG;
  s[t] = in[base + t];
  s[t + BLOCK] = in[base + t + BLOCK];
  __syncthreads();
#pragma unroll
  for (int k = 2; k <= SEG; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const int i = 2 * t - (t & (j - 1));  // lower element of this thread's pair
      const int p = i + j;
      const float a = s[i], b = s[p];
      const float lo = fminf(a, b), hi = fmaxf(a, b);
      const bool up = (i & k) == 0;
      if (!BRANCH) {
        s[i] = up ? lo : hi; s[p] = up ? hi : lo;  // ROOT
      } else {
        if (up) { s[i] = lo; s[p] = hi; } else { s[i] = hi; s[p] = lo; }
      }
      __syncthreads();
    }
  }
  out[base + t] = s[t];
  out[base + t + BLOCK] = s[t + BLOCK];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)NSEG * SEG, 23);
  float* out; CK(cudaMalloc(&out, (size_t)NSEG * SEG * sizeof(float)));
  float us = median_us([&] {
    if (fixed) bitonic_sort2048<true><<<NSEG, BLOCK>>>(in, out);
    else bitonic_sort2048<false><<<NSEG, BLOCK>>>(in, out);
  }, reps_of(argc, argv));
  report("ho3_bitonic_guard_nm", fixed, us);
}
