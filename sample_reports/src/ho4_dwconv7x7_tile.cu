// ConvNeXt-style depthwise 7x7 convolution (groups = channels, pad 3, stride 1) on an NCHW fp32
// activation N=32, C=96, H=W=64 (50 MB in, 50 MB out, 0.62 G FMAs), per-channel weights [C][49]
// read through the read-only path like PyTorch's conv_depthwise2d kernel.
// bad: one output pixel per thread: a 16x16 block stages its 22x22 input patch in shared memory
// (pitch 48: conflict-free) and each thread runs 49 x (LDS patch value; FFMA with weight w[ky][kx]).
// Each staged input value feeds one FFMA of the thread that loads it, and each weight (one LDG per
// tap, hoisted to registers) feeds one FFMA too: ~2 load-pipe operations per FFMA, so the
// LSU/MIO pipe bounds the kernel long before the FMA pipe.
// fixed: register tiling along x: each thread computes 4 adjacent outputs (block tile 64x16,
// shared patch 22x70, pitch 72); per filter row it loads the 10 values it needs with LDS.128 +
// LDS.128 + LDS.64 and issues 28 FFMAs, and each weight register feeds 4 FFMAs: ~3x fewer
// load-pipe operations per FFMA.
// SASS (sm_90, -O3): both tap loops fully unrolled; bad: 49 LDG.E.CONSTANT (weights) + 49 LDS.32 +
// 49 FFMA per thread; fixed: 49 LDG.E.CONSTANT + 14 LDS.128 + 7 LDS.64 + 196 FFMA per thread,
// one STG.E.128. The staging loops (i / 22, i % 22 and i / 70, i % 70 by constants) compile to
// IMAD.HI multiply-shift sequences.
// Expected gain ~2-3x (LSU-bound -> DRAM/FMA balanced). Each output is the same fmaf chain over
// (ky, kx) in row-major order from 0, then + bias: bit-identical output.
#include "sample.cuh"
const int NB = 32, C = 96, H = 64, W = 64, KS = 7, R = 3;
__global__ void __launch_bounds__(256) dwconv7_tile16(const float* __restrict__ x, const float* __restrict__ wgt,
                                                      const float* __restrict__ bias, float* __restrict__ y) {
  __shared__ float s[16 + 2 * R][48];
  const int p = blockIdx.z, c = p % C, ox0 = blockIdx.x * 16, oy0 = blockIdx.y * 16;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const float* xp = x + (size_t)p * H * W;
  for (int i = tid; i < 22 * 22; i += 256) {
    const int r = i / 22, q = i % 22, gy = oy0 + r - R, gx = ox0 + q - R;
    s[r][q] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? xp[gy * W + gx] : 0.f;
  }
  __syncthreads();
  const float* wc = wgt + c * KS * KS;
  float acc = 0.f;
#pragma unroll
  for (int ky = 0; ky < KS; ++ky)
#pragma unroll
    for (int kx = 0; kx < KS; ++kx) acc = fmaf(s[ty + ky][tx + kx], wc[ky * KS + kx], acc);  // ROOT
  y[(size_t)p * H * W + (oy0 + ty) * W + ox0 + tx] = acc + bias[c];
}
__global__ void __launch_bounds__(256) dwconv7_reg1x4(const float* __restrict__ x, const float* __restrict__ wgt,
                                                      const float* __restrict__ bias, float* __restrict__ y) {
  __shared__ __align__(16) float s[16 + 2 * R][72];
  const int p = blockIdx.z, c = p % C, oy0 = blockIdx.y * 16;  // the 64-wide tile covers a full row
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const float* xp = x + (size_t)p * H * W;
  for (int i = tid; i < 22 * 70; i += 256) {
    const int r = i / 70, q = i % 70, gy = oy0 + r - R, gx = q - R;
    s[r][q] = (gy >= 0 && gy < H && gx >= 0 && gx < W) ? xp[gy * W + gx] : 0.f;
  }
  __syncthreads();
  const float* wc = wgt + c * KS * KS;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int ky = 0; ky < KS; ++ky) {
    const float* row = &s[ty + ky][4 * tx];
    const float4 a = *reinterpret_cast<const float4*>(row);
    const float4 b = *reinterpret_cast<const float4*>(row + 4);
    const float2 e = *reinterpret_cast<const float2*>(row + 8);
    const float v[10] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, e.x, e.y};
#pragma unroll
    for (int kx = 0; kx < KS; ++kx) {
      const float wv = wc[ky * KS + kx];
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[r] = fmaf(v[r + kx], wv, acc[r]);
    }
  }
  const float bc = bias[c];
  reinterpret_cast<float4*>(y)[((size_t)p * H * W + (oy0 + ty) * W) / 4 + tx] =
      make_float4(acc[0] + bc, acc[1] + bc, acc[2] + bc, acc[3] + bc);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NB * C * H * W;
  float* x = device_fill<float>(n, 81);
  float* wgt = device_fill<float>(C * KS * KS, 82);
  float* bias = device_fill<float>(C, 83);
  const size_t n_out = n;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) dwconv7_reg1x4<<<dim3(1, H / 16, NB * C), dim3(16, 16)>>>(x, wgt, bias, out);
    else dwconv7_tile16<<<dim3(W / 16, H / 16, NB * C), dim3(16, 16)>>>(x, wgt, bias, out);
  }, reps_of(argc, argv));
  report("ho4_dwconv7x7_tile", fixed, us);
}
