// grid-too-small (2-D). bad: a 2-D grid-stride box blur launched on a fixed 4x4 grid of
// 32x8 blocks: 16 blocks for 132 SMs. fixed: one 32x8 block per 32x8 tile of the image.
#include "sample.cuh"
const int W = 2048, H = 2048;
__global__ void box_blur(const float* __restrict__ img, float* __restrict__ out) {
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < H; y += gridDim.y * blockDim.y)
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < W; x += gridDim.x * blockDim.x) {
      float s = 0.f;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int yy = min(max(y + dy, 0), H - 1), xx = min(max(x + dx, 0), W - 1);
          s += img[yy * W + xx];
        }
      out[y * W + x] = s * (1.f / 9.f);  // ROOT: each of the 4096 threads walks 1024 pixels
    }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* img = device_fill<float>((size_t)W * H, 29);
  float* out; CK(cudaMalloc(&out, (size_t)W * H * 4));
  dim3 block(32, 8), grid = fixed ? dim3(W / 32, H / 8) : dim3(4, 4);  // ROOT-LAUNCH
  float us = median_us([&] { box_blur<<<grid, block>>>(img, out); }, reps_of(argc, argv));
  report("blur_grid2d", fixed, us);
}
