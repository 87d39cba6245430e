// integer-division. bad: trial division of 32-bit candidates by 512 primes loaded from memory; each
// n % p is a full I2F/MUFU.RCP/F2I/IMAD sequence. fixed: the host precomputes a 64-bit magic per prime (Lemire test).
#include "sample.cuh"
const int N = 132 * 2048, NP = 512;
template <bool FIXED>
__global__ void count_divisors(const unsigned* __restrict__ cand, const unsigned* __restrict__ p,
                               const unsigned long long* __restrict__ magic, unsigned* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned n = cand[i], cnt = 0u;
  for (int k = 0; k < NP; ++k) {
    if (FIXED) cnt += (unsigned long long)n * magic[k] <= magic[k] - 1ull;  // n divisible by p[k]
    else cnt += (n % p[k] == 0u);  // ROOT: divisor changes every iteration
  }
  out[i] = cnt;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<unsigned> p;
  std::vector<unsigned long long> m;
  for (unsigned q = 2; (int)p.size() < NP; ++q) {
    bool prime = true;
    for (unsigned d : p) { if (d * d > q) break; if (q % d == 0) { prime = false; break; } }
    if (prime) { p.push_back(q); m.push_back(~0ull / q + 1ull); }
  }
  unsigned* cand = device_keys(N, 91);
  unsigned *dp, *out; unsigned long long* dm;
  CK(cudaMalloc(&dp, NP * 4)); CK(cudaMalloc(&dm, NP * 8)); CK(cudaMalloc(&out, N * 4));
  CK(cudaMemcpy(dp, p.data(), NP * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dm, m.data(), NP * 8, cudaMemcpyHostToDevice));
  float us = median_us([&] {
    if (fixed) count_divisors<true><<<N / 256, 256>>>(cand, dp, dm, out);
    else count_divisors<false><<<N / 256, 256>>>(cand, dp, dm, out);
  }, reps_of(argc, argv));
  report("trial_div_u32", fixed, us);
}
