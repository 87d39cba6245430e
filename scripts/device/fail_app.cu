// A program that launches one kernel and then fails (exit 3): lets a profiler wrapper be
// tested on an application that dies after work was profiled.
#include <cstdio>
#include <cstdlib>
__global__ void doomed(float* p) { p[threadIdx.x] = threadIdx.x; }
int main() {
  float* d; cudaMalloc(&d, 1024);
  doomed<<<1, 256>>>(d);
  cudaDeviceSynchronize();
  fprintf(stderr, "fail_app: giving up after one kernel\n");
  return 3;
}
