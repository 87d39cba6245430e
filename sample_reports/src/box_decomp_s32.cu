// integer-division. bad: a grid-stride loop over a flattened 3-D box splits every index with two
// signed divisions by run-time sizes. fixed: nested loops (blocks over rows, threads along x): one division per row.
#include "sample.cuh"
const int NX = 1024, NY = 512, NZ = 256, BLOCKS = 132 * 8, T = 256;
template <bool FIXED>
__global__ void quad3d(float* __restrict__ part, int nx, int ny, int nz, float h) {
  float acc = 0.f;
  if (!FIXED) {
    int nxy = nx * ny, total = nxy * nz;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < total; j += gridDim.x * blockDim.x) {
      int iz = j / nxy, r = j - iz * nxy, iy = r / nx, ix = r - iy * nx;  // ROOT: two divisions per point
      float x = ix * h, y = iy * h, z = iz * h;
      acc += x * y + z * z;
    }
  } else {
    for (int row = blockIdx.x; row < ny * nz; row += gridDim.x) {
      int iz = row / ny, iy = row - iz * ny;
      float y = iy * h, z = iz * h;
      for (int ix = threadIdx.x; ix < nx; ix += blockDim.x) { float x = ix * h; acc += x * y + z * z; }
    }
  }
  part[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* part; CK(cudaMalloc(&part, BLOCKS * T * 4));
  float us = median_us([&] {
    if (fixed) quad3d<true><<<BLOCKS, T>>>(part, NX, NY, NZ, 1.f / NX);
    else quad3d<false><<<BLOCKS, T>>>(part, NX, NY, NZ, 1.f / NX);
  }, reps_of(argc, argv));
  report("box_decomp_s32", fixed, us);
}
