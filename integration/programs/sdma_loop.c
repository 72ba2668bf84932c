/* Copies host->device->host with SDMA in a loop until killed (or for N
 * rounds), checking every round; prints "ready" after the first one. Used
 * to kill a client in the middle of its GPU work. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t device_pool, host_pool;

static hsa_status_t find_agents(hsa_agent_t a, void *data) {
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU) gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU) cpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void *data) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) *(hsa_amd_memory_pool_t *)data = p;
  return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : -1;
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  hsa_iterate_agents(find_agents, NULL);
  hsa_amd_agent_iterate_memory_pools(gpu, find_pool, &device_pool);
  hsa_amd_agent_iterate_memory_pools(cpu, find_pool, &host_pool);
  size_t n = 8 << 20;
  unsigned char *src, *back, *dev;
  hsa_amd_memory_pool_allocate(host_pool, n, 0, (void **)&src);
  hsa_amd_memory_pool_allocate(host_pool, n, 0, (void **)&back);
  hsa_amd_memory_pool_allocate(device_pool, n, 0, (void **)&dev);
  hsa_agent_t both[2] = {gpu, cpu};
  hsa_amd_agents_allow_access(2, both, NULL, src);
  hsa_amd_agents_allow_access(2, both, NULL, back);
  hsa_amd_agents_allow_access(2, both, NULL, dev);
  hsa_signal_t done;
  hsa_signal_create(1, 0, NULL, &done);
  for (long r = 0; rounds < 0 || r < rounds; r++) {
    for (size_t i = 0; i < n; i += 4096) src[i] = (unsigned char)(i / 4096 + r);
    hsa_signal_store_relaxed(done, 1);
    hsa_amd_memory_async_copy(dev, gpu, src, cpu, n, 0, NULL, done);
    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    hsa_signal_store_relaxed(done, 1);
    hsa_amd_memory_async_copy(back, cpu, dev, gpu, n, 0, NULL, done);
    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    for (size_t i = 0; i < n; i += 4096)
      if (back[i] != (unsigned char)(i / 4096 + r)) {
        printf("mismatch in round %ld\n", r);
        return 1;
      }
    if (r == 0) {
      printf("ready\n");
      fflush(stdout);
    }
  }
  printf("rounds=%ld\n", rounds);
  hsa_signal_destroy(done);
  hsa_amd_memory_pool_free(src);
  hsa_amd_memory_pool_free(back);
  hsa_amd_memory_pool_free(dev);
  hsa_shut_down();
  return 0;
}
