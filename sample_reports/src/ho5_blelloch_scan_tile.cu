// Tile-level exclusive scan for stream compaction / radix-sort offsets: 64M uint32 per-item output
// counts (0..7) in 131072 tiles of 512, one 256-thread block per tile (GPU Gems 3 ch. 39 "prescan":
// two elements per thread, work-efficient Blelloch up-sweep + down-sweep in shared memory, 9 + 9
// steps with a barrier each); each tile writes its exclusive prefix and its total (for a second-
// level scan, not part of this program).
// bad: prescan_tiles, the algorithm without padding: at the step with stride `offset`, threads
// thid < d touch ai = offset*(2*thid+1)-1 and bi = offset*(2*thid+2)-1, a stride of 2*offset words
// across lanes: 2-, 4-, 8-, 16-, 16-way ... conflicts. The active threads are the lowest d, so the
// busy warps halve as the conflict degree doubles (8, 4, 2, 1 warps of 8 active for offset 1..8,
// then one warp with 16, 8, ... lanes). Up-sweep (LDS ai, LDS bi, STS bi) and down-sweep (LDS ai,
// LDS bi, STS ai, STS bi) are fully predicated (@!Pn, no branch), so all 8 warps execute every
// access and the idle ones contribute 0 wavefronts: ~665 tree wavefronts per tile vs ~140 with
// padding, but the average per executed tree LDS/STS is only ~1.3 (2 on the steps where all or half
// of the warps are busy, <= 1 on the rest).
// fixed: prescan_tiles_cf, the same algorithm with GPU Gems' CONFLICT_FREE_OFFSET(n) = n/32 + n/1024
// padding on every shared index: same active threads, same additions, conflict-free.
// SASS (sm_90, nvcc 13.0, -O3): bad (22 regs): 37 LDS (35 predicated, incl. 2 LDS.64 at offset 1),
// 29 STS (27 predicated, incl. 1 STS.64), 19 BAR.SYNC, no branch in the sweeps. fixed (21 regs):
// 48 LDS, 30 STS, 19 BAR.SYNC; here nvcc skips each step with a BSSY/BRA region (18 BSSY) instead
// of predicating it.
// Expected gain ~1.5-2.2x: bad needs ~700 shared wavefronts per 512-element tile (~1.4 per
// element, the shared pipe is the limit); fixed ~170, leaving DRAM (4 KB per tile) and the 18-barrier
// latency (8 blocks per SM) as the limits. Results: bit-identical (unsigned, same additions).
#include "sample.cuh"
// Work-efficient (Blelloch) exclusive scan of 512-element tiles, GPU Gems 3 ch. 39 "prescan":
// 256 threads per tile, two elements per thread, up-sweep then down-sweep in shared memory.
const int TILE = 512, THREADS = TILE / 2, NTILES = 131072;  // 64M per-item output counts
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) (((n) >> LOG_NUM_BANKS) + ((n) >> (2 * LOG_NUM_BANKS)))
__global__ void __launch_bounds__(THREADS, 8) prescan_tiles(const unsigned* __restrict__ counts, unsigned* __restrict__ offsets,
                                                            unsigned* __restrict__ tile_totals) {
  __shared__ unsigned temp[TILE];
  const int thid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * TILE;
  temp[thid] = counts[base + thid];
  temp[thid + TILE / 2] = counts[base + thid + TILE / 2];
#pragma unroll
  for (int d = TILE >> 1; d > 0; d >>= 1) {  // up-sweep: build partial sums in place
    __syncthreads();
    const int offset = TILE / (2 * d);
    if (thid < d) {
      const int ai = offset * (2 * thid + 1) - 1, bi = offset * (2 * thid + 2) - 1;
      temp[bi] += temp[ai];  // ROOT
    }
  }
  if (thid == 0) { tile_totals[blockIdx.x] = temp[TILE - 1]; temp[TILE - 1] = 0; }
#pragma unroll
  for (int d = 1; d < TILE; d <<= 1) {  // down-sweep: traverse back, building the scan
    __syncthreads();
    const int offset = TILE / (2 * d);
    if (thid < d) {
      const int ai = offset * (2 * thid + 1) - 1, bi = offset * (2 * thid + 2) - 1;
      const unsigned t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  offsets[base + thid] = temp[thid];
  offsets[base + thid + TILE / 2] = temp[thid + TILE / 2];
}
// The same algorithm with GPU Gems' bank-conflict-avoiding padding: index n is stored at
// n + CONFLICT_FREE_OFFSET(n) (one extra word per 32, one more per 1024).
__global__ void __launch_bounds__(THREADS, 8) prescan_tiles_cf(const unsigned* __restrict__ counts, unsigned* __restrict__ offsets,
                                                               unsigned* __restrict__ tile_totals) {
  __shared__ unsigned temp[TILE + CONFLICT_FREE_OFFSET(TILE - 1) + 1];
  const int thid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * TILE;
  const int ai0 = thid, bi0 = thid + TILE / 2;
  const int bank_a = CONFLICT_FREE_OFFSET(ai0), bank_b = CONFLICT_FREE_OFFSET(bi0);
  temp[ai0 + bank_a] = counts[base + ai0];
  temp[bi0 + bank_b] = counts[base + bi0];
#pragma unroll
  for (int d = TILE >> 1; d > 0; d >>= 1) {
    __syncthreads();
    const int offset = TILE / (2 * d);
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1, bi = offset * (2 * thid + 2) - 1;
      ai += CONFLICT_FREE_OFFSET(ai);
      bi += CONFLICT_FREE_OFFSET(bi);
      temp[bi] += temp[ai];
    }
  }
  const int last = TILE - 1 + CONFLICT_FREE_OFFSET(TILE - 1);
  if (thid == 0) { tile_totals[blockIdx.x] = temp[last]; temp[last] = 0; }
#pragma unroll
  for (int d = 1; d < TILE; d <<= 1) {
    __syncthreads();
    const int offset = TILE / (2 * d);
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1, bi = offset * (2 * thid + 2) - 1;
      ai += CONFLICT_FREE_OFFSET(ai);
      bi += CONFLICT_FREE_OFFSET(bi);
      const unsigned t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  offsets[base + ai0] = temp[ai0 + bank_a];
  offsets[base + bi0] = temp[bi0 + bank_b];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NTILES * TILE;
  std::vector<unsigned> h(n);
  unsigned seed = 601;
  for (auto& c : h) { seed = seed * 1664525u + 1013904223u; c = (seed >> 20) & 7u; }  // 0..7 outputs per item
  unsigned* counts; CK(cudaMalloc(&counts, n * 4));
  CK(cudaMemcpy(counts, h.data(), n * 4, cudaMemcpyHostToDevice));
  unsigned *offsets, *totals;
  CK(cudaMalloc(&offsets, n * 4));
  CK(cudaMalloc(&totals, NTILES * 4));
  float us = median_us([&] {
    if (fixed) prescan_tiles_cf<<<NTILES, THREADS>>>(counts, offsets, totals);
    else prescan_tiles<<<NTILES, THREADS>>>(counts, offsets, totals);
  }, reps_of(argc, argv));
  report("ho5_blelloch_scan_tile", fixed, us);
}
