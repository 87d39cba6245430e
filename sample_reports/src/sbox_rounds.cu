// constant-cache-divergence. bad: a byte-substitution mixer looks up a 256-entry __constant__ S-box
// with each lane's own data byte, so the constant cache serves a warp one address at a time.
// fixed: the block copies the S-box into shared memory first and looks it up there.
#include "sample.cuh"
const int N = 132 * 2048 * 4, ROUNDS = 32;
__constant__ unsigned c_sbox[256];
template <bool FIXED>
__global__ void mix_rounds(const unsigned* __restrict__ in, const unsigned* __restrict__ g_sbox, unsigned* __restrict__ out) {
  __shared__ unsigned s_sbox[256];
  if (FIXED) { s_sbox[threadIdx.x] = g_sbox[threadIdx.x]; __syncthreads(); }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = in[i];
  for (int r = 0; r < ROUNDS; ++r) {
    unsigned t;
    if (FIXED) t = s_sbox[x & 255u];
    else t = c_sbox[x & 255u];  // ROOT: up to 32 different constant addresses per warp
    x = __funnelshift_l(x, x, 8) ^ t ^ (unsigned)r;
  }
  out[i] = x;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* g_sbox = device_keys(256, 101);
  CK(cudaMemcpyToSymbol(c_sbox, g_sbox, 256 * 4, 0, cudaMemcpyDeviceToDevice));
  unsigned* in = device_keys(N, 103);
  unsigned* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) mix_rounds<true><<<N / 256, 256>>>(in, g_sbox, out);
    else mix_rounds<false><<<N / 256, 256>>>(in, g_sbox, out);
  }, reps_of(argc, argv));
  report("sbox_rounds", fixed, us);
}
