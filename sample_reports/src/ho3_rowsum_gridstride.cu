// Row sums of a 65536 x 256 float matrix (x.sum(dim=-1), 64 MB), written as a grid-stride kernel:
// one warp per row, each lane loads two float4 (coalesced 512-byte warp loads), shuffle reduction,
// lane 0 stores; warps stride over the rows by the number of warps in the grid.
// bad: launched with a hard-coded 8 blocks of 256 threads (64 warps for the whole GPU): 8 SMs work,
// 124 idle; each warp walks 1024 rows one after the other with ~1 KB of loads in flight, so the
// busy SMs get ~8 KB in flight each, and the kernel reads 64 MB at a few tens of GB/s.
// fixed: the same kernel launched with SMs x (resident blocks per SM from the occupancy API) =
// 132 x 8 = 1056 blocks, every SM full (64 warps); it should become DRAM-bandwidth-bound (~25 us
// vs ~1 ms): expected gain 20-40x, the work to fill the GPU exists. Same lane-to-element
// assignment, bit-identical sums.
#include "sample.cuh"
const int ROWS = 65536, COLS = 256;
__global__ void __launch_bounds__(256) row_sum(const float4* __restrict__ x, float* __restrict__ y, int rows, int cols4) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int nwarps = (gridDim.x * blockDim.x) >> 5;
  for (int r = warp; r < rows; r += nwarps) {
    const float4* row = x + (size_t)r * cols4;
    float s = 0.f;
    for (int c = lane; c < cols4; c += 32) {
      const float4 v = row[c];
      s += (v.x + v.y) + (v.z + v.w);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[r] = s;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>((size_t)ROWS * COLS, 302);
  float* y; CK(cudaMalloc(&y, ROWS * sizeof(float)));
  int dev, sms, per_sm;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_sum, 256, 0));
  const int full = sms * per_sm;
  float us = median_us([&] {
    if (fixed) row_sum<<<full, 256>>>((const float4*)x, y, ROWS, COLS / 4);
    else row_sum<<<8, 256>>>((const float4*)x, y, ROWS, COLS / 4);  // ROOT
  }, reps_of(argc, argv));
  report("ho3_rowsum_gridstride", fixed, us);
}
