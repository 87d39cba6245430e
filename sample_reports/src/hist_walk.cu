// occupancy-limited (shared memory). bad: the per-block histogram is sized for 16384 bins (64 KB)
// though keys are < 1024, so three 128-thread blocks fit per SM (12 warps) to walk latency-bound
// linked chunks. fixed: the histogram sized to the key range (4 KB): 16 blocks (64 warps) per SM.
#include "sample.cuh"
const int CHUNKS = 1 << 20, HOPS = 32, KEYS = 1024, THREADS = 128;
__global__ void chain_hist(const int* __restrict__ next, const unsigned* __restrict__ val, unsigned* __restrict__ hist, int bins) {
  extern __shared__ unsigned h[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0;
  __syncthreads();
  int lane = threadIdx.x & 31, c = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  for (int k = 0; k < HOPS; ++k) {
    unsigned v = val[(size_t)c * 32 + lane];  // ROOT: one 128-byte chunk per warp per hop, few warps resident
    atomicAdd(&h[v % KEYS], 1u);
    c = next[c];
  }
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) if (h[b]) atomicAdd(&hist[b], h[b]);
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int* next; CK(cudaMalloc(&next, CHUNKS * 4));
  unsigned* val = device_keys((size_t)CHUNKS * 32, 61);
  unsigned* hist; CK(cudaMalloc(&hist, 16384 * 4));
  { std::vector<int> h(CHUNKS); unsigned s = 67; for (auto& x : h) { s = s * 1664525u + 1013904223u; x = (s >> 8) % CHUNKS; }
    CK(cudaMemcpy(next, h.data(), CHUNKS * 4, cudaMemcpyHostToDevice)); }
  int bins = fixed ? KEYS : 16384;
  CK(cudaFuncSetAttribute(chain_hist, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384 * 4));
  float us = median_us([&] { chain_hist<<<CHUNKS / HOPS / (THREADS / 32), THREADS, bins * 4>>>(next, val, hist, bins); }, reps_of(argc, argv));
  report("hist_walk", fixed, us);
}
