// global-uncoalesced. bad: one thread per row of a row-major float matrix walks along its row,
// so on every step a warp's 32 lanes read 32 rows 2 KB apart. fixed: one warp per row, lanes read
// consecutive columns and combine with shuffles.
#include "sample.cuh"
const int ROWS = 1 << 17, COLS = 512;
template <bool FIXED>
__global__ void row_norms(const float* __restrict__ a, float* __restrict__ out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  if (!FIXED) {
    const float* row = a + (size_t)t * COLS;
    for (int c = 0; c < COLS; ++c) s += row[c] * row[c];  // ROOT: lane stride of one row
    out[t] = s;
  } else {
    int r = t / 32, lane = t % 32;
    const float* row = a + (size_t)r * COLS;
    for (int c = lane; c < COLS; c += 32) s += row[c] * row[c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) out[r] = s;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* a = device_fill<float>((size_t)ROWS * COLS, 11);
  float* out; CK(cudaMalloc(&out, ROWS * 4));
  float us = median_us([&] {
    if (fixed) row_norms<true><<<ROWS * 32 / 256, 256>>>(a, out);
    else row_norms<false><<<ROWS / 256, 256>>>(a, out);
  }, reps_of(argc, argv));
  report("rowwalk_sum", fixed, us);
}
