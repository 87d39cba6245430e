// Brute-force chi-square grid search (astronomy: fitting a quadratic continuum
// y = a + b x + c x^2 to a 512-point spectrum with per-point errors), in double precision as such
// fitting code usually is: one thread per parameter triple on a 64^3 grid (262144 models), each
// thread loops over the spectrum (staged in shared memory as x, y, 1/sigma) and accumulates
// chi2 += pow((y_k - model_k) / sigma_k, 2.0). 134 M residuals; no DRAM traffic to speak of.
// bad: pow(r, 2.0) -- CUDA's double pow is a full log/exp routine, not a multiply: per residual
// an inline part (DSETP/BRA tests for r == 0, |r| == inf, nan, r == 1; DADD r + 2 on the special
// paths) and a CALL.REL.NOINC to a 178-instruction subroutine that computes log|r| in
// double-double and exp(2 log|r|): 41 DFMA + 32 DADD + 9 DMUL (+ MUFU.RCP64H) -- ~90 FP64-pipe
// instructions per residual where 1 DMUL would do. The FP64 pipe (64 lanes per SM, 2 warp-
// instructions per cycle) saturates on the pow routine.
// fixed: r * r (one DMUL); the model's Horner DFMAs and the chi2 DADD are the only other FP64 work.
// SASS (sm_90, -O3): bad: the k loop is unrolled by 4; each of the 4 bodies has 3 LDS.64, the
// model arithmetic, the pow tests and its own CALL.REL.NOINC to the shared subroutine (32 regs);
// fixed: the same loop unrolled by 4 with the x/y/w loads merged into LDS.128 pairs, ~7 FP64
// instructions per residual (40 regs).
// Expected gain ~8-12x (FP64-pipe-bound pow -> a handful of FP64 ops per residual).
// Results agree to a few ulp in the chi2 sums (pow(r, 2.0) is not guaranteed to be the correctly
// rounded r*r), so not bit-identical.
#include "sample.cuh"
#include <cmath>
const int NP = 512, G = 64;
__global__ void __launch_bounds__(256) chi2_grid(const double* __restrict__ spec, double* __restrict__ chi2,
                                                 double a0, double da, double b0, double db, double c0, double dc) {
  __shared__ double xs[NP], ys[NP], ws[NP];
  for (int k = threadIdx.x; k < NP; k += 256) { xs[k] = spec[k]; ys[k] = spec[NP + k]; ws[k] = spec[2 * NP + k]; }
  __syncthreads();
  const int g = blockIdx.x * 256 + threadIdx.x, ia = g / (G * G), ib = (g / G) % G, ic = g % G;
  const double a = a0 + ia * da, b = b0 + ib * db, c = c0 + ic * dc;
  double s = 0.0;
  for (int k = 0; k < NP; ++k) {
    const double x = xs[k], r = (ys[k] - (a + x * (b + x * c))) * ws[k];
    s += pow(r, 2.0);  // ROOT
  }
  chi2[g] = s;
}
__global__ void __launch_bounds__(256) chi2_grid_mul(const double* __restrict__ spec, double* __restrict__ chi2,
                                                     double a0, double da, double b0, double db, double c0, double dc) {
  __shared__ double xs[NP], ys[NP], ws[NP];
  for (int k = threadIdx.x; k < NP; k += 256) { xs[k] = spec[k]; ys[k] = spec[NP + k]; ws[k] = spec[2 * NP + k]; }
  __syncthreads();
  const int g = blockIdx.x * 256 + threadIdx.x, ia = g / (G * G), ib = (g / G) % G, ic = g % G;
  const double a = a0 + ia * da, b = b0 + ib * db, c = c0 + ic * dc;
  double s = 0.0;
  for (int k = 0; k < NP; ++k) {
    const double x = xs[k], r = (ys[k] - (a + x * (b + x * c))) * ws[k];
    s += r * r;
  }
  chi2[g] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<double> h(3 * NP);
  unsigned seed = 1010;
  for (int k = 0; k < NP; ++k) {
    seed = seed * 1664525u + 1013904223u; const double noise = ((seed >> 8) / 16777216.0 - 0.5) * 0.2;
    const double x = -1.0 + 2.0 * k / (NP - 1);
    h[k] = x; h[NP + k] = 1.0 + 0.5 * x - 0.3 * x * x + noise; h[2 * NP + k] = 1.0 / (0.05 + 0.05 * (k % 7));
  }
  double* spec; CK(cudaMalloc(&spec, h.size() * 8));
  CK(cudaMemcpy(spec, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
  const size_t n_out = (size_t)G * G * G;
  double* out; CK(cudaMalloc(&out, n_out * 8));
  const double a0 = 0.5, da = 1.0 / G, b0 = 0.0, db = 1.0 / G, c0 = -0.6, dc = 0.6 / G;
  float us = median_us([&] {
    if (fixed) chi2_grid_mul<<<n_out / 256, 256>>>(spec, out, a0, da, b0, db, c0, dc);
    else chi2_grid<<<n_out / 256, 256>>>(spec, out, a0, da, b0, db, c0, dc);
  }, reps_of(argc, argv));
  report("ho4_chi2_grid_pow", fixed, us);
}
