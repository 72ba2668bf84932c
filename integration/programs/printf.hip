// Device-side printf.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void hello(int base) {
  int t = threadIdx.x, b = blockIdx.x;
  if (t < 3) printf("hello from thread %d of block %d: %d %.2f\n", t, b, base + t, 1.5 * t);
}

int main() {
  hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0, 40);
  hipError_t e = hipDeviceSynchronize();
  fflush(stdout);
  printf("sync=%d\n", (int)e);
  return e == hipSuccess ? 0 : 1;
}
