// Batched logistic-growth ODE, dy/dt = r y (1 - y), integrated with 32 classic RK4 steps per element
// in a kernel templated on the element type (instantiated for float, 2^22 elements). The step loop
// is fully unrolled. bad: the RK4 update keeps the textbook double literals,
// `dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)`, so each step widens the four float slopes and y to
// double, combines them in double and narrows y back to float. fixed: the same update written with
// T(6) and T(2), so every step stays in T.
#include "sample.cuh"
const int N = 1 << 22, STEPS = 32;
template <typename T, bool FIXED>
__global__ void rk4_logistic(const T* __restrict__ y0, const T* __restrict__ rate, T* __restrict__ y1, T dt, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T r = rate[i];
  T y = y0[i];
  auto f = [r](T v) { return r * v * (T(1) - v); };
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    const T k1 = f(y);
    const T k2 = f(y + T(0.5) * dt * k1);
    const T k3 = f(y + T(0.5) * dt * k2);
    const T k4 = f(y + dt * k3);
    if (!FIXED) y += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);  // ROOT
    else y += dt / T(6) * (k1 + T(2) * k2 + T(2) * k3 + k4);
  }
  y1[i] = y;
}
int main(int argc, char** argv) {
  bool fixed = want_fixed(argc, argv);
  float* y0 = device_fill<float>(N, 17);
  float* rate = device_fill<float>(N, 18);
  float* y1; CK(cudaMalloc(&y1, (size_t)N * 4));
  float us = median_us([&] {
    if (fixed) rk4_logistic<float, true><<<N / 256, 256>>>(y0, rate, y1, 0.05f, N);
    else rk4_logistic<float, false><<<N / 256, 256>>>(y0, rate, y1, 0.05f, N);
  }, reps_of(argc, argv));
  report("ho_rk4_template", fixed, us);
}
