// fp64-conversion. bad: exp(-0.5 * d * d) on a float d is the double exp with a double
// argument: F2F, DMUL and a long DFMA sequence per sample. fixed: expf(-0.5f * d * d).
#include "sample.cuh"
const int N = 132 * 1024, M = 512;
template <bool FIXED>
__global__ void kde(const float* __restrict__ q, const float* __restrict__ s, float* __restrict__ out, float inv_h) {
  __shared__ float ss[M];
  for (int j = threadIdx.x; j < M; j += blockDim.x) ss[j] = s[j];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = q[i], acc = 0.f;
  for (int j = 0; j < M; ++j) {
    float d = (x - ss[j]) * inv_h;
    if (FIXED) acc += expf(-0.5f * d * d);
    else acc += exp(-0.5 * d * d);  // ROOT: -0.5 is a double, so is exp
  }
  out[i] = acc * inv_h;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* q = device_fill<float>(N, 41);
  float* s = device_fill<float>(M, 42);
  float* out; CK(cudaMalloc(&out, N * 4));
  float us = median_us([&] {
    if (fixed) kde<true><<<N / 128, 128>>>(q, s, out, 8.f);
    else kde<false><<<N / 128, 128>>>(q, s, out, 8.f);
  }, reps_of(argc, argv));
  report("kde_exp", fixed, us);
}
