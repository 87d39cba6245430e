// many_kernels: a small application that launches many kernels, for drgpu's analysis-speed
// benchmark (benchmarks/bench_analyze.py). Five kernels of different shape (streaming,
// strided gather, shared-memory reduction with barriers, a dependent FMA chain from a
// template, global atomics) are launched in turn, ITERS times each (default 250), so a
// profile of the whole run holds 5 * ITERS launches of five functions. Build:
//   nvcc -arch=sm_90 -O3 -lineinfo -o many_kernels many_kernels.cu
// Usage: many_kernels [ITERS]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void strided_gather(int n, int stride, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[(long long)i * stride % n];
}

__global__ void block_reduce(int n, const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <int STEPS>
__global__ void poly_chain(int n, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], acc = 0.0f;
  for (int k = 0; k < STEPS; ++k) acc = acc * v + 1.0001f;
  y[i] = acc;
}

__global__ void histogram(int n, const float* __restrict__ x, unsigned* __restrict__ bins, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = static_cast<int>(x[i] * nbins) % nbins;
    atomicAdd(&bins[b], 1u);
  }
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 250;
  const int n = 1 << 21, threads = 256, blocks = (n + threads - 1) / threads, nbins = 64;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
  float *x, *y, *part;
  unsigned* bins;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&part, blocks * sizeof(float)));
  CHECK(cudaMalloc(&bins, nbins * sizeof(unsigned)));
  CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  CHECK(cudaMemset(bins, 0, nbins * sizeof(unsigned)));
  for (int it = 0; it < iters; ++it) {
    saxpy<<<264, threads>>>(n, 0.5f, x, y);
    strided_gather<<<blocks, threads>>>(n, 33, x, y);
    block_reduce<<<blocks, threads>>>(n, y, part);
    poly_chain<64><<<blocks, threads>>>(n, x, y);
    histogram<<<blocks, threads>>>(n, x, bins, nbins);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  float first;
  CHECK(cudaMemcpy(&first, part, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("many_kernels: %d launches, part[0]=%.3f\n", 5 * iters, first);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(part));
  CHECK(cudaFree(bins));
  return 0;
}
