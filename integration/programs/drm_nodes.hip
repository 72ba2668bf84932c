// Each render node describes its own GPU: VRAM allocated through HIP on one device shows in
// that device's render node (AMDGPU_INFO_VRAM_USAGE, device-wide like amdgpu's) and not in
// the other's. Needs a two-GPU config; prints `vram_usage_<minor>=<bytes>` after each step.
#include "check.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

// struct drm_amdgpu_info (32 bytes) and DRM_IOCTL_AMDGPU_INFO, as in amdgpu_drm.h.
struct amdgpu_info {
  uint64_t return_pointer;
  uint32_t return_size;
  uint32_t query;
  uint32_t input[4];
};
#define AMDGPU_INFO_VRAM_USAGE 0x10
#define DRM_IOCTL_AMDGPU_INFO _IOW('d', 0x40 + 0x05, struct amdgpu_info)

static uint64_t vram_usage(int minor) {
  char path[64];
  snprintf(path, sizeof path, "/dev/dri/renderD%d", minor);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail("drm_nodes", "cannot open %s", path);
  uint64_t used = ~0ull;
  struct amdgpu_info q = {(uint64_t)(uintptr_t)&used, sizeof used, AMDGPU_INFO_VRAM_USAGE, {0, 0, 0, 0}};
  if (ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &q) != 0) fail("drm_nodes", "VRAM_USAGE on %s failed", path);
  close(fd);
  return used;
}

static void report(const char* step) {
  printf("%s: vram_usage_128=%llu vram_usage_129=%llu\n", step, (unsigned long long)vram_usage(128),
         (unsigned long long)vram_usage(129));
}

int main() {
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  if (n != 2) fail("drm_nodes", "%d devices, want 2", n);
  void *on1, *on0;
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipMalloc(&on1, 1ull << 30));
  report("1 GiB on device 1");
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipMalloc(&on0, 512ull << 20));
  report("512 MiB on device 0");
  HIP_CHECK(hipFree(on0));
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipFree(on1));
  report("freed");
  pass("drm_nodes");
  return 0;
}
