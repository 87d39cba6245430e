// Keyed-jagged embedding gather (recommender, FBGEMM jagged_index_select-shaped): for 32768 bags
// of 32 lookups each, output row r = (bag b, slot k) is copied from a 2M x 32 fp32 embedding table
// (256 MB, random rows): pos = offsets[b] + k; id = indices[pos]; out[r][:] = table[id][:].
// Loop-free, one warp per output row (lane = embedding column): every warp runs a chain of three
// DEPENDENT loads -- offsets (broadcast), indices (broadcast), then the 128-byte table row -- and
// only the last one moves useful bytes. With at most 64 warps per SM that is ~64 x 128 B = 8 KB of
// row data in flight per SM for ~3 memory latencies, far below the ~15-25 KB per SM that hides
// DRAM latency at full bandwidth: the kernel waits on latency at ~30-40% of DRAM bandwidth.
// bad: jagged_gather_row: one row per warp, 1 chain per thread.
// fixed: jagged_gather_row_x4: each thread handles 4 rows (r, r + R/4, r + R/2, r + 3R/4 --
// independent chains, unrolled): the 4 offsets loads issue together, then the 4 index loads,
// then the 4 row loads, so each warp keeps 4x the bytes in flight per latency; grid 4x smaller.
// SASS (sm_90, -O3): bad: loop-free: LDG.E.CONSTANT offsets -> IMAD.WIDE -> LDG.E.64.CONSTANT
// index (int64 ids) -> IMAD.WIDE -> LDG.E.CONSTANT row element -> STG.E, each load waiting on
// the previous one; fixed: the same chain 4 times interleaved (4 LDG offsets, then 4 LDG index,
// then 4 LDG row, 4 STG).
// Expected gain ~1.6-2.5x (latency-bound -> close to the ~260 MB / DRAM-bandwidth floor).
// Bit-identical output (pure copy).
#include "sample.cuh"
#include <cstdint>
const int NBAG = 32768, LPB = 32, NROWS_T = 2 << 20, D = 32, R = NBAG * LPB;  // R output rows
__global__ void __launch_bounds__(256) jagged_gather_row(const int* __restrict__ offsets, const int64_t* __restrict__ indices,
                                                         const float* __restrict__ table, float* __restrict__ out) {
  const int r = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  const int b = r / LPB, k = r % LPB;
  const int pos = offsets[b] + k;
  const int64_t id = indices[pos];
  out[(size_t)r * D + lane] = table[id * D + lane];  // ROOT
}
__global__ void __launch_bounds__(256) jagged_gather_row_x4(const int* __restrict__ offsets, const int64_t* __restrict__ indices,
                                                            const float* __restrict__ table, float* __restrict__ out) {
  const int r0 = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  int pos[4];
  int64_t id[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) { const int r = r0 + u * (R / 4); pos[u] = offsets[r / LPB] + r % LPB; }
#pragma unroll
  for (int u = 0; u < 4; ++u) id[u] = indices[pos[u]];
  float v[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) v[u] = table[id[u] * D + lane];
#pragma unroll
  for (int u = 0; u < 4; ++u) out[(size_t)(r0 + u * (R / 4)) * D + lane] = v[u];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<int> off(NBAG + 1);
  for (int b = 0; b <= NBAG; ++b) off[b] = b * LPB;
  std::vector<int64_t> idx(R);
  unsigned seed = 1616;
  for (auto& v : idx) { seed = seed * 1664525u + 1013904223u; v = (seed >> 5) & (NROWS_T - 1); }
  int* offsets; CK(cudaMalloc(&offsets, off.size() * 4));
  CK(cudaMemcpy(offsets, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
  int64_t* indices; CK(cudaMalloc(&indices, idx.size() * 8));
  CK(cudaMemcpy(indices, idx.data(), idx.size() * 8, cudaMemcpyHostToDevice));
  float* table = device_fill<float>((size_t)NROWS_T * D, 1617);
  const size_t n_out = (size_t)R * D;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  float us = median_us([&] {
    if (fixed) jagged_gather_row_x4<<<R / 4 / 8, 256>>>(offsets, indices, table, out);
    else jagged_gather_row<<<R / 8, 256>>>(offsets, indices, table, out);
  }, reps_of(argc, argv));
  report("ho4_jagged_embed_chain", fixed, us);
}
