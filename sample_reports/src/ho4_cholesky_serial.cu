// PROFILE_LAUNCHES: 16
// Batched dense Cholesky (MAGMA potrf_batched-shaped) of 16 independent 64x64 SPD covariance
// matrices (one per Gaussian-process output / Kalman filter track). One 64-thread block (2 warps)
// factors one matrix in shared memory, right-looking: per column k, thread k takes sqrt of the
// pivot, threads > k scale column k, then every thread updates its column t of the trailing
// lower triangle (rows i > k, guarded i >= t). 64 columns x 3 barriers and ~2000 dependent
// LDS -> FFMA -> STS steps: one block is a few tens of microseconds of latency-bound work on one
// SM, and uses 2 of that SM's 64 warp slots.
// bad: the host loop over matrices: 16 launches of potrf64<<<1, 64>>>, one matrix each; each
// launch runs one block on one SM while 131 SMs idle; the launches serialize in the stream.
// fixed: one launch potrf64<<<16, 64>>> (blockIdx.x = matrix): the 16 factorizations run
// concurrently on 16 SMs; the sequence takes about one factorization's time.
// SASS (sm_90, -O3): the k loop stays a loop; the trailing-update i loop is unrolled by 4 with
// predicated (@P) LDS/FFMA/STS for the i >= t guard; MUFU.RSQ-based sqrt + FFMA fixups for the
// pivot and a MUFU.RCP-based IEEE divide (slow path via CALL.REL) for the column scaling.
// Expected gain ~12-16x (16 serial ~30 us launches vs one). Bit-identical output (same kernel).
#include "sample.cuh"
#include <cmath>
const int N = 64, NMAT = 16, P = N + 1;
__global__ void __launch_bounds__(N) potrf64(const float* __restrict__ A, float* __restrict__ L, int mat0) {
  __shared__ float a[N * P];
  const int m = mat0 + blockIdx.x, t = threadIdx.x;
  const float* src = A + (size_t)m * N * N;
  for (int i = 0; i < N; ++i) a[i * P + t] = src[i * N + t];
  __syncthreads();
  for (int k = 0; k < N; ++k) {
    if (t == k) a[k * P + k] = sqrtf(a[k * P + k]);
    __syncthreads();
    if (t > k) a[t * P + k] = a[t * P + k] / a[k * P + k];
    __syncthreads();
    const float ltk = a[t * P + k];
    for (int i = k + 1; i < N; ++i)
      if (t > k && i >= t) a[i * P + t] -= a[i * P + k] * ltk;
    __syncthreads();
  }
  float* dst = L + (size_t)m * N * N;
  for (int i = 0; i < N; ++i) dst[i * N + t] = t <= i ? a[i * P + t] : 0.f;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  // A = M M^T / N + I per matrix: symmetric positive definite, well conditioned
  std::vector<float> M((size_t)NMAT * N * N), A((size_t)NMAT * N * N);
  unsigned seed = 777;
  for (auto& x : M) { seed = seed * 1664525u + 1013904223u; x = (seed >> 8) * (1.0f / 16777216.0f) - 0.5f; }
  for (int m = 0; m < NMAT; ++m)
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int q = 0; q < N; ++q) s += (double)M[((size_t)m * N + i) * N + q] * M[((size_t)m * N + j) * N + q];
        A[((size_t)m * N + i) * N + j] = (float)(s / N + (i == j ? 1.0 : 0.0));
      }
  float* dA; CK(cudaMalloc(&dA, A.size() * 4));
  CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
  const size_t n_out = A.size();
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) potrf64<<<NMAT, N>>>(dA, out, 0);
    else for (int m = 0; m < NMAT; ++m) potrf64<<<1, N>>>(dA, out, m);  // ROOT
  }, reps_of(argc, argv));
  report("ho4_cholesky_serial", fixed, us);
}
