// Launch-bound and serial-by-algorithm kernels, for drgpu's launch floor and its advice on
// one-block kernels.
//   floor:  an empty kernel (1 block, then one block per SM): the shortest duration ncu
//           reports for a launch on this GPU (drgpu keeps it per chip as the launch floor).
//   serial: a 32x32 diagonal-tile LU factorisation (one block: each step depends on the
//           previous), launched once per tile of a 2048x2048 matrix, as a blocked LU does;
//           "bad" launches the 64 steps one by one, "fixed" replays them as one CUDA graph.
// Usage: serial_steps floor|bad|fixed [REPS]
#include "../src/sample.cuh"
const int N = 2048, T = 32, STEPS = N / T;

__global__ void empty_kernel() {}

__global__ void lu_diagonal_tile(float* a, int n, int step) {
  __shared__ float s[T][T + 1];
  int t = threadIdx.x, o = step * T;
  for (int r = 0; r < T; ++r) s[r][t] = a[(size_t)(o + r) * n + o + t];
  __syncthreads();
  for (int k = 0; k < T - 1; ++k) {  // ROOT: each column depends on the one before
    if (t > k) s[t][k] /= s[k][k];
    __syncthreads();
    if (t > k)
      for (int c = k + 1; c < T; ++c) s[t][c] -= s[t][k] * s[k][c];
    __syncthreads();
  }
  for (int r = 0; r < T; ++r) a[(size_t)(o + r) * n + o + t] = s[r][t];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "bad";
  int reps = reps_of(argc, argv);
  if (strcmp(mode, "floor") == 0) {
    float one = median_us([] { empty_kernel<<<1, 32>>>(); }, reps);
    float full = median_us([] { empty_kernel<<<132, 128>>>(); }, reps);
    printf("empty_kernel 1x32 %.2f us, 132x128 %.2f us (event timing)\n", one, full);
    return 0;
  }
  float* a = device_fill<float>((size_t)N * N, 7);
  auto steps = [&](cudaStream_t st) {
    for (int k = 0; k < STEPS; ++k) lu_diagonal_tile<<<1, T, 0, st>>>(a, N, k);
  };
  bool fixed = strcmp(mode, "fixed") == 0;
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaGraphExec_t exec = nullptr;
  if (fixed) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    steps(st);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
  }
  float us = median_us([&] { if (fixed) CK(cudaGraphLaunch(exec, st)); else steps(st); CK(cudaStreamSynchronize(st)); }, reps);
  printf("serial_steps %s %.2f us for %d launches\n", fixed ? "fixed" : "bad", us, STEPS);
}
