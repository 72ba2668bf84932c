// Two simulated GPUs (the mi210-2gpu config): a kernel on each device, each result
// read back and checked, then a peer copy from device 1 to device 0.
#include "check.h"
#include <vector>

__global__ void fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  if (count != 2) fail("multi_gpu", "%d devices, want 2", count);
  const int n = 1 << 16;
  int* d[2];
  for (int dev = 0; dev < 2; dev++) {
    HIP_CHECK(hipSetDevice(dev));
    HIP_CHECK(hipMalloc(&d[dev], n * 4));
    hipLaunchKernelGGL(fill, dim3(n / 256), dim3(256), 0, 0, d[dev], dev * 1000000, n);
    HIP_CHECK(hipDeviceSynchronize());
  }
  std::vector<int> h(n);
  for (int dev = 0; dev < 2; dev++) {
    HIP_CHECK(hipSetDevice(dev));
    HIP_CHECK(hipMemcpy(h.data(), d[dev], n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      if (h[i] != dev * 1000000 + i) fail("multi_gpu", "device %d element %d = %d", dev, i, h[i]);
  }
  pass("kernels_on_two_devices");
  int can = 0;
  HIP_CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  if (!can) fail("peer_copy", "device 0 cannot access device 1");
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipMemcpyPeer(d[0], 0, d[1], 1, n * 4));
  HIP_CHECK(hipMemcpy(h.data(), d[0], n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (h[i] != 1000000 + i) fail("peer_copy", "element %d = %d", i, h[i]);
  pass("peer_copy");
  return 0;
}
