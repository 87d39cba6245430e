// A cp.async (LDGSTS) staging loop in the form of a pipelined kernel's prologue: each warp of a
// 256-thread block copies 16 chunks of 32 x 32 floats from global memory into its own 4 KB
// shared tile with 4-byte cp.async, waits for the group, and sums the tile along a diagonal.
// bad: lane l's 32 words go to row l of the tile (w[l * 32 + k]): the global reads are coalesced
// (lanes read consecutive words), but the 32 lanes' shared writes all land in bank k, a 32-way
// conflict on every LDGSTS. The kernel's load/store conflict counters do not count cp.async's
// shared writes; the per-instruction shared wavefronts (32 per LDGSTS) show them.
// fixed: word k of lane l goes to column l (w[k * 32 + l]): the 32 lanes write 32 banks. The
// diagonal read-out is conflict-free in both. Same sums (same order): bit-identical.
// Expected gain: several x (the LDGSTS queue drains 32 wavefronts per instruction).
#include "sample.cuh"
template <bool BAD>
__global__ void __launch_bounds__(256) stage_rows(const float* __restrict__ g, float* __restrict__ out, int chunks) {
  __shared__ __align__(16) float sh[8][32 * 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* w = sh[warp];
  float acc = 0.f;
  const size_t base = ((size_t)blockIdx.x * 8 + warp) * chunks * 1024;
  for (int c = 0; c < chunks; ++c) {
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      const float* src = g + ((base + (size_t)c * 1024 + k * 32 + lane) & ((1u << 24) - 1));
      unsigned dst = (unsigned)__cvta_generic_to_shared(&w[BAD ? lane * 32 + k : k * 32 + lane]);
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src));  // ROOT
    }
    asm volatile("cp.async.commit_group;\ncp.async.wait_all;" ::: "memory");
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      int j = (k + lane) & 31;
      acc += w[BAD ? lane * 32 + j : j * 32 + lane];
    }
    __syncwarp();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* g = device_fill<float>(1 << 24, 7);
  float* out; CK(cudaMalloc(&out, 528 * 256 * sizeof(float)));
  float us = median_us([&] {
    if (fixed) stage_rows<false><<<528, 256>>>(g, out, 16);
    else stage_rows<true><<<528, 256>>>(g, out, 16);
  }, reps_of(argc, argv));
  report("smem_cpasync_rows", fixed, us);
}
