// Batched solve of 2^20 independent 4 x 4 systems A X = B with 4 right-hand sides (e.g. per-vertex
// or per-cell 4 x 4 blocks of a block-Jacobi step), Gauss-Jordan elimination without pivoting
// (diagonally dominant): one thread per matrix element (r, c) holds A[r][c] and B[r][c]; each of
// the 4 elimination steps gets the pivot, the pivot row and the row's multiplier with width-16
// shuffles; then X = B. Per system 128 bytes are read (coalesced 64-byte groups) and 64 written.
// bad: one block of 16 threads per system (2^20 blocks): each warp has 16 live lanes, and the
// 32-resident-blocks-per-SM limit caps the SM at 32 half-empty warps (512 threads of 2048). The
// kernel is loop-free and short, so each warp has 2 x 64 bytes of loads in flight: ~4 KB per SM,
// far too little to cover DRAM latency (memory-latency-bound, well under DRAM bandwidth).
// fixed: the same kernel with 256-thread blocks = 16 systems per block (each half-warp one system):
// 64 full warps per SM, 4x the bytes in flight per SM. Expected gain ~3-4x (toward the ~60 us that
// 192 MB at DRAM bandwidth takes). Bit-identical.
#include "sample.cuh"
#include <cmath>
const int NSYS = 1 << 20;
__global__ void __launch_bounds__(256) gauss_jordan4(const float* __restrict__ A, const float* __restrict__ B,
                                                     float* __restrict__ X, int nsys) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if ((g >> 4) >= nsys) return;  // whole 16-lane groups leave together
  const int t = g & 15, r = t >> 2, c = t & 3;
  const unsigned mask = blockDim.x >= 32 ? 0xffffffffu : 0x0000ffffu;
  float a = A[g], b = B[g];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float inv = 1.f / __shfl_sync(mask, a, k * 4 + k, 16);
    const float akc = __shfl_sync(mask, a, k * 4 + c, 16) * inv;  // pivot row, normalized
    const float bkc = __shfl_sync(mask, b, k * 4 + c, 16) * inv;
    const float f = __shfl_sync(mask, a, r * 4 + k, 16);          // multiplier A[r][k]
    if (r == k) { a = akc; b = bkc; }
    else { a = fmaf(-f, akc, a); b = fmaf(-f, bkc, b); }
  }
  X[g] = b;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<float> ha((size_t)NSYS * 16);
  unsigned seed = 310;
  for (size_t s = 0; s < (size_t)NSYS; ++s)
    for (int t = 0; t < 16; ++t) {
      seed = seed * 1664525u + 1013904223u;
      const float u = (seed >> 8) * (1.0f / 16777216.0f);
      ha[s * 16 + t] = (t >> 2) == (t & 3) ? 3.f + u : u - 0.5f;
    }
  float* A; CK(cudaMalloc(&A, ha.size() * 4));
  CK(cudaMemcpy(A, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
  float* B = device_fill<float>((size_t)NSYS * 16, 311);
  float* X; CK(cudaMalloc(&X, (size_t)NSYS * 16 * 4));
  float us = median_us([&] {
    if (fixed) gauss_jordan4<<<NSYS / 16, 256>>>(A, B, X, NSYS);
    else gauss_jordan4<<<NSYS, 16>>>(A, B, X, NSYS);  // ROOT
  }, reps_of(argc, argv));
  {  // check the last system: A X == B
    const size_t s = NSYS - 1;
    float hb[16], hx[16], err = 0.f;
    CK(cudaMemcpy(hb, B + s * 16, 64, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hx, X + s * 16, 64, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        float v = 0.f;
        for (int k = 0; k < 4; ++k) v += ha[s * 16 + r * 4 + k] * hx[k * 4 + c];
        err = fmaxf(err, fabsf(v - hb[r * 4 + c]));
      }
    if (!(err < 1e-4f)) fprintf(stderr, "check failed: max residual %g\n", err);
  }
  report("ho3_elim4x4", fixed, us);
}
