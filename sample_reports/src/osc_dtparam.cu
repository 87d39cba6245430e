// fp64-conversion. bad: the time step is a double kernel argument, so each float update of the
// 2-D oscillator field is converted to double and back (F2F.F64.F32, DFMA, F2F.F32.F64). fixed: float dt.
#include "sample.cuh"
const int W = 1024, H = 1024, STEPS = 128;
template <typename Real>
__global__ void oscillate(const float* __restrict__ x0, float* __restrict__ xo, float k, float c, Real dt) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int i = y * W + x;
  float p = x0[i], v = 0.f;
  for (int s = 0; s < STEPS; ++s) {
    float a = -k * p - c * v;
    v += dt * a; p += dt * v;  // ROOT: double products and conversions when dt is double
  }
  xo[i] = p;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x0 = device_fill<float>((size_t)W * H, 43);
  float* xo; CK(cudaMalloc(&xo, (size_t)W * H * 4));
  dim3 block(32, 8), grid(W / 32, H / 8);
  float us = median_us([&] {
    if (fixed) oscillate<float><<<grid, block>>>(x0, xo, 3.f, 0.1f, 1e-3f);
    else oscillate<double><<<grid, block>>>(x0, xo, 3.f, 0.1f, 1e-3);
  }, reps_of(argc, argv));
  report("osc_dtparam", fixed, us);
}
