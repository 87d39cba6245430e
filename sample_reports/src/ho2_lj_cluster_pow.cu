// Double-precision Lennard-Jones energies within particle clusters (cluster-pair scheme of an MD
// code): 2^18 particles in clusters of 256, one 256-thread block per cluster, positions staged in
// shared memory, each thread sums the pair energy 4 eps ((s/r)^12 - (s/r)^6) over the 255 other
// particles of its cluster (self pair masked by selects), 2^26 pair terms in all.
// bad: the powers are written pow(sr2, 6.0) and pow(sr2, 3.0) with sr2 = sigma^2 / r^2: two calls
// of the general double pow (log/exp evaluation, special-case branches) per pair.
// fixed: sr6 = sr2 * sr2 * sr2, sr12 = sr6 * sr6 (three DMULs). The 1/r^2 division is the same in
// both; energies agree to rounding.
#include "sample.cuh"
const int NPART = 1 << 18, CLUSTER = 256;
template <bool FIXED>
__global__ void __launch_bounds__(CLUSTER) lj_cluster_energy(const double* __restrict__ pos, double* __restrict__ energy, double sigma2, double eps4) {
  __shared__ double sx[CLUSTER], sy[CLUSTER], sz[CLUSTER];
  const int t = threadIdx.x, i = blockIdx.x * CLUSTER + t;
  const double xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
  sx[t] = xi; sy[t] = yi; sz[t] = zi;
  __syncthreads();
  double e = 0.0;
  for (int j = 0; j < CLUSTER; ++j) {
    const double dx = xi - sx[j], dy = yi - sy[j], dz = zi - sz[j];
    const bool self = (j == t);
    const double r2 = self ? 1.0 : dx * dx + dy * dy + dz * dz;
    const double sr2 = sigma2 / r2;
    double sr6, sr12;
    if (!FIXED) {
      sr6 = pow(sr2, 3.0);  // ROOT
      sr12 = pow(sr2, 6.0);
    } else {
      sr6 = sr2 * sr2 * sr2;
      sr12 = sr6 * sr6;
    }
    e += self ? 0.0 : eps4 * (sr12 - sr6);
  }
  energy[i] = 0.5 * e;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  // each cluster fills a cube of side 7.5 sigma with 256 particles on a jittered 8x8x4 lattice
  std::vector<double> h(3 * (size_t)NPART);
  unsigned seed = 121;
  for (int i = 0; i < NPART; ++i) {
    const int l = i % CLUSTER, cl = i / CLUSTER;
    const double site[3] = {(double)(l & 7), (double)((l >> 3) & 7), (double)(l >> 6)};
    for (int d = 0; d < 3; ++d) {
      seed = seed * 1664525u + 1013904223u;
      const double u = (seed >> 8) * (1.0 / 16777216.0);
      h[3 * (size_t)i + d] = 20.0 * cl + 0.95 * site[d] + 0.3 * (u - 0.5);
    }
  }
  double* pos; CK(cudaMalloc(&pos, h.size() * 8));
  CK(cudaMemcpy(pos, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
  double* energy; CK(cudaMalloc(&energy, (size_t)NPART * 8));
  float us = median_us([&] {
    if (fixed) lj_cluster_energy<true><<<NPART / CLUSTER, CLUSTER>>>(pos, energy, 1.0, 4.0 * 0.8);
    else lj_cluster_energy<false><<<NPART / CLUSTER, CLUSTER>>>(pos, energy, 1.0, 4.0 * 0.8);
  }, reps_of(argc, argv));
  report("ho2_lj_cluster_pow", fixed, us);
}
