// Per-class positive counts for a thresholded classifier (precision/recall bookkeeping): 2^24
// (score, label) pairs, 16 classes, threshold 0.75, grid-stride loop over 8 blocks of 256 threads
// per SM. bad: `if (score > thr) atomicAdd(&count[label], 1)` straight into the 16 global counters
// (a short data-dependent branch around the RED), so a quarter of all elements update one of 16
// words in one L2 line. fixed: the block counts into 16 shared-memory counters behind the same
// branch and adds its 16 totals to the global counters once at the end.
#include "sample.cuh"
#include <cstdint>
const int N = 1 << 24, CLASSES = 16;
template <bool FIXED>
__global__ void __launch_bounds__(256) count_positives(const float* __restrict__ score, const uint8_t* __restrict__ label,
                                                       float thr, unsigned* __restrict__ count, int n) {
  __shared__ unsigned local[CLASSES];
  if (FIXED) {
    if (threadIdx.x < CLASSES) local[threadIdx.x] = 0;
    __syncthreads();
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float s = score[i];
    const int c = label[i];
    if (!FIXED) {
      if (s > thr) atomicAdd(&count[c], 1u);  // ROOT
    } else {
      if (s > thr) atomicAdd(&local[c], 1u);
    }
  }
  if (FIXED) {
    __syncthreads();
    if (threadIdx.x < CLASSES) atomicAdd(&count[threadIdx.x], local[threadIdx.x]);
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* score = device_fill<float>(N, 23);
  uint8_t* label;
  {
    unsigned* k = device_keys(N / 4, 24);  // four random bytes per key
    label = reinterpret_cast<uint8_t*>(k);
    std::vector<uint8_t> h(N); CK(cudaMemcpy(h.data(), label, N, cudaMemcpyDeviceToHost));
    for (auto& v : h) v &= CLASSES - 1;
    CK(cudaMemcpy(label, h.data(), N, cudaMemcpyHostToDevice));
  }
  unsigned* count; CK(cudaMalloc(&count, CLASSES * 4)); CK(cudaMemset(count, 0, CLASSES * 4));
  float us = median_us([&] {
    if (fixed) count_positives<true><<<8 * sms, 256>>>(score, label, 0.75f, count, N);
    else count_positives<false><<<8 * sms, 256>>>(score, label, 0.75f, count, N);
  }, reps_of(argc, argv));
  report("ho_posclass_count", fixed, us);
}
