// tail-effect (persistent fix). bad: a 128 KB substitution table in shared memory allows one
// 1024-thread block per SM; one block per tile gives 1.2 waves, the last 0.2 wave runs alone.
// fixed: a persistent grid of exactly one wave (occupancy API) strides over single elements.
#include "sample.cuh"
const int THREADS = 1024, PER_THREAD = 16, ROUNDS = 64, LUT = 1 << 16;
__global__ void sbox_cipher(const unsigned short* __restrict__ lut, const unsigned short* __restrict__ in,
                            unsigned short* __restrict__ out, int n, int per_thread) {
  extern __shared__ unsigned short box[];
  for (int i = threadIdx.x; i < LUT; i += blockDim.x) box[i] = lut[i];
  __syncthreads();
  int first = blockIdx.x * blockDim.x * (per_thread ? per_thread : 1) + threadIdx.x;
  int last = per_thread ? first + blockDim.x * per_thread : n;
  int step = per_thread ? blockDim.x : gridDim.x * blockDim.x;
  for (int g = first; g < last; g += step) {  // ROOT: bad: each block owns one tile, 1.2 waves of tiles
    unsigned v = in[g];
    for (int r = 0; r < ROUNDS; ++r) v = box[(v ^ (r * 0x9e37u)) & (LUT - 1)];
    out[g] = (unsigned short)v;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int dev, sms, per_sm, smem = LUT * 2;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaFuncSetAttribute(sbox_cipher, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sbox_cipher, THREADS, smem));
  int wave = sms * per_sm, tiles = wave * 6 / 5, n = tiles * THREADS * PER_THREAD;
  unsigned short* lut = (unsigned short*)device_keys(LUT / 2, 101);
  unsigned short* in = (unsigned short*)device_keys(n / 2, 103);
  unsigned short* out; CK(cudaMalloc(&out, (size_t)n * 2));
  int blocks = fixed ? wave : tiles, per_thread = fixed ? 0 : PER_THREAD;  // ROOT-LAUNCH
  float us = median_us([&] { sbox_cipher<<<blocks, THREADS, smem>>>(lut, in, out, n, per_thread); }, reps_of(argc, argv));
  report("tail_sbox", fixed, us);
}
