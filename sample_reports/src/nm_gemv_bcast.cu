// Near miss for global-uncoalesced: a column-major matrix-vector product. Lanes read A[k][i] at
// consecutive i (coalesced) and all lanes read the same x[k] (one broadcast sector): nothing wasted.
// Both variants run the same kernel.
#include "sample.cuh"
const int N = 1 << 16, K = 1024;
__global__ void gemv_colmajor(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  for (int k = 0; k < K; ++k) s += A[(size_t)k * N + i] * x[k];  // x[k]: same address in every lane
  y[i] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)N * K, 23);
  float* x = device_fill<float>(K, 29);
  float* y; CK(cudaMalloc(&y, N * 4));
  float us = median_us([&] { gemv_colmajor<<<N / 256, 256>>>(A, x, y); }, reps_of(argc, argv));
  report("nm_gemv_bcast", fixed, us);
}
