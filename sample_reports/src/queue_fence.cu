// memory-barrier (libcu++ fence). bad: warps take 512-element chunks from a work queue and issue
// a device-scope fence after every element they store. fixed: one fence per chunk, just before
// the chunk's done flag is released, which is the only ordering the protocol needs.
#include "sample.cuh"
#include <cuda/atomic>
const int N = 1 << 24, PER_LANE = 16, CHUNK = 32 * PER_LANE, CHUNKS = N / CHUNK, BLOCKS = 132 * 8;
template <bool FIXED>
__global__ void chunk_queue(const float* __restrict__ in, float* out, unsigned* head, unsigned base, int* done) {
  int lane = threadIdx.x & 31;
  for (;;) {
    unsigned c = 0;
    if (lane == 0) c = atomicAdd(head, 1u) - base;  // head only grows: each launch starts at base
    c = __shfl_sync(0xffffffffu, c, 0);
    if (c >= CHUNKS) break;
    for (int k = 0; k < PER_LANE; ++k) {
      size_t j = (size_t)c * CHUNK + k * 32 + lane;
      out[j] = sqrtf(in[j]) * 0.5f + 1.f;
      if (!FIXED) cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);  // ROOT: drains each store
    }
    if (FIXED) cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
    if (lane == 0) cuda::atomic_ref<int, cuda::thread_scope_device>(done[c]).store(1, cuda::memory_order_relaxed);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 127);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  unsigned* head; CK(cudaMalloc(&head, 4));
  int* done; CK(cudaMalloc(&done, CHUNKS * 4));
  CK(cudaMemset(head, 0, 4));
  unsigned base = 0;  // every warp overshoots the queue once, so a launch takes CHUNKS + warps tickets
  float us = median_us([&] {
    if (fixed) chunk_queue<true><<<BLOCKS, 256>>>(in, out, head, base, done);
    else chunk_queue<false><<<BLOCKS, 256>>>(in, out, head, base, done);
    base += CHUNKS + BLOCKS * 8;
  }, reps_of(argc, argv));
  report("queue_fence", fixed, us);
}
