// NEAR MISS (memory-latency). Rotary position embedding (GPT-NeoX half-rotation) applied to a
// query tensor [16384 tokens, 32 heads, 128 dims] fp32 (256 MB in, 256 MB out) with cos/sin
// tables [16384][64] (4 MB each, L2-resident): loop-free, one thread per (token, head, 4-dim
// group): it loads the float4 at dims 4j..4j+3 and its partner at 64+4j (two 16-byte loads of q)
// plus cos/sin float4s, and stores two float4s. No loop, one element group per thread -- the
// shape that invites "too few bytes in flight per warp / give each thread more independent
// loads".
// bad: rope_apply, one (token, head, group) per thread, 16 threads per head row.
// fixed: rope_apply_x2, each thread handles two heads (h, h + 16) with all 8 loads issued
// before use -- twice the independent loads in flight per thread, grid halved.
// Why it does not help: per SM 64 warps x 32 lanes x 32 B of q = 64 KB of DRAM loads are already
// in flight, 3-4x the ~15-25 KB that covers DRAM latency at full bandwidth; the bad variant already
// streams its 512 MB at ~90% of DRAM bandwidth (long-scoreboard stalls are high, but they are
// the queueing of a saturated memory system, not idle bandwidth). Expected ~1.0x (0.97-1.05).
// SASS (sm_90, -O3): bad: loop-free, 4 LDG.E.128.CONSTANT (2 q halves, cos, sin), 8 FMUL +
// 8 FFMA, 2 STG.E.128, 32 regs (64 warps/SM); fixed: 6 LDG.E.128.CONSTANT (4 q, cos/sin shared by
// the two heads) issued ahead of 16 FMUL + 16 FFMA, 4 STG.E.128, 38 regs (48 warps/SM).
// Bit-identical output.
#include "sample.cuh"
const int T = 16384, NH = 32, HD = 128, HALF = HD / 2, G = HALF / 4;  // G float4 groups per half
__device__ __forceinline__ void rot(const float4 a, const float4 b, const float4 c, const float4 s, float4& oa, float4& ob) {
  oa.x = fmaf(a.x, c.x, -b.x * s.x); oa.y = fmaf(a.y, c.y, -b.y * s.y); oa.z = fmaf(a.z, c.z, -b.z * s.z); oa.w = fmaf(a.w, c.w, -b.w * s.w);
  ob.x = fmaf(b.x, c.x, a.x * s.x); ob.y = fmaf(b.y, c.y, a.y * s.y); ob.z = fmaf(b.z, c.z, a.z * s.z); ob.w = fmaf(b.w, c.w, a.w * s.w);
}
__global__ void __launch_bounds__(256) rope_apply(const float4* __restrict__ q, const float4* __restrict__ cosT,
                                                  const float4* __restrict__ sinT, float4* __restrict__ out) {
  const unsigned i = blockIdx.x * 256 + threadIdx.x;  // (token, head, group)
  const unsigned j = i % G, th = i / G, t = th / NH;
  const unsigned lo = th * (HD / 4) + j, hi = lo + G;
  const float4 a = q[lo], b = q[hi];  // ROOT
  const float4 c = cosT[t * G + j], s = sinT[t * G + j];
  float4 oa, ob;
  rot(a, b, c, s, oa, ob);
  out[lo] = oa; out[hi] = ob;
}
__global__ void __launch_bounds__(256) rope_apply_x2(const float4* __restrict__ q, const float4* __restrict__ cosT,
                                                     const float4* __restrict__ sinT, float4* __restrict__ out) {
  const unsigned i = blockIdx.x * 256 + threadIdx.x;  // (token, head < 16, group)
  const unsigned j = i % G, th0 = i / G, t = th0 / (NH / 2), h = th0 % (NH / 2);
  const unsigned lo0 = (t * NH + h) * (HD / 4) + j, lo1 = lo0 + (NH / 2) * (HD / 4);
  const float4 a0 = q[lo0], b0 = q[lo0 + G], a1 = q[lo1], b1 = q[lo1 + G];
  const float4 c = cosT[t * G + j], s = sinT[t * G + j];
  float4 oa, ob;
  rot(a0, b0, c, s, oa, ob); out[lo0] = oa; out[lo0 + G] = ob;
  rot(a1, b1, c, s, oa, ob); out[lo1] = oa; out[lo1 + G] = ob;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  const size_t n = (size_t)T * NH * HD;
  float* q = device_fill<float>(n, 181);
  std::vector<float> hc((size_t)T * HALF), hs((size_t)T * HALF);
  for (int t = 0; t < T; ++t)
    for (int d = 0; d < HALF; ++d) {
      const double f = t * pow(10000.0, -2.0 * d / HD);
      hc[(size_t)t * HALF + d] = (float)cos(f); hs[(size_t)t * HALF + d] = (float)sin(f);
    }
  float *cosT, *sinT; CK(cudaMalloc(&cosT, hc.size() * 4)); CK(cudaMalloc(&sinT, hs.size() * 4));
  CK(cudaMemcpy(cosT, hc.data(), hc.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sinT, hs.data(), hs.size() * 4, cudaMemcpyHostToDevice));
  const size_t n_out = n;
  float* out; CK(cudaMalloc(&out, n_out * 4));
  const unsigned units = T * NH * G;
  float us = median_us([&] {
    if (fixed) rope_apply_x2<<<units / 2 / 256, 256>>>((const float4*)q, (const float4*)cosT, (const float4*)sinT, (float4*)out);
    else rope_apply<<<units / 256, 256>>>((const float4*)q, (const float4*)cosT, (const float4*)sinT, (float4*)out);
  }, reps_of(argc, argv));
  report("ho4_rope_f4_nm", fixed, us);
}
