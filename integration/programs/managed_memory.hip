// Managed memory (issue 18): host writes, a kernel increments, the host reads; prefetch and
// advice calls; a kernel and the host working on different halves of one managed buffer at
// the same time. Every value is checked against what the host computes.
#include "check.h"

__global__ void add_index(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += i;
}

// Rounds of increments over the first half, long enough for the host to work meanwhile.
__global__ void rounds(int* p, int n, int times) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < times; k++) p[i] += 1;
}

int main() {
  const int n = 1 << 20;
  int* p = nullptr;
  HIP_CHECK(hipMallocManaged(&p, n * sizeof(int)));
  for (int i = 0; i < n; i++) p[i] = 7;
  hipLaunchKernelGGL(add_index, dim3(n / 256), dim3(256), 0, 0, p, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++)
    if (p[i] != 7 + i) fail("managed round trip", "element %d: %d, expected %d", i, p[i], 7 + i);
  pass("host writes, kernel increments, host reads");

  HIP_CHECK(hipMemAdvise(p, n * sizeof(int), hipMemAdviseSetPreferredLocation, 0));
  HIP_CHECK(hipMemAdvise(p, n * sizeof(int), hipMemAdviseSetAccessedBy, 0));
  HIP_CHECK(hipMemAdvise(p, n * sizeof(int), hipMemAdviseSetReadMostly, 0));
  HIP_CHECK(hipMemPrefetchAsync(p, n * sizeof(int), 0, 0));
  hipLaunchKernelGGL(add_index, dim3(n / 256), dim3(256), 0, 0, p, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemPrefetchAsync(p, n * sizeof(int), hipCpuDeviceId, 0));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemAdvise(p, n * sizeof(int), hipMemAdviseUnsetReadMostly, 0));
  for (int i = 0; i < n; i++)
    if (p[i] != 7 + 2 * i) fail("managed with advice and prefetch", "element %d: %d, expected %d", i, p[i], 7 + 2 * i);
  pass("prefetch to the GPU and back, with advice");

  // The kernel works on the first half while the host rewrites the second.
  const int half = n / 2, times = 50;
  hipLaunchKernelGGL(rounds, dim3(half / 256), dim3(256), 0, 0, p, half, times);
  HIP_CHECK(hipGetLastError());
  for (int i = half; i < n; i++) p[i] = -i;
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    int want = i < half ? 7 + 2 * i + times : -i;
    if (p[i] != want) fail("managed halves", "element %d: %d, expected %d", i, p[i], want);
  }
  pass("kernel and host on different halves at once");
  HIP_CHECK(hipFree(p));
  return 0;
}
