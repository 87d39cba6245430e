// near miss for tail-effect: 40.5 waves of short equal blocks: the partial last wave costs about
// 1% of the time. The 'fixed' variant resizes the grid to exactly one wave of persistent blocks
// that stride over the same tiles; the busiest SM still runs 41 tiles, so nothing is gained.
#include "sample.cuh"
const int THREADS = 256, ROUNDS = 256;
__global__ void logistic_tiles(const float* __restrict__ x, float* __restrict__ y, int tiles) {
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int i = tile * THREADS + threadIdx.x;
    float v = x[i];
    for (int r = 0; r < ROUNDS; ++r) v = 3.9f * v * (1.f - v);
    y[i] = v;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int dev, sms, per_sm;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, logistic_tiles, THREADS, 0));
  int wave = sms * per_sm, tiles = wave * 40 + wave / 2;
  float* x = device_fill<float>((size_t)tiles * THREADS, 107);
  float* y; CK(cudaMalloc(&y, (size_t)tiles * THREADS * 4));
  int blocks = fixed ? wave : tiles;
  float us = median_us([&] { logistic_tiles<<<blocks, THREADS>>>(x, y, tiles); }, reps_of(argc, argv));
  report("nm_manywaves", fixed, us);
}
