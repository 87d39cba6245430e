// Near miss for loop-invariant-load: x[blockIdx.x] has an address computed outside the loop,
// but thread 0 rewrites it every iteration (a barrier orders the write and the reads), so it
// must be reloaded: hoisting it would break the program. "bad" is that kernel; "fixed" keeps
// the running value in shared memory instead.
#include "../src/sample.cuh"
const int BLOCKS = 132 * 8, T = 256, ITERS = 256;
template <bool SHARED>
__global__ void block_scan(float* x, const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s;
  int b = blockIdx.x, t = threadIdx.x;
  float acc = 0.f;
  for (int it = 0; it < ITERS; ++it) {
    if (t == 0) {
      if (SHARED) s = in[b * ITERS + it] + (it ? s : 0.f);
      else x[b] = in[b * ITERS + it] + (it ? x[b] : 0.f);
    }
    __syncthreads();
    acc += SHARED ? s : x[b];  // read after thread 0's write: not invariant
    __syncthreads();
  }
  out[b * T + t] = acc;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* in = device_fill<float>(BLOCKS * ITERS, 4);
  float* x; CK(cudaMalloc(&x, BLOCKS * 4));
  float* out; CK(cudaMalloc(&out, BLOCKS * T * 4));
  float us = median_us([&] {
    if (fixed) block_scan<true><<<BLOCKS, T>>>(x, in, out);
    else block_scan<false><<<BLOCKS, T>>>(x, in, out);
  }, reps_of(argc, argv));
  report("shared_scalar", fixed, us);
}
