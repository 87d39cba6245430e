// The GPU's rate of starting thread blocks: an almost empty kernel (thread 0 of each block
// writes one word) launched with many blocks of each size, median of 20 launches each. The
// time per block per SM once the grid is large is the cost of starting (and retiring) a block
// on an SM, which bounds kernels made of many tiny blocks (specs/arch: block_start_ns).
// Build: nvcc -arch=sm_90 -O3 -o block_dispatch block_dispatch.cu; run: ./block_dispatch
#include <algorithm>
#include <cstdio>
#include <vector>
__global__ void touch(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int max_blocks = 1 << 21;
  int* out;
  cudaMalloc(&out, max_blocks * sizeof(int));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::printf("sms %d\nthreads blocks us ns_per_block_per_sm\n", sms);
  for (int threads : {16, 32, 64, 128, 256, 1024})
    for (int blocks : {1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 21}) {
      touch<<<blocks, threads>>>(out);
      cudaDeviceSynchronize();
      std::vector<float> t;
      for (int r = 0; r < 20; ++r) {
        cudaEventRecord(a);
        touch<<<blocks, threads>>>(out);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1000.f);
      }
      std::sort(t.begin(), t.end());
      float us = t[t.size() / 2];
      std::printf("%d %d %.2f %.2f\n", threads, blocks, us, us * 1000.f / ((float)blocks / sms));
    }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
