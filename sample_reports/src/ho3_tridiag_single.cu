// Parallel cyclic reduction (PCR) for tridiagonal systems, as in the implicit line sweeps of an
// ADI heat solver: 128 independent systems of n = 1024 unknowns (a_i x_{i-1} + b_i x_i +
// c_i x_{i+1} = d_i, diagonally dominant, r varies per line), one 1024-thread block per system:
// the system is loaded into shared memory (16 KB), 10 PCR steps (each: read the i +- s
// neighbours, two divisions, barrier, write, barrier), then x_i = d_i / b_i.
// bad: the host solves the lines one at a time, `for (s...) pcr_solve<<<1, 1024>>>(..., s)`:
// 128 launches of a single block, each occupying one SM for a few microseconds (load latency,
// 20 barriers) while 131 SMs idle; the sequence is timed as a whole.
// fixed: the same kernel launched once with 128 blocks (one system per block, blockIdx.x picks
// the system): all 128 systems run concurrently on 128 SMs. Expected gain ~50-100x for the
// sequence (128 serial ~5-7 us launches vs one launch of about the same length). Bit-identical.
#include "sample.cuh"
#include <cmath>
const int N = 1024, NS = 128;
__global__ void __launch_bounds__(N) pcr_solve(const float* __restrict__ a, const float* __restrict__ b,
                                               const float* __restrict__ c, const float* __restrict__ d,
                                               float* __restrict__ x, int sys0) {
  __shared__ float sa[N], sb[N], sc[N], sd[N];
  const int i = threadIdx.x;
  const size_t off = (size_t)(sys0 + blockIdx.x) * N;
  sa[i] = a[off + i]; sb[i] = b[off + i]; sc[i] = c[off + i]; sd[i] = d[off + i];
  __syncthreads();
  for (int s = 1; s < N; s <<= 1) {
    float na = 0.f, nb = sb[i], nc = 0.f, nd = sd[i];
    const int im = i - s, ip = i + s;
    if (im >= 0) {
      const float al = -sa[i] / sb[im];
      na = al * sa[im]; nb = fmaf(al, sc[im], nb); nd = fmaf(al, sd[im], nd);
    }
    if (ip < N) {
      const float ga = -sc[i] / sb[ip];
      nc = ga * sc[ip]; nb = fmaf(ga, sa[ip], nb); nd = fmaf(ga, sd[ip], nd);
    }
    __syncthreads();
    sa[i] = na; sb[i] = nb; sc[i] = nc; sd[i] = nd;
    __syncthreads();
  }
  x[off + i] = sd[i] / sb[i];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t tot = (size_t)NS * N;
  std::vector<float> ha(tot), hb(tot), hc(tot), hd(tot);
  unsigned seed = 304;
  for (int s = 0; s < NS; ++s) {
    const float r = 0.5f + 0.25f * (s % 7);
    for (int i = 0; i < N; ++i) {
      const size_t k = (size_t)s * N + i;
      ha[k] = i == 0 ? 0.f : -r; hc[k] = i == N - 1 ? 0.f : -r; hb[k] = 1.f + 2.f * r;
      seed = seed * 1664525u + 1013904223u; hd[k] = (seed >> 8) * (1.0f / 16777216.0f);
    }
  }
  float *a, *b, *c, *d, *x;
  CK(cudaMalloc(&a, tot * 4)); CK(cudaMalloc(&b, tot * 4)); CK(cudaMalloc(&c, tot * 4));
  CK(cudaMalloc(&d, tot * 4)); CK(cudaMalloc(&x, tot * 4));
  CK(cudaMemcpy(a, ha.data(), tot * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(b, hb.data(), tot * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(c, hc.data(), tot * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(d, hd.data(), tot * 4, cudaMemcpyHostToDevice));
  float us = median_us([&] {
    if (fixed) pcr_solve<<<NS, N>>>(a, b, c, d, x, 0);
    else for (int s = 0; s < NS; ++s) pcr_solve<<<1, N>>>(a, b, c, d, x, s);  // ROOT
  }, reps_of(argc, argv));
  {  // check the last system against the Thomas algorithm on the host
    const int s = NS - 1;
    std::vector<float> hx(N), cp(N), dp(N);
    CK(cudaMemcpy(hx.data(), x + (size_t)s * N, N * 4, cudaMemcpyDeviceToHost));
    const float* A = &ha[(size_t)s * N]; const float* B = &hb[(size_t)s * N];
    const float* C = &hc[(size_t)s * N]; const float* D = &hd[(size_t)s * N];
    cp[0] = C[0] / B[0]; dp[0] = D[0] / B[0];
    for (int i = 1; i < N; ++i) { const float m = B[i] - A[i] * cp[i - 1]; cp[i] = C[i] / m; dp[i] = (D[i] - A[i] * dp[i - 1]) / m; }
    float err = 0.f, xi = dp[N - 1];
    err = fmaxf(err, fabsf(xi - hx[N - 1]));
    for (int i = N - 2; i >= 0; --i) { xi = dp[i] - cp[i] * xi; err = fmaxf(err, fabsf(xi - hx[i])); }
    if (!(err < 1e-3f)) fprintf(stderr, "check failed: max err %g\n", err);
  }
  report("ho3_tridiag_single", fixed, us);
}

// PROFILE_LAUNCHES: 128
