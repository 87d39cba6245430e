// LLM.int8 / weight-only-quantization dequantization of an 8192 x 8192 int8 weight matrix with
// per-output-row fp32 scales into bf16 (64 MB read, 128 MB written), the straightforward
// elementwise kernel: one weight per thread, loop-free: w = bf16(q[i] * scale[i / K]).
// bad: each thread loads ONE byte (LDG.E.U8 + I2F.S8): a warp's request is 32 bytes, one sector. With 64
// warps per SM that is at most ~2 KB of weight loads in flight per SM against the ~15-25 KB per
// SM it takes to cover DRAM latency at full bandwidth; the stores (2 bytes per thread, 64 B per
// warp) are small too. The kernel is bound by memory latency x warps, at ~30-40% of DRAM
// bandwidth, and issues 8x more memory instructions than needed.
// fixed: one 8-byte load (8 int8 weights, LDG.E.64) per thread and one 16-byte store of 8 bf16
// (STG.E.128): 8x the bytes per request, grid 8x smaller, same arithmetic per element.
// SASS (sm_90, -O3): bad: loop-free, ~16 instructions: LDG.E.U8.CONSTANT + LDG.E.CONSTANT (scale,
// row = i >> 13: SHF), I2F.S8, FMUL, F2FP.BF16.F32.PACK_AB, STG.E.U16; fixed: LDG.E.64.CONSTANT,
// one scale LDG, 6 I2F.S8 + 2 I2F.S16 (with SHF/PRMT byte extraction), 8 FMUL,
// 4 F2FP.BF16.F32.PACK_AB, one STG.E.128.
// Expected gain ~2-3x (latency-bound -> close to the 192 MB / DRAM-bandwidth floor).
// Bit-identical output (same float product, same round-to-nearest bf16 conversion).
#include "sample.cuh"
#include <cstdint>
#include <cuda_bf16.h>
const int M = 8192, K = 8192;
__global__ void __launch_bounds__(256) dequant_int8_bf16(const int8_t* __restrict__ q, const float* __restrict__ scale,
                                                         __nv_bfloat16* __restrict__ w) {
  const unsigned i = blockIdx.x * 256 + threadIdx.x;
  w[i] = __float2bfloat16_rn((float)q[i] * scale[i / K]);  // ROOT
}
__global__ void __launch_bounds__(256) dequant_int8_bf16_x8(const int8_t* __restrict__ q, const float* __restrict__ scale,
                                                            __nv_bfloat16* __restrict__ w) {
  const unsigned g = blockIdx.x * 256 + threadIdx.x, i0 = g * 8;  // 8 weights, same row (K % 8 == 0)
  const uint2 raw = reinterpret_cast<const uint2*>(q)[g];
  const float s = scale[i0 / K];
  const int8_t* b = reinterpret_cast<const int8_t*>(&raw);
  __align__(16) __nv_bfloat16 o[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) o[j] = __float2bfloat16_rn((float)b[j] * s);
  reinterpret_cast<uint4*>(w)[g] = *reinterpret_cast<const uint4*>(o);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)M * K;
  std::vector<int8_t> h(n);
  unsigned seed = 1717;
  for (auto& v : h) { seed = seed * 1664525u + 1013904223u; v = (int8_t)(seed >> 24); }
  int8_t* q; CK(cudaMalloc(&q, n));
  CK(cudaMemcpy(q, h.data(), n, cudaMemcpyHostToDevice));
  float* scale = device_fill<float>(M, 1718);
  const size_t n_out = n;
  __nv_bfloat16* out; CK(cudaMalloc(&out, n_out * 2));
  float us = median_us([&] {
    if (fixed) dequant_int8_bf16_x8<<<n / 8 / 256, 256>>>(q, scale, out);
    else dequant_int8_bf16<<<n / 256, 256>>>(q, scale, out);
  }, reps_of(argc, argv));
  report("ho4_int8_dequant_1b", fixed, us);
}
