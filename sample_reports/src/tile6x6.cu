// partial-warps (2-D blocks). bad: 6x6 thread blocks: 36 threads fill one warp and 4 lanes of a
// second, so 44% of the issued lanes are empty (and 32 blocks/SM cap the SM at 1152 threads).
// fixed: 32x8 blocks over the same image.
#include "sample.cuh"
const int W = 1536, H = 1536, ROUNDS = 128;
__global__ void shade(unsigned* __restrict__ img, unsigned seed) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned h = (y * W + x) ^ seed;
  for (int r = 0; r < ROUNDS; ++r) { h ^= h >> 15; h *= 0x2c1b3c6du; h ^= h >> 12; h += 0x297a2d39u; }
  img[y * W + x] = h;  // ROOT: each 36-thread block runs two warps, the second with 4 of 32 lanes
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* img; CK(cudaMalloc(&img, (size_t)W * H * 4));
  dim3 block = fixed ? dim3(32, 8) : dim3(6, 6);  // ROOT-LAUNCH
  dim3 grid(W / block.x, H / block.y);
  float us = median_us([&] { shade<<<grid, block>>>(img, 12345u); }, reps_of(argc, argv));
  report("tile6x6", fixed, us);
}
