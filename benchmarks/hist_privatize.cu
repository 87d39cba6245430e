// Timing of the many-kernel benchmark's histogram (benchmarks/many_kernels.cu: 2^21 floats, 64
// bins, one global atomicAdd per element) against the same histogram privatized per block in
// shared memory (64 shared bins, one global atomicAdd per bin per block). Same input as
// many_kernels.cu; both results are checked equal. Prints the median of 50 launches of each.
// Build: nvcc -arch=sm_90 -O3 -o hist_privatize hist_privatize.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA error %s\n", cudaGetErrorString(e_)); std::exit(1); } } while (0)

__global__ void histogram(int n, const float* __restrict__ x, unsigned* __restrict__ bins, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = static_cast<int>(x[i] * nbins) % nbins;
    atomicAdd(&bins[b], 1u);
  }
}

__global__ void histogram_private(int n, const float* __restrict__ x, unsigned* __restrict__ bins, int nbins) {
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&local[static_cast<int>(x[i] * nbins) % nbins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

template <typename F>
float median_us(F launch) {
  cudaEvent_t a, b; CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
  launch(); CHECK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < 50; ++r) {
    CHECK(cudaEventRecord(a)); launch(); CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b));
    float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const int n = 1 << 21, threads = 256, blocks = (n + threads - 1) / threads, nbins = 64;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
  float* x; unsigned *b1, *b2;
  CHECK(cudaMalloc(&x, n * sizeof(float))); CHECK(cudaMalloc(&b1, nbins * 4)); CHECK(cudaMalloc(&b2, nbins * 4));
  CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float global_us = median_us([&] { histogram<<<blocks, threads>>>(n, x, b1, nbins); });
  float private_us = median_us([&] { histogram_private<<<blocks, threads, nbins * 4>>>(n, x, b2, nbins); });
  CHECK(cudaMemset(b1, 0, nbins * 4)); CHECK(cudaMemset(b2, 0, nbins * 4));
  histogram<<<blocks, threads>>>(n, x, b1, nbins);
  histogram_private<<<blocks, threads, nbins * 4>>>(n, x, b2, nbins);
  std::vector<unsigned> r1(nbins), r2(nbins);
  CHECK(cudaMemcpy(r1.data(), b1, nbins * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(r2.data(), b2, nbins * 4, cudaMemcpyDeviceToHost));
  std::printf("histogram global atomics %.2f us\nhistogram privatized %.2f us\nspeedup %.2fx\nresults %s\n", global_us, private_us,
              global_us / private_us, r1 == r2 ? "equal" : "DIFFER");
  return r1 == r2 ? 0 : 1;
}
