// near miss for grid-too-small: a persistent grid-stride kernel whose grid is small (a few
// hundred blocks) by design, sized from the occupancy API so that every SM is filled.
#include "sample.cuh"
const size_t N = (size_t)1 << 25;
const int THREADS = 1024;
__global__ void scale_persist(const double* __restrict__ x, double* __restrict__ y, double a, double b) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x)
    y[i] = a * x[i] + b;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* x = device_fill<double>(N, 37);
  double* y; CK(cudaMalloc(&y, N * 8));
  int dev, sms, per_sm;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scale_persist, THREADS, 0));
  int blocks = sms * per_sm;  // fills every SM to its occupancy limit (264 blocks of 1024 on an H100)
  float us = median_us([&] { scale_persist<<<blocks, THREADS>>>(x, y, 3.0, 1.0); }, reps_of(argc, argv));
  report("nm_persistent", fixed, us);
}
