// F.normalize(x, p=2, dim=-1) for a retrieval index: 524288 fp16 embeddings of dimension 256
// (256 MB in, 256 MB out, fp32 accumulation). One 256-thread block per 4 rows (8 blocks per SM),
// thread t owns feature t of each row, and the 4 rows' partial sums of squares travel as one float4
// through a generic, header-only block all-reduce helper BlockAllReduce<T, BLOCK_THREADS, ALGO>
// (CUB-like TempStorage in shared memory, any T, any associative Op; here T = float4, Op = Sum4).
// bad: l2_normalize_rows<256, TreeAlgo::Interleaved>: the helper's interleaved tree
// `i = 2*s*tid; if (i < BLOCK_THREADS) buf[i] = op(buf[i], buf[i+s])`: 16-byte entries 2s apart,
// so a busy warp's LDS.128/STS.128 needs 8, 16, 32 wavefronts at s = 1, 2, 4 (ideal 4 for a
// full warp) and 16, 8, 4, 2, 1 (one lane each) for s = 8..128, while the busy warps are 4, 2, 1,
// 1, ... of the 8. nvcc predicates the step (@!P LDS.128, LDS.128, 4 FADD, STS.128; no branch),
// so every warp executes it and the idle ones add 0 wavefronts: ~381 tree wavefronts per block vs
// ~102 conflict-free, yet only ~2 wavefronts per executed LDS.128/STS.128 on average (below the 4
// of an ideal full-warp 128-bit access).
// fixed: the same kernel with TreeAlgo::Sequential (`if (tid < s) buf[tid] = op(buf[tid],
// buf[tid+s])`, s = 128..1): same active threads per step, same adds, consecutive 16-byte entries.
// SASS (sm_90, nvcc 13.0, -O3): both instantiations: 17 LDS.128 (16 predicated @!P0/@!P1, 1 final
// broadcast read), 9 STS.128 (8 predicated, 1 initial), 9 BAR.SYNC, no branch; 29 / 28 regs.
// Expected gain ~1.3-1.6x: bad needs ~420 shared wavefronts per block of 1024 elements (the shared
// pipe is the limit), fixed ~140, leaving DRAM (4 KB per block) as the limit.
// Results: equal to rounding (different fp32 summation order; fp16 outputs identical except for
// rare 1-ulp differences).
#include "sample.cuh"
#include <cuda_fp16.h>
const int NVEC = 524288, DIM = 256, ROWS_PER_BLOCK = 4;  // 512K fp16 embeddings of dimension 256
// ---- block_reduce.cuh: a generic shared-memory block all-reduce (any T, any associative Op) -----
enum class TreeAlgo { Interleaved, Sequential };
template <typename T, int BLOCK_THREADS, TreeAlgo ALGO>
struct BlockAllReduce {
  struct TempStorage { T buf[BLOCK_THREADS]; };
  TempStorage& ts;
  __device__ __forceinline__ explicit BlockAllReduce(TempStorage& t) : ts(t) {}
  template <typename Op>
  __device__ __forceinline__ T Reduce(T v, Op op) {
    const int tid = threadIdx.x;
    ts.buf[tid] = v;
    __syncthreads();
    if (ALGO == TreeAlgo::Interleaved) {
#pragma unroll
      for (int s = 1; s < BLOCK_THREADS; s <<= 1) {
        const int i = 2 * s * tid;
        if (i < BLOCK_THREADS) ts.buf[i] = op(ts.buf[i], ts.buf[i + s]);  // ROOT
        __syncthreads();
      }
    } else {
#pragma unroll
      for (int s = BLOCK_THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) ts.buf[tid] = op(ts.buf[tid], ts.buf[tid + s]);
        __syncthreads();
      }
    }
    return ts.buf[0];
  }
};
struct Sum4 {
  __device__ __forceinline__ float4 operator()(float4 a, float4 b) const {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
};
// ---- the user kernel: F.normalize(x, p=2, dim=-1) on fp16 embeddings, fp32 accumulation ---------
// One block per 4 rows, thread t owns feature t of each row; the 4 rows' partial sums of squares
// travel together as one float4 through the block reduction.
template <int D, TreeAlgo ALGO>
__global__ void __launch_bounds__(D, 2048 / D) l2_normalize_rows(const __half* __restrict__ x, __half* __restrict__ y) {
  using Reduce = BlockAllReduce<float4, D, ALGO>;
  __shared__ typename Reduce::TempStorage tmp;
  static_assert(ROWS_PER_BLOCK == 4, "rows travel as the 4 lanes of a float4");
  const int t = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * ROWS_PER_BLOCK * D + t;
  const float v0 = __half2float(x[base]), v1 = __half2float(x[base + D]);
  const float v2 = __half2float(x[base + 2 * D]), v3 = __half2float(x[base + 3 * D]);
  const float4 ss = Reduce(tmp).Reduce(make_float4(v0 * v0, v1 * v1, v2 * v2, v3 * v3), Sum4());
  y[base] = __float2half_rn(v0 * rsqrtf(fmaxf(ss.x, 1e-24f)));
  y[base + D] = __float2half_rn(v1 * rsqrtf(fmaxf(ss.y, 1e-24f)));
  y[base + 2 * D] = __float2half_rn(v2 * rsqrtf(fmaxf(ss.z, 1e-24f)));
  y[base + 3 * D] = __float2half_rn(v3 * rsqrtf(fmaxf(ss.w, 1e-24f)));
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)NVEC * DIM;
  __half* x = device_fill<__half>(n, 801);
  __half* y; CK(cudaMalloc(&y, n * sizeof(__half)));
  const int blocks = NVEC / ROWS_PER_BLOCK;
  float us = median_us([&] {
    if (fixed) l2_normalize_rows<DIM, TreeAlgo::Sequential><<<blocks, DIM>>>(x, y);
    else l2_normalize_rows<DIM, TreeAlgo::Interleaved><<<blocks, DIM>>>(x, y);
  }, reps_of(argc, argv));
  report("ho5_l2norm_blockreduce_tmpl", fixed, us);
}
