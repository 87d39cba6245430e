// Near miss for integer-division: the same flattened 3-D index split inside the hot loop, but the
// box sizes are compile-time constants, so each / and % becomes a multiply-high and shifts.
#include "sample.cuh"
const int NX = 1000, NY = 500, NZ = 250, BLOCKS = 132 * 8, T = 256;
__global__ void quad3d_const(float* __restrict__ part, float h) {
  float acc = 0.f;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < NX * NY * NZ; j += gridDim.x * blockDim.x) {
    int iz = j / (NX * NY), iy = (j / NX) % NY, ix = j % NX;  // constant divisors
    float x = ix * h, y = iy * h, z = iz * h;
    acc += x * y + z * z;
  }
  part[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* part; CK(cudaMalloc(&part, BLOCKS * T * 4));
  float us = median_us([&] { quad3d_const<<<BLOCKS, T>>>(part, 1.f / NX); }, reps_of(argc, argv));
  report("nm_const_divisor", fixed, us);
}
