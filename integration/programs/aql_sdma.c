/* The command processor and SDMA engines without kernels, through the HSA
 * API: AQL barrier packets (with and without a dependency), completion
 * signals woken through KFD events, and SDMA copies host->device->host. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void submit_barrier(hsa_queue_t *q, hsa_signal_t dep, hsa_signal_t done) {
  uint64_t index = hsa_queue_add_write_index_relaxed(q, 1);
  hsa_barrier_and_packet_t *p = (hsa_barrier_and_packet_t *)q->base_address + (index % q->size);
  memset((char *)p + 4, 0, 60);
  p->dep_signal[0] = dep;
  p->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  __atomic_store_n(&p->header, header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
}

#define CHECK(x) do { hsa_status_t s_ = (x); if (s_ != HSA_STATUS_SUCCESS) { printf("%s failed: %#x\n", #x, s_); return 1; } } while (0)

int main(void) {
  CHECK(hsa_init());
  hsa_iterate_agents(find_agents, NULL);
  hsa_amd_agent_iterate_memory_pools(gpu, find_pool, &device_pool);
  hsa_amd_agent_iterate_memory_pools(cpu, find_pool, &host_pool);

  hsa_queue_t *q;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done, dep;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  CHECK(hsa_signal_create(1, 0, NULL, &dep));

  /* A barrier without dependencies completes. */
  submit_barrier(q, (hsa_signal_t){0}, done);
  hsa_signal_value_t v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED);
  printf("barrier_done=%ld\n", (long)v);

  /* A barrier waits for its dependency. */
  hsa_signal_store_relaxed(done, 1);
  submit_barrier(q, dep, done);
  usleep(100 * 1000);
  printf("blocked_while_dep_pending=%ld\n", (long)hsa_signal_load_scacquire(done));
  hsa_signal_store_screlease(dep, 0);
  v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED);
  printf("released_after_dep=%ld\n", (long)v);
  printf("read_index=%lu\n", (unsigned long)hsa_queue_load_read_index_scacquire(q));

  /* SDMA: host -> device -> host. */
  size_t n = 3 << 20;
  unsigned char *src, *back, *dev;
  CHECK(hsa_amd_memory_pool_allocate(host_pool, n, 0, (void **)&src));
  CHECK(hsa_amd_memory_pool_allocate(host_pool, n, 0, (void **)&back));
  CHECK(hsa_amd_memory_pool_allocate(device_pool, n, 0, (void **)&dev));
  hsa_agent_t both[2] = {gpu, cpu};
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, src));
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, back));
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, dev));
  for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 7 + 3);
  memset(back, 0, n);
  hsa_signal_store_relaxed(done, 1);
  CHECK(hsa_amd_memory_async_copy(dev, gpu, src, cpu, n, 0, NULL, done));
  v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED);
  hsa_signal_store_relaxed(done, 1);
  CHECK(hsa_amd_memory_async_copy(back, cpu, dev + 1, gpu, n - 1, 0, NULL, done));
  v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 5000000000ull, HSA_WAIT_STATE_BLOCKED);
  printf("copy_done=%ld\n", (long)v);
  size_t bad = 0;
  for (size_t i = 0; i + 1 < n; i++) bad += back[i] != src[i + 1];
  printf("copy_mismatches=%zu\n", bad);

  hsa_signal_destroy(done);
  hsa_signal_destroy(dep);
  hsa_amd_memory_pool_free(src);
  hsa_amd_memory_pool_free(back);
  hsa_amd_memory_pool_free(dev);
  hsa_queue_destroy(q);
  CHECK(hsa_shut_down());
  return 0;
}
