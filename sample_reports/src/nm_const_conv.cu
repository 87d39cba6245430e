// Near miss for constant-cache-divergence: a 5x5 convolution per channel with the filters in
// __constant__ memory, indexed only by the loop counters and blockIdx.z, so every lane of a warp
// reads the same constant address (one broadcast per tap). Both variants run the same kernel.
#include "sample.cuh"
const int W = 2048, H = 2048, CH = 4, R = 2, PW = W + 2 * R;
__constant__ float c_filt[CH][2 * R + 1][2 * R + 1];
__global__ void conv5x5(const float* __restrict__ in, float* __restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, ch = blockIdx.z;
  const float* src = in + (size_t)ch * (H + 2 * R) * PW;
  float s = 0.f;
  for (int dy = 0; dy <= 2 * R; ++dy)
    for (int dx = 0; dx <= 2 * R; ++dx)
      s += c_filt[ch][dy][dx] * src[(size_t)(y + dy) * PW + x + dx];  // warp-uniform constant index
  out[((size_t)ch * H + y) * W + x] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* f = device_fill<float>(CH * (2 * R + 1) * (2 * R + 1), 113);
  CK(cudaMemcpyToSymbol(c_filt, f, sizeof(c_filt), 0, cudaMemcpyDeviceToDevice));
  float* in = device_fill<float>((size_t)CH * (H + 2 * R) * PW, 127);
  float* out; CK(cudaMalloc(&out, (size_t)CH * H * W * 4));
  dim3 block(32, 8), grid(W / 32, H / 8, CH);
  float us = median_us([&] { conv5x5<<<grid, block>>>(in, out); }, reps_of(argc, argv));
  report("nm_const_conv", fixed, us);
}
