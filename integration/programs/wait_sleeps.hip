// A long kernel, then a blocking hipMemcpy of its result, which waits for it: prints the
// CPU time the waiting thread used over the wait's wall time ("wait_cpu_fraction=F"). HIP
// waits actively by default; under the simulator a spinning waiter takes a core from the
// simulated GPU, so rocjitsu makes such waits sleep. Checks the result against the CPU.
#include "check.h"
#include <time.h>

__global__ void lcg(unsigned* out, unsigned iters) {
  unsigned h = threadIdx.x + blockIdx.x * blockDim.x;
  for (unsigned k = 0; k < iters; k++) h = h * 1664525u + 1013904223u;
  out[threadIdx.x + blockIdx.x * blockDim.x] = h;
}

static double seconds(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 200000u;
  const unsigned n = 16 * 256;
  unsigned* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(unsigned)));
  static unsigned h[n];
  // A first launch and copy: start-up and translation happen outside the measured wait.
  hipLaunchKernelGGL(lcg, dim3(16), dim3(256), 0, 0, d, 10u);
  HIP_CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  hipLaunchKernelGGL(lcg, dim3(16), dim3(256), 0, 0, d, iters);
  HIP_CHECK(hipGetLastError());
  double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
  HIP_CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  wall = seconds(CLOCK_MONOTONIC) - wall;
  cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
  for (unsigned i = 0; i < n; i++) {
    unsigned x = i;
    for (unsigned k = 0; k < iters; k++) x = x * 1664525u + 1013904223u;
    if (h[i] != x) fail("lcg", "element %u is %u, expected %u", i, h[i], x);
  }
  printf("PASS lcg\n");
  printf("wait_seconds=%.3f\nwait_cpu_fraction=%.3f\n", wall, cpu / wall);
  HIP_CHECK(hipFree(d));
  return 0;
}
