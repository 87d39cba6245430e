// A helper that sums a row through a plain float*, called with a pointer that is shared memory
// in this launch but could be global memory in another (chosen by a kernel argument), so nvcc
// cannot prove the address space and emits generic LD.E instead of LDS. Each warp of a
// 256-thread block stages a 32 x PITCH float tile in shared memory and sums 64 rotations of its
// rows, one row per lane.
// bad: PITCH = 32: lane l sums row (l + it) % 32 word by word, so at step k all 32 lanes read
// word k of 32 different rows, the same bank: a 32-way conflict on every generic LD that lands in
// shared memory (the kernel's shared load conflict counters count LD as well as LDS).
// fixed: PITCH = 33: the rows start one bank apart, the 32 lanes hit 32 banks. Same sums:
// bit-identical.
#include "sample.cuh"
__device__ __noinline__ float row_sum(const float* p, int stride) {
  float s = 0.f;
#pragma unroll 8
  for (int k = 0; k < 32; ++k) s += p[k * stride];  // ROOT
  return s;
}
template <int PITCH>
__global__ void __launch_bounds__(256) rotate_sums(const float* __restrict__ g, float* __restrict__ out, int from_global) {
  __shared__ float t[8][32 * PITCH];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = lane; i < 32 * PITCH; i += 32) t[warp][i] = g[(blockIdx.x * 4096 + warp * 512 + i) & 65535];
  __syncwarp();
  float acc = 0.f;
  // A source chosen at run time: the compiler cannot prove the pointer is shared (generic LD).
  const float* src = from_global ? g + warp * 32 * PITCH : t[warp];
  for (int it = 0; it < 64; ++it) acc += row_sum(src + ((lane + it) & 31) * PITCH, 1) * (1.f + it);
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* g = device_fill<float>(1 << 16, 7);
  float* out; CK(cudaMalloc(&out, 4224 * 256 * sizeof(float)));
  float us = median_us([&] {
    if (fixed) rotate_sums<33><<<4224, 256>>>(g, out, 0);
    else rotate_sums<32><<<4224, 256>>>(g, out, 0);
  }, reps_of(argc, argv));
  report("smem_generic_ptr", fixed, us);
}
