// NEAR MISS. Device-to-device copy of a 256 MB float buffer (e.g. a tensor .clone()), loop-free,
// 256-thread blocks, fully coalesced 16-byte accesses.
// bad: one float4 per thread (2^24 threads, 65536 blocks): LDG.E.128 then STG.E.128, each thread
// waits one memory latency before its store; with 64 warps per SM x 512 bytes per warp request
// that is 32 KB of loads in flight per SM, more than the ~20 KB needed to cover DRAM latency at
// full bandwidth, so the copy already runs at DRAM bandwidth.
// 'fixed': two float4 per thread (loads at t and t + n/2 issued back to back, grid halved): twice
// the bytes in flight per warp, which a bandwidth-bound copy cannot use.
// Expected ~1.0x (both ~170 us for 512 MB of traffic on an H100). Identical output.
#include "sample.cuh"
const int N4 = 1 << 24, BLOCK = 256;
__global__ void __launch_bounds__(BLOCK) copy_f4(const float4* __restrict__ in, float4* __restrict__ out) {
  const int t = blockIdx.x * BLOCK + threadIdx.x;
  out[t] = in[t];  // ROOT
}
__global__ void __launch_bounds__(BLOCK) copy_f4x2(const float4* __restrict__ in, float4* __restrict__ out) {
  const int t = blockIdx.x * BLOCK + threadIdx.x;
  const float4 a = in[t], b = in[t + N4 / 2];
  out[t] = a;
  out[t + N4 / 2] = b;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>((size_t)N4 * 4, 51);
  float* out; CK(cudaMalloc(&out, (size_t)N4 * 16));
  float us = median_us([&] {
    if (fixed) copy_f4x2<<<N4 / 2 / BLOCK, BLOCK>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out));
    else copy_f4<<<N4 / BLOCK, BLOCK>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out));
  }, reps_of(argc, argv));
  report("ho3_stream_copy_nm", fixed, us);
}
