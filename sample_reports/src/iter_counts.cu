// warp-divergence. bad: each element runs its own number of refinement steps (1 in 16 needs 1024,
// the rest 32), so nearly every warp runs 1024 steps with most lanes masked. fixed: the host
// sorts the work items by step count before the launch, so each warp's lanes agree (same kernel).
#include "sample.cuh"
const int N = 132 * 2048 * 2, LONG = 1024, SHORT = 32;
__global__ void refine(const int* __restrict__ steps, const float* __restrict__ x0, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x0[i];
  int n = steps[i];
  for (int k = 0; k < n; ++k) v = __sinf(v) * 0.9f + 0.05f;  // ROOT: trip count differs between lanes
  out[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<int> n(N);
  std::vector<float> x(N);
  unsigned s = 81;
  for (int i = 0; i < N; ++i) {
    s = s * 1664525u + 1013904223u;
    n[i] = (s >> 28) == 0 ? LONG : SHORT;
    x[i] = (s & 0xffff) * (1.f / 65536.f);
  }
  if (fixed) {  // bucket by cost: long items first, each keeping its own input value
    std::vector<int> idx(N);
    for (int i = 0; i < N; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return n[a] > n[b]; });
    std::vector<int> n2(N); std::vector<float> x2(N);
    for (int i = 0; i < N; ++i) { n2[i] = n[idx[i]]; x2[i] = x[idx[i]]; }
    n.swap(n2); x.swap(x2);
  }
  int* dn; float* dx; float* out;
  CK(cudaMalloc(&dn, N * 4)); CK(cudaMalloc(&dx, N * 4)); CK(cudaMalloc(&out, N * 4));
  CK(cudaMemcpy(dn, n.data(), N * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), N * 4, cudaMemcpyHostToDevice));
  float us = median_us([&] { refine<<<N / 256, 256>>>(dn, dx, out); }, reps_of(argc, argv));
  report("iter_counts", fixed, us);
}
