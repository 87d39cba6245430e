// Edge-preserving smoothing of a 1024 x 1024 float image: a bilateral-style filter over a 7 x 7
// window (clamped borders) whose weight is a tricube spatial falloff times a Gaussian range term,
// w = (1 - r^3)^3 * exp(-d^2 k), r = |(dx, dy)| / (R + 1) (the run-time inverse radius keeps r from
// folding to a constant), d = neighbour - centre. One output pixel per thread, 32 x 8 blocks, the
// dy/dx loops as written in the source; built without --use_fast_math.
// bad: the weight is written with powf: powf(1 - powf(r, 3.0f), 3.0f) * expf(-powf(d, 2.0f) * k).
// Three calls of the general accurate powf per tap (nvcc does not specialize the literal integer
// exponents): log2 of |x| in extended precision (MUFU.RCP + polynomial), times the exponent, exp2
// by polynomial and exponent scaling, plus the tests and selects for zero, negative, infinite and
// NaN bases and integer exponents: the rolled tap loop body is ~420 SASS instructions, ~49 of them
// per tap for everything but the three powf. The filter is issue-bound on the powf code.
// fixed: r3 = r * r * r, t = 1 - r3, t * t * t and d * d (4 FMUL/FADD instead of three pow calls);
// the expf stays.
// Expected gain ~4-7x (fixed: ~55 instructions per tap with the dx loop unrolled; the remaining
// cost is the expf, the window loads from L1 and the accumulation). Results agree to within the
// powf error (a few ulp), not bit-identical.
#include "sample.cuh"
const int W = 1024, H = 1024, R = 3;
template <bool MUL>
__global__ void __launch_bounds__(256) bilateral_tricube(const float* __restrict__ in, float* __restrict__ out,
                                                         float inv_radius, float range_k) {
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
  const float c = in[y * W + x];
  float num = 0.f, den = 0.f;
  for (int dy = -R; dy <= R; ++dy) {
    const int yy = min(max(y + dy, 0), H - 1);
    for (int dx = -R; dx <= R; ++dx) {
      const int xx = min(max(x + dx, 0), W - 1);
      const float v = in[yy * W + xx];
      const float r = sqrtf((float)(dx * dx + dy * dy)) * inv_radius;
      const float d = v - c;
      float wgt;
      if (!MUL) {
        wgt = powf(1.0f - powf(r, 3.0f), 3.0f) * expf(-powf(d, 2.0f) * range_k);  // ROOT
      } else {
        const float t = 1.0f - r * r * r;
        wgt = t * t * t * expf(-(d * d) * range_k);
      }
      num = fmaf(wgt, v, num);
      den += wgt;
    }
  }
  out[y * W + x] = num / den;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)W * H, 131);
  float* out; CK(cudaMalloc(&out, (size_t)W * H * sizeof(float)));
  const dim3 grid(W / 32, H / 8), block(32, 8);
  const float inv_radius = 1.0f / (R + 1), range_k = 1.0f / (2.0f * 0.2f * 0.2f);
  float us = median_us([&] {
    if (fixed) bilateral_tricube<true><<<grid, block>>>(in, out, inv_radius, range_k);
    else bilateral_tricube<false><<<grid, block>>>(in, out, inv_radius, range_k);
  }, reps_of(argc, argv));
  report("ho3_gaussian_pow2", fixed, us);
}
