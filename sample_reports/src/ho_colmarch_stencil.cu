// 5x5 weighted smoothing of a 4096-wide x 8192-tall float image (clamped borders, weights in
// __constant__). Each thread owns one column and marches down a 64-row segment, keeping the last five
// rows of its 5-wide neighbourhood in a per-thread 5x5 window; the 25 taps are fully unrolled.
// bad: the window is a ring buffer, row k of the stencil sits in slot (y + k) % 5, an index that
// depends on the rolled row loop, so the array lives in local memory. fixed: the window rows are
// shifted up by one each step (compile-time indices only), so the window stays in registers.
#include "sample.cuh"
const int W = 4096, H = 8192, SEG = 64, R = 2, T = 2 * R + 1;
__constant__ float c_w[T][T];
template <bool FIXED>
__global__ void __launch_bounds__(128) smooth5x5_colmarch(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y0 = blockIdx.y * SEG;
  int xs[T];
#pragma unroll
  for (int d = 0; d < T; ++d) xs[d] = min(max(x + d - R, 0), W - 1);
  auto row_ptr = [&](int y) { return in + (size_t)min(max(y, 0), H - 1) * W; };
  float win[T][T];
#pragma unroll
  for (int k = 0; k < T - 1; ++k) {
    const float* p = row_ptr(y0 - R + k);
#pragma unroll
    for (int d = 0; d < T; ++d) win[k][d] = p[xs[d]];
  }
  for (int y = y0; y < y0 + SEG; ++y) {
    const float* p = row_ptr(y + R);
    float acc = 0.f;
    if (!FIXED) {
      const int t = y - y0;
#pragma unroll
      for (int d = 0; d < T; ++d) win[(t + T - 1) % T][d] = p[xs[d]];
#pragma unroll
      for (int k = 0; k < T; ++k)
#pragma unroll
        for (int d = 0; d < T; ++d) acc += c_w[k][d] * win[(t + k) % T][d];  // ROOT
    } else {
#pragma unroll
      for (int d = 0; d < T; ++d) win[T - 1][d] = p[xs[d]];
#pragma unroll
      for (int k = 0; k < T; ++k)
#pragma unroll
        for (int d = 0; d < T; ++d) acc += c_w[k][d] * win[k][d];
#pragma unroll
      for (int k = 0; k < T - 1; ++k)
#pragma unroll
        for (int d = 0; d < T; ++d) win[k][d] = win[k + 1][d];
    }
    out[(size_t)y * W + x] = acc;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float hw[T][T], s = 0.f;
  for (int k = 0; k < T; ++k) for (int d = 0; d < T; ++d) { hw[k][d] = 1.f / (1 + (k - R) * (k - R) + (d - R) * (d - R)); s += hw[k][d]; }
  for (int k = 0; k < T; ++k) for (int d = 0; d < T; ++d) hw[k][d] /= s;
  CK(cudaMemcpyToSymbol(c_w, hw, sizeof(hw)));
  float* in = device_fill<float>((size_t)W * H, 25);
  float* out; CK(cudaMalloc(&out, (size_t)W * H * 4));
  dim3 grid(W / 128, H / SEG);
  float us = median_us([&] {
    if (fixed) smooth5x5_colmarch<true><<<grid, 128>>>(in, out);
    else smooth5x5_colmarch<false><<<grid, 128>>>(in, out);
  }, reps_of(argc, argv));
  report("ho_colmarch_stencil", fixed, us);
}
