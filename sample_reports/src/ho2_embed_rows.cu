// Embedding lookup (nn.Embedding forward): 2^20 token ids into a 2^18 x 64 float table, output
// [2^20 x 64], loop-free, 256-thread blocks, embedding width a template parameter. Rows are 256
// contiguous bytes, so every warp access is coalesced; the cost is the dependent chain id -> row.
// bad: one output float per thread (16.8 M threads): each thread loads its token id (broadcast
// within the row), waits a full memory latency, then loads ONE 4-byte value and stores it.
// fixed: each thread copies a 16-byte column chunk of four consecutive tokens: four ids, then four
// independent 16-byte row loads in flight, four 16-byte stores (grid 16x smaller). Same bytes moved.
#include "sample.cuh"
const int D = 64, VOCAB = 1 << 18, TOKENS = 1 << 20, TOK_PER_THREAD = 4;
template <int DIM>
__global__ void __launch_bounds__(256) embedding_fwd(const int* __restrict__ ids, const float* __restrict__ table, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int tok = i / DIM, d = i % DIM;
  out[i] = table[(size_t)ids[tok] * DIM + d];  // ROOT
}
template <int DIM, int TPT>
__global__ void __launch_bounds__(256) embedding_fwd_vec(const int* __restrict__ ids, const float* __restrict__ table, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int c4 = i % (DIM / 4), group = i / (DIM / 4);  // float4 column, group of TPT tokens
  int id[TPT];
#pragma unroll
  for (int k = 0; k < TPT; ++k) id[k] = ids[group * TPT + k];
  float4 v[TPT];
#pragma unroll
  for (int k = 0; k < TPT; ++k) v[k] = reinterpret_cast<const float4*>(table + (size_t)id[k] * DIM)[c4];
#pragma unroll
  for (int k = 0; k < TPT; ++k) reinterpret_cast<float4*>(out + (size_t)(group * TPT + k) * DIM)[c4] = v[k];
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* table = device_fill<float>((size_t)VOCAB * D, 81);
  int* ids;
  {
    std::vector<int> h(TOKENS);
    unsigned seed = 82;
    for (auto& v : h) { seed = seed * 1664525u + 1013904223u; v = (int)((seed >> 8) & (VOCAB - 1)); }
    CK(cudaMalloc(&ids, (size_t)TOKENS * 4));
    CK(cudaMemcpy(ids, h.data(), (size_t)TOKENS * 4, cudaMemcpyHostToDevice));
  }
  float* out; CK(cudaMalloc(&out, (size_t)TOKENS * D * 4));
  const int total = TOKENS * D;
  float us = median_us([&] {
    if (fixed) embedding_fwd_vec<D, TOK_PER_THREAD><<<total / 4 / TOK_PER_THREAD / 256, 256>>>(ids, table, out);
    else embedding_fwd<D><<<total / 256, 256>>>(ids, table, out);
  }, reps_of(argc, argv));
  report("ho2_embed_rows", fixed, us);
}
