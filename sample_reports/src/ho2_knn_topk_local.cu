// Brute-force k-nearest-neighbour search (k = 8) of 2^17 query points against 2048 reference points
// in 3-D (float4), one thread per query, 256-thread blocks, reference points staged in shared
// memory 1024 at a time (broadcast reads). Each thread keeps its 8 best (distance, index) pairs
// sorted and inserts a candidate only when it beats the current 8th best.
// bad: the insertion is the textbook `while (j > 0 && best[j-1] > d) { best[j] = best[j-1]; --j; }`
// with a run-time position j, so both 8-entry arrays live in local memory: the `d < best[7]` test
// of every candidate is an LDL, and every insertion is a loop of LDL/STL.
// fixed: the same test and the same insertion done as a fully unrolled bubble with compile-time
// indices (`if (best[j] < best[j-1]) swap`), so the arrays stay in registers. The bubble stops at
// the same place as the insertion (strict comparisons, ties keep the older entry first), so both
// kernels return identical lists.
#include "sample.cuh"
#include <cfloat>
const int K = 8, NQ = 1 << 17, NR = 2048, RT = 1024, BLOCK = 256;
template <bool FIXED>
__global__ void __launch_bounds__(BLOCK) knn_top8(const float4* __restrict__ queries, const float4* __restrict__ refs, int nref,
                                                  float* __restrict__ out_d, int* __restrict__ out_i, int nq) {
  __shared__ float4 rs[RT];
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 p = queries[q];
  float bd[K];
  int bi[K];
#pragma unroll
  for (int j = 0; j < K; ++j) { bd[j] = FLT_MAX; bi[j] = -1; }
  for (int r0 = 0; r0 < nref; r0 += RT) {
    __syncthreads();
#pragma unroll
    for (int k = 0; k < RT; k += BLOCK) rs[k + threadIdx.x] = refs[r0 + k + threadIdx.x];
    __syncthreads();
    for (int k = 0; k < RT; ++k) {
      const float4 r = rs[k];
      const float dx = p.x - r.x, dy = p.y - r.y, dz = p.z - r.z;
      const float d = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
      if (d < bd[K - 1]) {
        if (!FIXED) {
          int j = K - 1;
          while (j > 0 && bd[j - 1] > d) {  // ROOT
            bd[j] = bd[j - 1];
            bi[j] = bi[j - 1];
            --j;
          }
          bd[j] = d;
          bi[j] = r0 + k;
        } else {
          bd[K - 1] = d;
          bi[K - 1] = r0 + k;
#pragma unroll
          for (int j = K - 1; j > 0; --j) {
            if (bd[j] < bd[j - 1]) {
              const float td = bd[j]; bd[j] = bd[j - 1]; bd[j - 1] = td;
              const int ti = bi[j]; bi[j] = bi[j - 1]; bi[j - 1] = ti;
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < K; ++j) {
    out_d[(size_t)j * nq + q] = bd[j];
    out_i[(size_t)j * nq + q] = bi[j];
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float4> hq(NQ), hr(NR);
  unsigned seed = 171;
  for (auto& v : hq) {
    float c[3];
    for (int d = 0; d < 3; ++d) { seed = seed * 1664525u + 1013904223u; c[d] = (seed >> 8) * (1.0f / 16777216.0f); }
    v = make_float4(c[0], c[1], c[2], 0.f);
  }
  for (auto& v : hr) {
    float c[3];
    for (int d = 0; d < 3; ++d) { seed = seed * 1664525u + 1013904223u; c[d] = (seed >> 8) * (1.0f / 16777216.0f); }
    v = make_float4(c[0], c[1], c[2], 0.f);
  }
  float4 *queries, *refs;
  CK(cudaMalloc(&queries, NQ * sizeof(float4))); CK(cudaMalloc(&refs, NR * sizeof(float4)));
  CK(cudaMemcpy(queries, hq.data(), NQ * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(refs, hr.data(), NR * sizeof(float4), cudaMemcpyHostToDevice));
  float* out_d; int* out_i;
  CK(cudaMalloc(&out_d, (size_t)K * NQ * 4)); CK(cudaMalloc(&out_i, (size_t)K * NQ * 4));
  float us = median_us([&] {
    if (fixed) knn_top8<true><<<NQ / BLOCK, BLOCK>>>(queries, refs, NR, out_d, out_i, NQ);
    else knn_top8<false><<<NQ / BLOCK, BLOCK>>>(queries, refs, NR, out_d, out_i, NQ);
  }, reps_of(argc, argv));
  report("ho2_knn_topk_local", fixed, us);
}
