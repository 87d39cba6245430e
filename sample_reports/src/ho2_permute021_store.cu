// x.transpose(1, 2).contiguous() for a [B=32][S=1024][D=1024] float tensor (sequence-major
// activations turned channel-major for a 1-D convolution): out[b][d][s] = in[b][s][d], 128 MB.
// bad: a generic elementwise copy that walks the SOURCE order (grid D/256 x S x B, 256 threads,
// thread = d): loads are coalesced, but the 32 lanes of a warp store to 32 addresses S floats
// (4 KB) apart: 32 sectors of 32 bytes per store instruction for 128 useful bytes (L2 merges the
// partial sectors later, but every warp store costs 32 L1/L2 transactions).
// fixed: the same copy through a 32 x 33 shared-memory tile (32 x 8 threads, 4 elements each way),
// so both the loads along d and the stores along s are warp-contiguous. Same elements moved.
#include "sample.cuh"
const int B = 32, S = 1024, D = 1024, TILE = 32, ROWS = 8;
__global__ void __launch_bounds__(256) copy_permute021(const float* __restrict__ in, float* __restrict__ out, int seq, int dim) {
  const int d = blockIdx.x * blockDim.x + threadIdx.x, s = blockIdx.y, b = blockIdx.z;
  if (d >= dim) return;
  const float v = in[((size_t)b * seq + s) * dim + d];
  out[((size_t)b * dim + d) * seq + s] = v;  // ROOT
}
__global__ void __launch_bounds__(TILE * ROWS) copy_permute021_tiled(const float* __restrict__ in, float* __restrict__ out, int seq, int dim) {
  __shared__ float tile[TILE][TILE + 1];
  const int d0 = blockIdx.x * TILE, s0 = blockIdx.y * TILE, b = blockIdx.z;
  const float* src = in + (size_t)b * seq * dim;
  float* dst = out + (size_t)b * dim * seq;
#pragma unroll
  for (int r = 0; r < TILE; r += ROWS) {
    const int s = s0 + r + threadIdx.y;
    tile[r + threadIdx.y][threadIdx.x] = src[(size_t)s * dim + d0 + threadIdx.x];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < TILE; r += ROWS) {
    const int d = d0 + r + threadIdx.y;
    dst[(size_t)d * seq + s0 + threadIdx.x] = tile[threadIdx.x][r + threadIdx.y];
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)B * S * D;
  float* in = device_fill<float>(n, 161);
  float* out; CK(cudaMalloc(&out, n * 4));
  float us = median_us([&] {
    if (fixed) copy_permute021_tiled<<<dim3(D / TILE, S / TILE, B), dim3(TILE, ROWS)>>>(in, out, S, D);
    else copy_permute021<<<dim3(D / 256, S, B), 256>>>(in, out, S, D);
  }, reps_of(argc, argv));
  report("ho2_permute021_store", fixed, us);
}
