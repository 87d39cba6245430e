// ldmatrix (LDSM) fragment loads from a 64 x 64 fp16 shared tile, as a tensor-core GEMM's
// inner loop feeds its MMAs: each warp of a 256-thread block issues 2048 ldmatrix.x4 (four 8 x 8
// matrices; lane l gives the address of row l % 16, column block l / 16) and folds the fragments.
// bad: 128-byte rows (64 halves, no padding or swizzle): the 8 rows of each 8 x 8 matrix start
// 128 bytes apart, all in the same 4 banks, so each LDSM phase is an 8-way conflict.
// fixed: 144-byte rows (72 halves): consecutive rows start 4 banks apart and a matrix's 8 rows
// cover all 32 banks. Same fragments: bit-identical.
#include "sample.cuh"
template <int LD>
__global__ void __launch_bounds__(256) fragment_loads(const unsigned* __restrict__ g, unsigned* __restrict__ out) {
  __shared__ __align__(16) unsigned short tile[64 * LD];
  for (int i = threadIdx.x; i < 64 * LD; i += blockDim.x) tile[i] = (unsigned short)g[(blockIdx.x * 64 + i) & 65535];
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned acc = 0;
  for (int it = 0; it < 2048; ++it) {
    int r = (lane & 15) + ((warp + it) & 3) * 16;
    int c = (lane >> 4) * 8 + (it & 3) * 16;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[r * LD + c]);
    unsigned a0, a1, a2, a3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(addr));  // ROOT
    acc ^= a0 + a1 * 3u + a2 * 5u + a3 * 7u;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  unsigned* g = device_keys(1 << 16, 11);
  unsigned* out; CK(cudaMalloc(&out, 1056 * 256 * sizeof(unsigned)));
  float us = median_us([&] {
    if (fixed) fragment_loads<72><<<1056, 256>>>(g, out);
    else fragment_loads<64><<<1056, 256>>>(g, out);
  }, reps_of(argc, argv));
  report("smem_ldmatrix", fixed, us);
}
