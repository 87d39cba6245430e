// Batched GEMV, y_b = A_b x_b, for 32 independent problems (A_b row-major 2048 x 768 floats): one
// warp per row (float4 loads along the row, shuffle reduction), 256-thread blocks that walk a range
// of rows. bad: the library-style batched launch, one block per problem: 32 blocks for 132 SMs.
// fixed: the same kernel with each problem's rows split over 128 blocks of 16 rows (4096 blocks).
#include "sample.cuh"
const int BATCH = 32, M = 2048, K = 768;
__global__ void __launch_bounds__(256) gemv_batched(const float* __restrict__ A, const float* __restrict__ x,
                                                    float* __restrict__ y, int rows_per_block) {
  const int b = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float4* xb = reinterpret_cast<const float4*>(x + (size_t)b * K);
  const int r0 = blockIdx.x * rows_per_block;
  for (int r = r0 + warp; r < r0 + rows_per_block; r += 8) {
    const float4* a = reinterpret_cast<const float4*>(A + ((size_t)b * M + r) * K);
    float acc = 0.f;
#pragma unroll
    for (int k = lane; k < K / 4; k += 32) {
      const float4 av = a[k], xv = xb[k];
      acc += av.x * xv.x + av.y * xv.y + av.z * xv.z + av.w * xv.w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[(size_t)b * M + r] = acc;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* A = device_fill<float>((size_t)BATCH * M * K, 21);
  float* x = device_fill<float>((size_t)BATCH * K, 22);
  float* y; CK(cudaMalloc(&y, (size_t)BATCH * M * 4));
  const int split = 128;
  float us = median_us([&] {
    if (fixed) gemv_batched<<<dim3(split, BATCH), 256>>>(A, x, y, M / split);
    else gemv_batched<<<dim3(1, BATCH), 256>>>(A, x, y, M);  // ROOT
  }, reps_of(argc, argv));
  report("ho_batched_gemv", fixed, us);
}
