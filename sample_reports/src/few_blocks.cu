// grid-too-small. bad: a grid-stride loop launched with 16 blocks leaves most of the 132 SMs
// idle. fixed: the same kernel launched with enough blocks to fill every SM several times.
#include "sample.cuh"
const size_t N = (size_t)1 << 25;
__global__ void saxpy_stride(float a, const float* __restrict__ x, float* __restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];  // ROOT: only gridDim.x * blockDim.x threads share the work
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 13);
  float* y = device_fill<float>(N, 17);
  int blocks = fixed ? 132 * 8 : 16;  // ROOT-LAUNCH
  float us = median_us([&] { saxpy_stride<<<blocks, 256>>>(2.f, x, y, N); }, reps_of(argc, argv));
  report("few_blocks", fixed, us);
}
