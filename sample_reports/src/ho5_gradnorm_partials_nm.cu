// NEAR MISS. clip_grad_norm_, pass 1: per-block partial sums of g^2 over 256M fp32 gradients (1 GiB,
// a flattened ~268M-parameter model), grid = 2 x SMs blocks of 1024 threads (one wave), each
// thread streams ~250 float4 in a grid-stride loop (unrolled by 4), then the block reduces its
// 1024 per-thread sums in shared memory and thread 0 writes one partial.
// bad: grad_sqnorm_partials, the hidden-conflict tree: interleaved addressing `idx = 2*s*tid;
// if (idx < 1024) sh[idx] += sh[idx + s]` (predicated @!P LDS/LDS/FADD/STS, no branch), 2-, 4-, 8-,
// 16-, 32-way conflicts in the 16, 8, 4, 2, 1 busy warps of 32 (~573 tree wavefronts vs ~108
// conflict-free, ~0.6 per executed LDS/STS), 11 BAR.SYNC. fixed: grad_sqnorm_partials_seq, sequential addressing (conflict-free).
// The tree runs once per block after ~4 MB of streaming per block: ~1-2 us of a ~300-350 us
// DRAM-bound kernel, so the fix is expected to give ~1.0x (0.98-1.02).
// SASS (sm_90, nvcc 13.0, -O3): both 20 regs, 11 BAR.SYNC; bad: 20 LDS (19 predicated, 1 LDS.64 at
// s = 1), 11 STS (10 predicated); fixed: 21 LDS (20 predicated), 11 STS (10 predicated); the
// grid-stride loop (4 LDG.E.128 per unrolled trip + remainder) is identical in both.
// Results: equal to rounding (different fp32 summation order in the tree).
#include "sample.cuh"
const size_t NPARAM = (size_t)1 << 28;  // 256M fp32 gradients (1 GiB), e.g. a flattened 268M-param model
const int BLOCK = 1024;
// clip_grad_norm_, pass 1: per-block partial sums of g^2 (a second tiny pass adds the partials).
__global__ void __launch_bounds__(BLOCK, 2) grad_sqnorm_partials(const float4* __restrict__ g, size_t n4, float* __restrict__ partials) {
  __shared__ float sh[BLOCK];
  const int tid = threadIdx.x;
  float acc = 0.f;
#pragma unroll 4
  for (size_t i = (size_t)blockIdx.x * BLOCK + tid; i < n4; i += (size_t)gridDim.x * BLOCK) {
    const float4 v = g[i];
    acc = fmaf(v.x, v.x, acc);
    acc = fmaf(v.y, v.y, acc);
    acc = fmaf(v.z, v.z, acc);
    acc = fmaf(v.w, v.w, acc);
  }
  sh[tid] = acc;
  __syncthreads();
#pragma unroll
  for (int s = 1; s < BLOCK; s <<= 1) {
    const int idx = 2 * s * tid;
    if (idx < BLOCK) sh[idx] += sh[idx + s];  // ROOT
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sh[0];
}
__global__ void __launch_bounds__(BLOCK, 2) grad_sqnorm_partials_seq(const float4* __restrict__ g, size_t n4, float* __restrict__ partials) {
  __shared__ float sh[BLOCK];
  const int tid = threadIdx.x;
  float acc = 0.f;
#pragma unroll 4
  for (size_t i = (size_t)blockIdx.x * BLOCK + tid; i < n4; i += (size_t)gridDim.x * BLOCK) {
    const float4 v = g[i];
    acc = fmaf(v.x, v.x, acc);
    acc = fmaf(v.y, v.y, acc);
    acc = fmaf(v.z, v.z, acc);
    acc = fmaf(v.w, v.w, acc);
  }
  sh[tid] = acc;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sh[tid] += sh[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sh[0];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = 2 * sms;  // one wave: 2 resident 1024-thread blocks per SM
  float* g = device_fill<float>(NPARAM, 901);
  float* partials; CK(cudaMalloc(&partials, grid * sizeof(float)));
  const float4* g4 = reinterpret_cast<const float4*>(g);
  float us = median_us([&] {
    if (fixed) grad_sqnorm_partials_seq<<<grid, BLOCK>>>(g4, NPARAM / 4, partials);
    else grad_sqnorm_partials<<<grid, BLOCK>>>(g4, NPARAM / 4, partials);
  }, reps_of(argc, argv));
  report("ho5_gradnorm_partials_nm", fixed, us);
}
