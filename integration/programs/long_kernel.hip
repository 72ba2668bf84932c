// A kernel that runs for a long time on the simulated GPU (for killing a client in the
// middle of it): prints "launched" once the kernel is queued, then waits for it.
#include "check.h"
#include <unistd.h>

__global__ void spin(unsigned* out, unsigned iters) {
  unsigned h = threadIdx.x + blockIdx.x * blockDim.x;
  for (unsigned k = 0; k < iters; k++) h = h * 1664525u + 1013904223u;
  out[threadIdx.x + blockIdx.x * blockDim.x] = h;
}

int main(int argc, char** argv) {
  unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 200000000u;
  unsigned* d;
  HIP_CHECK(hipMalloc(&d, 64 * 256 * 4));
  hipLaunchKernelGGL(spin, dim3(64), dim3(256), 0, 0, d, iters);
  HIP_CHECK(hipGetLastError());
  printf("launched\n");
  fflush(stdout);
  HIP_CHECK(hipDeviceSynchronize());
  printf("done\n");
  return 0;
}
