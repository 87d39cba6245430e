// global-uncoalesced. bad: keys live inside 64-byte records, so a warp's 32 loads touch 32
// different sectors and use 4 of every 32 bytes fetched. fixed: keys stored contiguously (SoA).
#include "sample.cuh"
struct Record { float key; float payload[15]; };
const int N = 1 << 22;
__global__ void scale_keys_aos(const Record* __restrict__ recs, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float k = recs[i].key;  // ROOT: 64-byte stride across the warp
    out[i] = k * 2.f + 1.f;
  }
}
__global__ void scale_keys_soa(const float* __restrict__ keys, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float k = keys[i];
    out[i] = k * 2.f + 1.f;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  Record* recs; CK(cudaMalloc(&recs, (size_t)N * sizeof(Record))); CK(cudaMemset(recs, 0, (size_t)N * sizeof(Record)));
  float* keys = device_fill<float>(N, 3);
  float* out; CK(cudaMalloc(&out, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) scale_keys_soa<<<N / 256, 256>>>(keys, out, N);
    else scale_keys_aos<<<N / 256, 256>>>(recs, out, N);
  }, reps_of(argc, argv));
  report("aos_gather", fixed, us);
}
