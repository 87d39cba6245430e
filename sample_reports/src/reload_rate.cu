// loop-invariant-load. bad: rate[0] is loaded again in every step because the store to traj
// may alias it, and each step waits for that load. fixed: the rate is read once before the loop.
#include "sample.cuh"
const int N = 132 * 2048, STEPS = 512, SLOTS = 8;
template <bool FIXED>
__global__ void trajectory(float* traj, const float* rate, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = 1.f;
  const float r0 = FIXED ? rate[0] : 0.f;
  for (int s = 0; s < STEPS; ++s) {
    if (FIXED) v = v * r0 + 1.f;
    else v = v * rate[0] + 1.f;  // ROOT: reloaded every step (traj may alias rate)
    traj[(size_t)(s % SLOTS) * n + i] = v;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* traj; CK(cudaMalloc(&traj, (size_t)N * SLOTS * 4 + 64));
  float* rate = traj + (size_t)N * SLOTS;
  float h = 0.5f; CK(cudaMemcpy(rate, &h, 4, cudaMemcpyHostToDevice));
  float us = median_us([&] {
    if (fixed) trajectory<true><<<N / 256, 256>>>(traj, rate, N);
    else trajectory<false><<<N / 256, 256>>>(traj, rate, N);
  }, reps_of(argc, argv));
  report("reload_rate", fixed, us);
}
