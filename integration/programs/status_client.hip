// A client for `rocjitsu status` (integration/tests/status.rs) that lives as long as the test
// wants: completes `kernels` small kernels, holds memory of each kind a client has (hipMalloc:
// VRAM; hipHostRegister: USERPTR), then starts `hold`, a kernel that runs until the host lets
// it go. Prints "ready <kernels>" once `hold` runs, and lets it go when a line arrives on stdin
// or stdin closes (so a test that dies ends its clients too).
//
// usage: status_client [kernels, default 3]
#include "check.h"
#include <unistd.h>

__global__ void add_one(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

// Tells the host it runs, then waits for the host's word.
__global__ void hold(unsigned* release, unsigned* started) {
  if (threadIdx.x == 0) {
    __hip_atomic_store(started, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    while (__hip_atomic_load(release, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0) __builtin_amdgcn_s_sleep(100);
  }
}

int main(int argc, char** argv) {
  const int kernels = argc > 1 ? atoi(argv[1]) : 3;
  const int n = 1 << 16;

  int* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(int)));
  HIP_CHECK(hipMemset(d, 0, n * sizeof(int)));
  for (int k = 0; k < kernels; k++) hipLaunchKernelGGL(add_one, dim3(n / 256), dim3(256), 0, 0, d, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  int* h = (int*)malloc(n * sizeof(int));
  HIP_CHECK(hipMemcpy(h, d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (h[i] != kernels) fail("add_one", "v[%d] = %d after %d kernels", i, h[i], kernels);

  // 1 MiB of the application's own memory, registered: a USERPTR allocation.
  const size_t registered = 1 << 20;
  void* user = aligned_alloc(4096, registered);
  memset(user, 0, registered);
  HIP_CHECK(hipHostRegister(user, registered, hipHostRegisterDefault));

  unsigned* flags;
  HIP_CHECK(hipHostMalloc((void**)&flags, 2 * sizeof(unsigned), hipHostMallocMapped | hipHostMallocCoherent));
  flags[0] = flags[1] = 0;
  unsigned* dev_flags;
  HIP_CHECK(hipHostGetDevicePointer((void**)&dev_flags, flags, 0));
  hipLaunchKernelGGL(hold, dim3(1), dim3(64), 0, 0, dev_flags, dev_flags + 1);
  HIP_CHECK(hipGetLastError());
  for (int waited_ms = 0; __atomic_load_n(&flags[1], __ATOMIC_ACQUIRE) == 0; waited_ms++) {
    if (waited_ms > 120000) fail("hold", "the kernel did not start within 120 s");
    usleep(1000);
  }
  printf("ready %d\n", kernels);
  fflush(stdout);

  char line[64];
  (void)!fgets(line, sizeof line, stdin);
  __atomic_store_n(&flags[0], 1u, __ATOMIC_RELEASE);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipHostUnregister(user));
  printf("done\n");
  return 0;
}
