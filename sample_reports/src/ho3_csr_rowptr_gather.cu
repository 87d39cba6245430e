// CSR sparse matrix-vector product y = P x for an AMG-style injection/prolongation operator: 2^24
// fine rows, 2^21 coarse columns (x is 8 MB and stays in L2), every row holds at most one nonzero
// (7 of 8 rows have one, every 8th row is empty), so the natural kernel is one thread per row with
// no loop: k = rowptr[r], e = rowptr[r+1]; y[r] = k < e ? val[k] * x[col[k]] : 0.
// bad: one row per thread, 256-thread blocks: each thread issues the rowptr loads, waits a full
// memory latency, issues col[k] and val[k], waits again, issues x[col], waits again, stores: a chain
// of three dependent loads of 4 bytes each, so each warp has at most 128-256 bytes in flight and
// the SM runs out of warps to cover ~3 DRAM/L2 latencies per row (memory-latency bound, DRAM far
// from its bandwidth).
// fixed: four consecutive rows per thread (grid 4x smaller): one 16-byte rowptr load plus
// rowptr[4t+4], then the four col and four val loads issued together, then the four x gathers
// issued together, one float4 store: the same three-level chain but four independent requests at
// each level.
// Expected gain ~1.5-2.5x (more bytes in flight per warp; the streams are ~250 MB so the fixed
// kernel should approach DRAM bandwidth). Bit-identical y (0 for empty rows in both).
#include "sample.cuh"
const int N = 1 << 24, NC = 1 << 21, BLOCK = 256;
__global__ void __launch_bounds__(BLOCK) spmv_inject(const int* __restrict__ rowptr, const int* __restrict__ col,
                                                     const float* __restrict__ val, const float* __restrict__ x,
                                                     float* __restrict__ y) {
  const int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= N) return;
  const int k = rowptr[r], e = rowptr[r + 1];
  float acc = 0.f;
  if (k < e) acc = val[k] * x[col[k]];  // ROOT
  y[r] = acc;
}
__global__ void __launch_bounds__(BLOCK) spmv_inject_x4(const int* __restrict__ rowptr, const int* __restrict__ col,
                                                        const float* __restrict__ val, const float* __restrict__ x,
                                                        float* __restrict__ y) {
  const int t = blockIdx.x * BLOCK + threadIdx.x;  // rows 4t .. 4t+3
  if (4 * t >= N) return;
  const int4 rp = reinterpret_cast<const int4*>(rowptr)[t];
  const int rend = rowptr[4 * t + 4];
  const int k[4] = {rp.x, rp.y, rp.z, rp.w}, e[4] = {rp.y, rp.z, rp.w, rend};
  int c[4];
  float v[4], xv[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    c[j] = k[j] < e[j] ? col[k[j]] : 0;
    v[j] = k[j] < e[j] ? val[k[j]] : 0.f;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) xv[j] = x[c[j]];
  float4 o;
  o.x = k[0] < e[0] ? v[0] * xv[0] : 0.f;
  o.y = k[1] < e[1] ? v[1] * xv[1] : 0.f;
  o.z = k[2] < e[2] ? v[2] * xv[2] : 0.f;
  o.w = k[3] < e[3] ? v[3] * xv[3] : 0.f;
  reinterpret_cast<float4*>(y)[t] = o;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<int> rp(N + 1), cl;
  std::vector<float> vl;
  cl.reserve(N); vl.reserve(N);
  unsigned seed = 17;
  for (int r = 0; r < N; ++r) {
    rp[r] = (int)cl.size();
    if ((r & 7) != 5) {
      seed = seed * 1664525u + 1013904223u;
      cl.push_back((int)((seed >> 8) & (NC - 1)));
      vl.push_back(0.25f + (float)(seed & 255) * (1.0f / 512.0f));
    }
  }
  rp[N] = (int)cl.size();
  int *rowptr, *col; float *val, *y;
  CK(cudaMalloc(&rowptr, (N + 1) * sizeof(int)));
  CK(cudaMalloc(&col, cl.size() * sizeof(int)));
  CK(cudaMalloc(&val, vl.size() * sizeof(float)));
  CK(cudaMalloc(&y, N * sizeof(float)));
  CK(cudaMemcpy(rowptr, rp.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(col, cl.data(), cl.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(val, vl.data(), vl.size() * sizeof(float), cudaMemcpyHostToDevice));
  float* x = device_fill<float>(NC, 18);
  float us = median_us([&] {
    if (fixed) spmv_inject_x4<<<N / 4 / BLOCK, BLOCK>>>(rowptr, col, val, x, y);
    else spmv_inject<<<N / BLOCK, BLOCK>>>(rowptr, col, val, x, y);
  }, reps_of(argc, argv));
  report("ho3_csr_rowptr_gather", fixed, us);
}
