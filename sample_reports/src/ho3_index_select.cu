// torch.index_select(src, 0, idx) for a [2^20, 16] float table (64 MB, 64-byte rows) and 2^21 int64
// indices (uniform random rows): out [2^21, 16] (128 MB). The generic elementwise form: one thread
// per output element, 256-thread blocks, loop-free: i = t / 16, j = t % 16 (shifts),
// out[t] = src[idx[i] * 16 + j].
// bad: each thread loads its 8-byte index (16 lanes share it), waits a full memory latency, then
// loads 4 bytes of the row and stores 4 bytes: a warp has two 64-byte row segments in flight per
// round trip, too few bytes in flight per SM to cover DRAM latency for a 64 MB random-row gather.
// fixed: one thread per 4 elements (a 16-byte chunk of a row): one index load, then one 16-byte
// LDG.128 of the row chunk and one 16-byte store; 4x the bytes per request, grid 4x smaller.
// Expected gain ~2x (latency-bound -> closer to DRAM bandwidth for 128 MB gathered + 128 MB
// written + 16 MB of indices). Identical output.
#include "sample.cuh"
#include <cstdint>
const int NSRC = 1 << 20, D = 16, NIDX = 1 << 21, BLOCK = 256;
__global__ void __launch_bounds__(BLOCK) index_select_rows(const float* __restrict__ src, const int64_t* __restrict__ idx,
                                                           float* __restrict__ out) {
  const unsigned t = blockIdx.x * BLOCK + threadIdx.x;
  const unsigned i = t / D, j = t % D;
  out[t] = src[idx[i] * D + j];  // ROOT
}
__global__ void __launch_bounds__(BLOCK) index_select_rows_vec4(const float* __restrict__ src, const int64_t* __restrict__ idx,
                                                                float* __restrict__ out) {
  const unsigned t = blockIdx.x * BLOCK + threadIdx.x;  // one 16-byte chunk
  const unsigned i = t / (D / 4), q = t % (D / 4);
  reinterpret_cast<float4*>(out)[t] = reinterpret_cast<const float4*>(src + idx[i] * D)[q];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* src = device_fill<float>((size_t)NSRC * D, 31);
  std::vector<int64_t> h(NIDX);
  unsigned seed = 32;
  for (auto& v : h) { seed = seed * 1664525u + 1013904223u; v = (seed >> 8) & (NSRC - 1); }
  int64_t* idx; CK(cudaMalloc(&idx, NIDX * sizeof(int64_t)));
  CK(cudaMemcpy(idx, h.data(), NIDX * sizeof(int64_t), cudaMemcpyHostToDevice));
  float* out; CK(cudaMalloc(&out, (size_t)NIDX * D * sizeof(float)));
  float us = median_us([&] {
    if (fixed) index_select_rows_vec4<<<NIDX * (D / 4) / BLOCK, BLOCK>>>(src, idx, out);
    else index_select_rows<<<NIDX * D / BLOCK, BLOCK>>>(src, idx, out);
  }, reps_of(argc, argv));
  report("ho3_index_select", fixed, us);
}
