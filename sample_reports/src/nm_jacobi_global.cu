// Near miss for loop-invariant-load: a block smooths its own row in place in global memory. Each
// thread reads row[i-1], row[i], row[i+1] at the same addresses every iteration, but its neighbours
// rewrite them between barriers, so the loads must be repeated: hoisting them would be wrong.
// Both variants run the same kernel.
#include "sample.cuh"
const int T = 256, BLOCKS = 132 * 8, ITERS = 512;
__global__ void smooth_rows(float* u) {
  float* row = u + (size_t)blockIdx.x * (T + 2);
  int i = threadIdx.x + 1;
  for (int it = 0; it < ITERS; ++it) {
    float v = 0.25f * (row[i - 1] + 2.f * row[i] + row[i + 1]);  // same addresses, new values each iteration
    __syncthreads();
    row[i] = v;
    __syncthreads();
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* u = device_fill<float>((size_t)BLOCKS * (T + 2), 157);
  float us = median_us([&] { smooth_rows<<<BLOCKS, T>>>(u); }, reps_of(argc, argv));
  report("nm_jacobi_global", fixed, us);
}
