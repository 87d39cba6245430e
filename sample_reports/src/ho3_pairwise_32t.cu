// Edge scoring for link prediction on a graph (score(i, j) = <h_i, h_j> for 2^21 candidate pairs),
// node embeddings h: 2^20 x 32 floats (128 MB, does not fit in L2), pairs random. One warp per
// pair: the warp loads the pair (8-byte broadcast), then gathers both 128-byte embedding rows
// (lane l takes element l: two coalesced 4-sector loads), multiplies, shuffle-reduces, lane 0
// writes the score. Loop-free; the whole warp waits for one dependent chain: pair load, row
// gathers, reduction.
// bad: one 32-thread block per pair (2^21 blocks of one warp). The 32-resident-blocks-per-SM limit
// caps each SM at 32 warps (50% occupancy); each warp has at most 8 sectors (256 B) of gathers in
// flight, ~8 KB per SM, so the kernel is memory-latency-bound far below DRAM bandwidth.
// fixed: the same kernel with 256-thread blocks (8 pairs per block): 64 warps per SM, twice the
// gathers in flight. Expected gain ~1.6-2x. (64-thread blocks would already reach 64 warps per
// SM on this GPU, 32 blocks x 2 warps, which is why the bad launch uses 32.) Bit-identical.
#include "sample.cuh"
const int NNODE = 1 << 20, D = 32, NPAIR = 1 << 21;
__global__ void __launch_bounds__(256) edge_score(const float* __restrict__ h, const int2* __restrict__ pairs,
                                                  float* __restrict__ score, int npairs) {
  const int p = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (p >= npairs) return;
  const int2 ij = pairs[p];
  float s = h[(size_t)ij.x * D + lane] * h[(size_t)ij.y * D + lane];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) score[p] = s;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* h = device_fill<float>((size_t)NNODE * D, 313);
  std::vector<int2> hp(NPAIR);
  unsigned seed = 314;
  for (auto& q : hp) {
    seed = seed * 1664525u + 1013904223u; q.x = (int)((seed >> 4) & (NNODE - 1));
    seed = seed * 1664525u + 1013904223u; q.y = (int)((seed >> 4) & (NNODE - 1));
  }
  int2* pairs; CK(cudaMalloc(&pairs, NPAIR * sizeof(int2)));
  CK(cudaMemcpy(pairs, hp.data(), NPAIR * sizeof(int2), cudaMemcpyHostToDevice));
  float* score; CK(cudaMalloc(&score, NPAIR * 4));
  float us = median_us([&] {
    if (fixed) edge_score<<<NPAIR / 8, 256>>>(h, pairs, score, NPAIR);
    else edge_score<<<NPAIR, 32>>>(h, pairs, score, NPAIR);  // ROOT
  }, reps_of(argc, argv));
  report("ho3_pairwise_32t", fixed, us);
}
