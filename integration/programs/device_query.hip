// Prints what HIP reports about every device, one `key=value` line each, so
// the test can compare it with the config.
#include <hip/hip_runtime.h>
#include <cstdio>

int main() {
  int count = -1;
  hipError_t err = hipGetDeviceCount(&count);
  printf("hipGetDeviceCount=%d\n", count);
  if (err != hipSuccess) {
    printf("error=%s\n", hipGetErrorString(err));
    return 1;
  }
  for (int i = 0; i < count; i++) {
    hipDeviceProp_t p;
    err = hipGetDeviceProperties(&p, i);
    if (err != hipSuccess) {
      printf("device %d: error=%s\n", i, hipGetErrorString(err));
      return 1;
    }
    printf("device=%d name=%s\n", i, p.name);
    printf("device=%d gcnArchName=%s\n", i, p.gcnArchName);
    printf("device=%d multiProcessorCount=%d\n", i, p.multiProcessorCount);
    printf("device=%d totalGlobalMem=%zu\n", i, p.totalGlobalMem);
    printf("device=%d warpSize=%d\n", i, p.warpSize);
    printf("device=%d maxThreadsPerBlock=%d\n", i, p.maxThreadsPerBlock);
    printf("device=%d sharedMemPerBlock=%zu\n", i, p.sharedMemPerBlock);
    printf("device=%d pciBusID=%d\n", i, p.pciBusID);
  }
  return 0;
}
