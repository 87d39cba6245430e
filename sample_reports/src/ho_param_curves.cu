// Per-channel tone curves applied to an RGBA8 image (2^25 pixels, one pixel per thread): each of R,
// G, B is mapped through its own 256-entry float curve and written back as RGBA8 (alpha kept).
// bad: the three curves travel by value in the kernel's parameter struct (3 KB, CUTLASS-style Params),
// so each lookup is a constant-bank load indexed by the pixel's own byte. fixed: the same curves
// passed as a pointer to global memory and read through the read-only data cache.
#include "sample.cuh"
#include <cstdint>
const int N = 1 << 25;
struct CurveParams { float curve[3][256]; };
__device__ __forceinline__ uint32_t pack(float r, float g, float b, uint32_t a) {
  return (uint32_t)__float2uint_rn(r * 255.f) | ((uint32_t)__float2uint_rn(g * 255.f) << 8) |
         ((uint32_t)__float2uint_rn(b * 255.f) << 16) | (a & 0xff000000u);
}
__global__ void tone_map_params(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const CurveParams p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t px = in[i];
  const float r = p.curve[0][px & 0xff], g = p.curve[1][(px >> 8) & 0xff], b = p.curve[2][(px >> 16) & 0xff];  // ROOT
  out[i] = pack(r, g, b, px);
}
__global__ void tone_map_global(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, const float* __restrict__ curve) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t px = in[i];
  const float r = curve[px & 0xff], g = curve[256 + ((px >> 8) & 0xff)], b = curve[512 + ((px >> 16) & 0xff)];
  out[i] = pack(r, g, b, px);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  CurveParams p;
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 256; ++v) { const float t = v / 255.f; p.curve[c][v] = fminf(1.f, t * (1.1f - 0.1f * c) * (1.f - 0.3f * t) + 0.1f * t * t); }
  float* curve; CK(cudaMalloc(&curve, sizeof(p))); CK(cudaMemcpy(curve, &p, sizeof(p), cudaMemcpyHostToDevice));
  uint32_t* in = device_keys(N, 28);
  uint32_t* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) tone_map_global<<<N / 256, 256>>>(in, out, curve);
    else tone_map_params<<<N / 256, 256>>>(in, out, p);
  }, reps_of(argc, argv));
  report("ho_param_curves", fixed, us);
}
