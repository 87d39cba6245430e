// k-means assignment step in double precision: 2^20 points with 4 features (SoA arrays), 48
// centroids staged in shared memory; each thread finds its point's nearest centroid by squared
// Euclidean distance. bad: each squared difference is written pow(d, 2.0). fixed: d * d.
#include "sample.cuh"
const int N = 1 << 20, K = 48, D = 4;
template <bool FIXED>
__global__ void __launch_bounds__(256) assign_nearest(const double* __restrict__ pts, const double* __restrict__ cent,
                                                      int* __restrict__ label, double* __restrict__ dist, int n) {
  __shared__ double c[D][K];
  for (int j = threadIdx.x; j < D * K; j += blockDim.x) c[j / K][j % K] = cent[j];
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double p[D];
#pragma unroll
  for (int f = 0; f < D; ++f) p[f] = pts[(size_t)f * n + i];
  double best = 1e300; int arg = 0;
  for (int k = 0; k < K; ++k) {
    double d2 = 0.0;
#pragma unroll
    for (int f = 0; f < D; ++f) {
      const double diff = p[f] - c[f][k];
      if (!FIXED) d2 += pow(diff, 2.0);  // ROOT
      else d2 += diff * diff;
    }
    if (d2 < best) { best = d2; arg = k; }
  }
  label[i] = arg;
  dist[i] = best;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  double* pts = device_fill<double>((size_t)N * D, 15);
  double* cent = device_fill<double>(K * D, 16);
  int* label; CK(cudaMalloc(&label, N * 4));
  double* dist; CK(cudaMalloc(&dist, (size_t)N * 8));
  float us = median_us([&] {
    if (fixed) assign_nearest<true><<<N / 256, 256>>>(pts, cent, label, dist, N);
    else assign_nearest<false><<<N / 256, 256>>>(pts, cent, label, dist, N);
  }, reps_of(argc, argv));
  report("ho_kmeans_pow", fixed, us);
}
