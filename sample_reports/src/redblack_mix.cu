// warp-divergence. bad: red and black cells of a 2-D checkerboard run different update loops and
// alternate lane by lane, so each warp runs both loops. fixed: each warp takes 32 cells of one colour.
#include "sample.cuh"
const int W = 2048, H = 1024, ITERS = 96;
template <bool FIXED>
__global__ void color_update(const float* __restrict__ in, float* __restrict__ out) {
  int x, y;
  if (!FIXED) { x = blockIdx.x * 32 + threadIdx.x; y = blockIdx.y * 8 + threadIdx.y; }
  else {  // block covers 64 x 4 cells; warp w takes colour w & 1 of row w >> 1
    y = blockIdx.y * 4 + (threadIdx.y >> 1);
    x = blockIdx.x * 64 + 2 * threadIdx.x + ((y + threadIdx.y) & 1);
  }
  float v = in[y * W + x];
  if ((x + y) & 1) {  // ROOT: neighbouring lanes have different colours
    for (int k = 0; k < ITERS; ++k) v = __expf(-v) * 0.5f + 0.25f;
  } else {
    for (int k = 0; k < ITERS; ++k) v = __logf(v + 1.5f) * 0.75f;
  }
  out[y * W + x] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)W * H, 82);
  float* out; CK(cudaMalloc(&out, (size_t)W * H * 4));
  dim3 block(32, 8);
  float us = median_us([&] {
    if (fixed) color_update<true><<<dim3(W / 64, H / 4), block>>>(in, out);
    else color_update<false><<<dim3(W / 32, H / 8), block>>>(in, out);
  }, reps_of(argc, argv));
  report("redblack_mix", fixed, us);
}
