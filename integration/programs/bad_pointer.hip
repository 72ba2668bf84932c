// A kernel that writes through a bad pointer: the GPU page-faults, ROCR
// reports "Memory access fault by GPU" and the process ends abnormally.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void poke(int* p) { p[threadIdx.x] = 42; }

int main() {
  int* bad = (int*)0x7ff0deadb000ull;
  hipLaunchKernelGGL(poke, dim3(1), dim3(64), 0, 0, bad);
  hipError_t e = hipDeviceSynchronize();
  printf("returned=%d\n", (int)e);
  return 0;
}
