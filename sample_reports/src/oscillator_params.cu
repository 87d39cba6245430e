// loop-invariant-load. bad: a damped-oscillator integrator copies its channel's parameter struct
// from global memory inside the time loop; the store to pos[] may alias the struct, so the three
// doubles are loaded again every step, ahead of the dependent update. fixed: the struct is copied once.
#include "sample.cuh"
struct Osc { double k, c, dt; };
const int CH = 8, PER = 132 * 64, STEPS = 2048;
template <bool FIXED>
__global__ void integrate(double* pos, const Osc* osc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double* p = pos + (size_t)blockIdx.y * PER + i;
  const Osc* o = osc + blockIdx.y;
  const Osc once = FIXED ? *o : Osc{};
  double x = *p, v = 0.0;
  for (int s = 0; s < STEPS; ++s) {
    const Osc q = FIXED ? once : *o;  // ROOT: re-read after every store to pos
    v += q.dt * (-q.k * x - q.c * v);
    x += q.dt * v;
    *p = x;
  }
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  std::vector<Osc> h(CH); for (int c = 0; c < CH; ++c) h[c] = {1.0 + c, 0.05 * c, 1e-3};
  Osc* osc; CK(cudaMalloc(&osc, CH * sizeof(Osc))); CK(cudaMemcpy(osc, h.data(), CH * sizeof(Osc), cudaMemcpyHostToDevice));
  double* pos = device_fill<double>((size_t)CH * PER, 151);
  float us = median_us([&] {
    if (fixed) integrate<true><<<dim3(PER / 256, CH), 256>>>(pos, osc);
    else integrate<false><<<dim3(PER / 256, CH), 256>>>(pos, osc);
  }, reps_of(argc, argv));
  report("oscillator_params", fixed, us);
}
