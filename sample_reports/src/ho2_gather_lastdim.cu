// torch.gather(x, dim=1, index) on a [2^20 x 32] float tensor with an int32 index tensor of the same
// shape (each row permutes its 32 columns, e.g. a per-row feature permutation), loop-free, 256-thread
// blocks, row width a template parameter. Each warp covers one row, so the gather itself touches one
// 128-byte line (coalesced); what costs is the chain: load the index, wait, load the value, store.
// bad: one element per thread: 4 bytes of index in flight per thread, then 4 bytes of data, with a
// full memory latency between them. fixed: eight elements per thread: two 16-byte index loads
// (each warp-contiguous), eight independent gathers, two 16-byte stores (grid 8x smaller). Same
// elements moved.
#include "sample.cuh"
const int W = 32, ROWS = 1 << 20, N = ROWS * W, PER = 8;
template <int WIDTH>
__global__ void __launch_bounds__(256) gather_lastdim(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = i / WIDTH;
  out[i] = x[row * WIDTH + idx[i]];  // ROOT
}
template <int WIDTH>
__global__ void __launch_bounds__(256) gather_lastdim_vec8(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ out) {
  // a block moves 2048 elements as 512 groups of four (a group never straddles a row); thread t
  // takes groups t and t + 256 of its block, so each 16-byte load and store is warp-contiguous
  const int g0 = blockIdx.x * 512 + threadIdx.x, g1 = g0 + 256;
  const int4 ia = reinterpret_cast<const int4*>(idx)[g0];
  const int4 ib = reinterpret_cast<const int4*>(idx)[g1];
  const float* xa = x + (4 * g0 / WIDTH) * WIDTH;
  const float* xb = x + (4 * g1 / WIDTH) * WIDTH;
  float4 a, b;
  a.x = xa[ia.x]; a.y = xa[ia.y]; a.z = xa[ia.z]; a.w = xa[ia.w];
  b.x = xb[ib.x]; b.y = xb[ib.y]; b.z = xb[ib.z]; b.w = xb[ib.w];
  reinterpret_cast<float4*>(out)[g0] = a;
  reinterpret_cast<float4*>(out)[g1] = b;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* x = device_fill<float>(N, 71);
  int* idx;
  {
    std::vector<int> h(N);
    for (int r = 0; r < ROWS; ++r) {
      const int rot = (r * 7) & (W - 1);
      for (int c = 0; c < W; ++c) h[(size_t)r * W + c] = (c * 13 + rot) & (W - 1);  // bijection per row (13 is odd)
    }
    CK(cudaMalloc(&idx, (size_t)N * 4));
    CK(cudaMemcpy(idx, h.data(), (size_t)N * 4, cudaMemcpyHostToDevice));
  }
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) gather_lastdim_vec8<W><<<N / PER / 256, 256>>>(x, idx, out);
    else gather_lastdim<W><<<N / 256, 256>>>(x, idx, out);
  }, reps_of(argc, argv));
  report("ho2_gather_lastdim", fixed, us);
}
