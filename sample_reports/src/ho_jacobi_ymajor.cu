// One Jacobi sweep of the 2-D Poisson problem on a 4096 x 4096 row-major float grid (rows = j,
// contiguous columns = i), 16 x 16 thread blocks. bad: the index mapping of a Fortran-order port,
// threadIdx.x walks the rows and threadIdx.y the contiguous columns, so a warp's 32 lanes touch 16
// rows (2 adjacent floats each) per access. fixed: threadIdx.x walks the contiguous columns.
#include "sample.cuh"
const int NX = 4096, NY = 4096, TB = 16;
template <bool FIXED>
__global__ void jacobi_sweep(const float* __restrict__ u, const float* __restrict__ f, float* __restrict__ un, float h2) {
  const int j = FIXED ? blockIdx.y * TB + threadIdx.y : blockIdx.x * TB + threadIdx.x;  // row
  const int i = FIXED ? blockIdx.x * TB + threadIdx.x : blockIdx.y * TB + threadIdx.y;  // column (contiguous)
  if (j < 1 || j >= NY - 1 || i < 1 || i >= NX - 1) return;
  const size_t c = (size_t)j * NX + i;
  un[c] = 0.25f * (u[c - NX] + u[c + NX] + u[c - 1] + u[c + 1] - h2 * f[c]);  // ROOT
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* u = device_fill<float>((size_t)NX * NY, 19);
  float* f = device_fill<float>((size_t)NX * NY, 20);
  float* un; CK(cudaMalloc(&un, (size_t)NX * NY * 4)); CK(cudaMemset(un, 0, (size_t)NX * NY * 4));
  dim3 grid(NX / TB, NY / TB), block(TB, TB);
  float us = median_us([&] {
    if (fixed) jacobi_sweep<true><<<grid, block>>>(u, f, un, 1e-4f);
    else jacobi_sweep<false><<<grid, block>>>(u, f, un, 1e-4f);
  }, reps_of(argc, argv));
  report("ho_jacobi_ymajor", fixed, us);
}
