// constant-cache-divergence. bad: each lane indexes __constant__ memory with its own data,
// so the constant cache serves the warp one address at a time. fixed: the same table read
// through the read-only data cache (__ldg), which serves divergent addresses in one request.
#include "sample.cuh"
const int TABLE = 1024, N = 132 * 2048 * 2, ROUNDS = 64;
__constant__ float c_table[TABLE];
template <bool FIXED>
__global__ void lut_mix(const unsigned* __restrict__ keys, const float* __restrict__ g_table, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned k = keys[i];
  float acc = 0.f;
  for (int r = 0; r < ROUNDS; ++r) {
    unsigned j = (k >> (r & 15)) & (TABLE - 1);
    if (FIXED) acc += __ldg(&g_table[j]);
    else acc += c_table[j];  // ROOT: 32 different constant addresses per warp
  }
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float> h(TABLE); for (int j = 0; j < TABLE; ++j) h[j] = 1.f / (j + 1);
  CK(cudaMemcpyToSymbol(c_table, h.data(), TABLE * 4));
  float* g; CK(cudaMalloc(&g, TABLE * 4)); CK(cudaMemcpy(g, h.data(), TABLE * 4, cudaMemcpyHostToDevice));
  unsigned* keys = device_keys(N, 41);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) lut_mix<true><<<N / 256, 256>>>(keys, g, out);
    else lut_mix<false><<<N / 256, 256>>>(keys, g, out);
  }, reps_of(argc, argv));
  report("const_lookup", fixed, us);
}
