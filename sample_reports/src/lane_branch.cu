// warp-divergence. bad: odd and even lanes take different loops, so every warp runs both
// paths with half its threads masked. fixed: the choice is made per warp, not per lane.
#include "sample.cuh"
const int N = 132 * 2048 * 2, ITERS = 256;
template <bool FIXED>
__global__ void two_models(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool odd = FIXED ? ((threadIdx.x >> 5) & 1) : (threadIdx.x & 1);
  float v = in[i];
  int trips = ITERS + (int)(v * 4.f);
  if (odd) {  // ROOT: lanes of one warp disagree
    for (int k = 0; k < trips; ++k) v = __sinf(v) * 1.5f + 0.25f;
  } else {
    for (int k = 0; k < trips; ++k) v = __cosf(v) * 0.75f - 0.125f;
  }
  out[i] = v;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(N, 31);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) two_models<true><<<N / 256, 256>>>(in, out);
    else two_models<false><<<N / 256, 256>>>(in, out);
  }, reps_of(argc, argv));
  report("lane_branch", fixed, us);
}
