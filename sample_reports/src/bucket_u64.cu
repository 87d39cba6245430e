// integer-division. bad: 64-bit hash % capacity with a run-time capacity calls the 64-bit
// division routine (I2F.U64, MUFU.RCP, many IMAD.HI) for every probe. fixed: the capacity is a power of two, so & (cap - 1).
#include "sample.cuh"
const int N = 132 * 2048 * 2, ROUNDS = 64;
template <bool FIXED>
__global__ void probe_slots(const unsigned* __restrict__ keys, unsigned long long* __restrict__ out,
                            unsigned long long cap) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long h = ((unsigned long long)keys[i] << 32) | (unsigned)i, acc = 0ull;
  for (int r = 0; r < ROUNDS; ++r) {
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    unsigned long long slot;
    if (FIXED) slot = h & (cap - 1ull);
    else slot = h % cap;  // ROOT: 64-bit modulo by a run-time value
    acc += slot;
  }
  out[i] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* keys = device_keys(N, 92);
  unsigned long long* out; CK(cudaMalloc(&out, (size_t)N * 8));
  unsigned long long cap = 1ull << 20;  // a power of two in both variants: same slots
  float us = median_us([&] {
    if (fixed) probe_slots<true><<<N / 256, 256>>>(keys, out, cap);
    else probe_slots<false><<<N / 256, 256>>>(keys, out, cap);
  }, reps_of(argc, argv));
  report("bucket_u64", fixed, us);
}
