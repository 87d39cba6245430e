// Shared harness for the drgpu sample programs: error checks, event timing, argument parsing.
// Every program takes: VARIANT (bad|fixed) [REPS]. It launches the kernel once (warm-up, the
// launch ncu profiles with -c 1), then REPS timed launches, and prints the median in microseconds.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

template <typename F>
float median_us(F launch, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  launch(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  return t.empty() ? 0.f : t[t.size() / 2];
}
inline bool want_fixed(int argc, char** argv) { return argc > 1 && strcmp(argv[1], "fixed") == 0; }
inline int reps_of(int argc, char** argv) { return argc > 2 ? atoi(argv[2]) : 20; }
inline void report(const char* name, bool fixed, float us) {
  printf("%s %s %.2f us\n", name, fixed ? "fixed" : "bad", us);
}
template <typename T>
T* device_fill(size_t n, unsigned seed) {
  std::vector<T> h(n);
  for (auto& x : h) { seed = seed * 1664525u + 1013904223u; x = (T)((seed >> 8) * (1.0f / 16777216.0f)); }
  T* d; CK(cudaMalloc(&d, n * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
inline unsigned* device_keys(size_t n, unsigned seed) {
  std::vector<unsigned> h(n);
  for (auto& x : h) { seed = seed * 1664525u + 1013904223u; x = seed >> 7; }
  unsigned* d; CK(cudaMalloc(&d, n * 4));
  CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
  return d;
}
