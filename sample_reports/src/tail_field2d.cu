// tail-effect (2-D grid, double). bad: a 16x10 grid of 32x32 blocks (each thread holds four
// pixels: >32 registers, so one block per SM) is 160 equal blocks on 132 SMs: 1.2 waves, the
// second wave runs on 28 SMs. fixed: 16x16 blocks: 640 blocks, several per SM, in one wave.
#include "sample.cuh"
const int W = 512, H = 1280, PIX = 4, SOURCES = 256;
__global__ void __launch_bounds__(1024) field_map(const double2* __restrict__ pos, const double* __restrict__ q, double* __restrict__ phi) {
  extern __shared__ double2 sp[];
  double* sq = (double*)(sp + blockDim.x * blockDim.y);
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  double px = x * (1.0 / W), acc[PIX] = {};
  for (int s0 = 0; s0 < SOURCES; s0 += n) {
    int m = min(n, SOURCES - s0);  // both block shapes stage and sum the same SOURCES sources
    if (t < m) { sp[t] = pos[s0 + t]; sq[t] = q[s0 + t]; }
    __syncthreads();
    for (int s = 0; s < m; ++s) {
      double dx2 = (px - sp[s].x) * (px - sp[s].x) + 1e-4;
#pragma unroll
      for (int k = 0; k < PIX; ++k) {
        double dy = (y + k * (H / PIX)) * (1.0 / H) - sp[s].y;
        acc[k] += sq[s] * rsqrt(dx2 + dy * dy);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int k = 0; k < PIX; ++k) phi[(y + k * (H / PIX)) * W + x] = acc[k];  // ROOT: 160 equal blocks at one block per SM
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double2* pos = (double2*)device_fill<double>(SOURCES * 2, 83);
  double* q = device_fill<double>(SOURCES, 89);
  double* phi; CK(cudaMalloc(&phi, W * H * 8));
  int side = fixed ? 16 : 32;  // ROOT-LAUNCH
  dim3 block(side, side), grid(W / side, H / PIX / side);
  float us = median_us([&] { field_map<<<grid, block, side * side * 24>>>(pos, q, phi); }, reps_of(argc, argv));
  report("tail_field2d", fixed, us);
}
