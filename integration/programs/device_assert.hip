// A failing device-side assert() (issue 18): the kernel's assertion text is printed and
// the application ends, as on the hardware. With "pass" as argument no assertion fails and
// the program checks the kernel's results.
#include "check.h"
#include <cassert>

__device__ __noinline__ void check_value(const int* p, int t) { assert(p[t] != 42); }

__global__ void bump(int* p) {
  int t = threadIdx.x;
  check_value(p, t);
  p[t] += 1;
}

int main(int argc, char** argv) {
  bool fail_on_purpose = !(argc > 1 && !strcmp(argv[1], "pass"));
  int h[64];
  for (int i = 0; i < 64; i++) h[i] = fail_on_purpose ? i : 100 + i;
  int* d;
  HIP_CHECK(hipMalloc(&d, sizeof(h)));
  HIP_CHECK(hipMemcpy(d, h, sizeof(h), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(bump, dim3(1), dim3(64), 0, 0, d);
  hipError_t e = hipDeviceSynchronize();
  if (fail_on_purpose) {
    // The runtime ends the application before this line on the hardware.
    printf("FAIL device assert: the application survived the assertion (%s)\n", hipGetErrorString(e));
    return 1;
  }
  HIP_CHECK(e);
  HIP_CHECK(hipMemcpy(h, d, sizeof(h), hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++)
    if (h[i] != 101 + i) fail("device assert", "element %d: %d, expected %d", i, h[i], 101 + i);
  pass("kernel with an assert that holds");
  return 0;
}
