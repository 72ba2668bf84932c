#define _GNU_SOURCE
/* Isolation between the clients of one daemon, through raw /dev/kfd ioctls the way
 * libhsakmt issues them (integration/tests/isolation.rs runs it under `rocjitsu --attach`).
 *
 *   owner            sets up a VRAM and a GTT buffer (GPU- and CPU-mapped, filled with a
 *                    pattern), a signal event, an AQL queue, and maps its doorbell and events
 *                    pages; prints "OWNER key=value ..." and waits for a line on stdin; then
 *                    checks that everything is intact and still works.
 *   intruder k=v...  another process, given the owner's values: every use of them is refused
 *                    (phase 1, the intruder owns nothing), or acts only on the intruder's own
 *                    objects that happen to have the same numbers (phase 2).
 *   limit VRAM       alone on the daemon: VRAM allocations beyond VRAM bytes fail with ENOMEM,
 *                    AVAILABLE_MEMORY follows every allocation and free.
 *   hog MIB VRAM     allocates MIB-MiB VRAM buffers until ENOMEM, touching one page of each;
 *                    prints "HOG count=N ..." and holds them until stdin closes.
 *   full VRAM        waits (bounded) until AVAILABLE_MEMORY is VRAM again, then allocates all of
 *                    it in one buffer.
 *
 * Every check prints "PASS <name>" or "FAIL <name>: <what happened>"; the exit status is 1
 * if any failed, 2 if the set-up itself failed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- The KFD ABI (proto/src/abi/kfd.rs, the 1.8 header libhsakmt 5.2 uses) ---- */

struct kfd_version { uint32_t major, minor; };
struct acquire_vm { uint32_t drm_fd, gpu_id; };
struct alloc_mem { uint64_t va_addr, size, handle, mmap_offset; uint32_t gpu_id, flags; };
struct free_mem { uint64_t handle; };
struct map_mem { uint64_t handle, device_ids_array_ptr; uint32_t n_devices, n_success; };
struct create_event {
  uint64_t event_page_offset;
  uint32_t event_trigger_data, event_type, auto_reset, node_id, event_id, event_slot_index;
};
struct event_id_args { uint32_t event_id, pad; };
struct event_data { uint64_t union_[4]; uint64_t ext; uint32_t event_id, pad; };
struct wait_events { uint64_t events_ptr; uint32_t num_events, wait_for_all, timeout, wait_result; };
struct create_queue { /* the 88-byte form of KFD <= 1.16 */
  uint64_t ring_base_address, write_pointer_address, read_pointer_address, doorbell_offset;
  uint32_t ring_size, gpu_id, queue_type, queue_percentage, queue_priority, queue_id;
  uint64_t eop_buffer_address, eop_buffer_size, ctx_save_restore_address;
  uint32_t ctx_save_restore_size, ctl_stack_size;
};
struct destroy_queue { uint32_t queue_id, pad; };
struct update_queue { uint64_t ring_base_address; uint32_t queue_id, ring_size, queue_percentage, queue_priority; };
struct set_cu_mask { uint32_t queue_id, num_cu_mask; uint64_t cu_mask_ptr; };
struct alloc_queue_gws { uint32_t queue_id, num_gws, first_gws, pad; };
struct available_memory { uint64_t available; uint32_t gpu_id, pad; };

_Static_assert(sizeof(struct alloc_mem) == 40, "ALLOC_MEMORY_OF_GPU");
_Static_assert(sizeof(struct map_mem) == 24, "MAP_MEMORY_TO_GPU");
_Static_assert(sizeof(struct create_event) == 32, "CREATE_EVENT");
_Static_assert(sizeof(struct event_data) == 48, "kfd_event_data");
_Static_assert(sizeof(struct wait_events) == 24, "WAIT_EVENTS");
_Static_assert(sizeof(struct create_queue) == 88, "CREATE_QUEUE");
_Static_assert(sizeof(struct update_queue) == 24, "UPDATE_QUEUE");

#define GET_VERSION _IOR('K', 0x01, struct kfd_version)
#define CREATE_QUEUE _IOWR('K', 0x02, struct create_queue)
#define DESTROY_QUEUE _IOWR('K', 0x03, struct destroy_queue)
#define UPDATE_QUEUE _IOW('K', 0x07, struct update_queue)
#define CREATE_EVENT _IOWR('K', 0x08, struct create_event)
#define DESTROY_EVENT _IOW('K', 0x09, struct event_id_args)
#define SET_EVENT _IOW('K', 0x0a, struct event_id_args)
#define RESET_EVENT _IOW('K', 0x0b, struct event_id_args)
#define WAIT_EVENTS _IOWR('K', 0x0c, struct wait_events)
#define ACQUIRE_VM _IOW('K', 0x15, struct acquire_vm)
#define ALLOC_MEMORY _IOWR('K', 0x16, struct alloc_mem)
#define FREE_MEMORY _IOW('K', 0x17, struct free_mem)
#define MAP_MEMORY _IOWR('K', 0x18, struct map_mem)
#define UNMAP_MEMORY _IOWR('K', 0x19, struct map_mem)
#define SET_CU_MASK _IOW('K', 0x1a, struct set_cu_mask)
#define ALLOC_QUEUE_GWS _IOWR('K', 0x1e, struct alloc_queue_gws)
#define AVAILABLE_MEMORY _IOWR('K', 0x23, struct available_memory)

#define FLAG_VRAM (1u << 0)
#define FLAG_GTT (1u << 1)
#define FLAG_WRITABLE (1u << 31)
#define FLAG_EXECUTABLE (1u << 30)
#define FLAG_NO_SUBSTITUTE (1u << 28)
#define FLAG_COHERENT (1u << 26)

#define EVENT_SIGNAL 0
#define WAIT_COMPLETE 0
#define WAIT_TIMEOUT 1
#define QUEUE_TYPE_COMPUTE_AQL 2

#define MMAP_TYPE_EVENTS (2ull << 62)
#define DOORBELL_PAGE_SIZE 0x2000ull
#define EVENTS_PAGE_SIZE (4096ull * 8)
#define PAGE 4096ull

/* amd_queue_t and amd_signal_t offsets (sim/src/gpu/queue.rs, cp/signal.rs). */
#define AMD_QUEUE_WRITE_DISPATCH_ID 0x38
#define AMD_QUEUE_READ_DISPATCH_ID 0x80
#define SIGNAL_VALUE 8
#define SIGNAL_MAILBOX 16
#define SIGNAL_EVENT_ID 24
/* BARRIER_AND, barrier bit, system-scope acquire and release fences. */
#define BARRIER_AND_HEADER 0x1503
#define INVALID_HEADER 1

/* The owner's GTT buffer: ring, amd_queue_t, a signal with its mailbox, then a pattern. */
#define GTT_SIZE 0x10000ull
#define RING_OFF 0x0
#define RING_SIZE 0x1000u
#define AMDQ_OFF 0x1000
#define SIGNAL_OFF 0x2000
#define MAILBOX_OFF 0x2100
#define GTT_PATTERN_OFF 0x4000
#define VRAM_SIZE (2ull << 20)

#define DOORBELL_MAGIC 0xb0b0b0b0deadbeefull
#define EVENT_SLOT_MAGIC 0x00000000b0b0b0b0ull

/* ---- Reporting ---- */

static int failures;

static void pass(const char *what) { printf("PASS %s\n", what); fflush(stdout); }

static void fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL %s: ", what);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
  failures++;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL setup: ");
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
  exit(2);
}

static const char *errname(int e) {
  const char *n = strerrorname_np(e);
  return n ? n : "?";
}

/* An ioctl: 0, or the errno it failed with. */
static int kio(int fd, unsigned long req, void *arg) { return ioctl(fd, req, arg) == 0 ? 0 : errno; }

/* `what` (an ioctl's errno, 0 for success) must be `want`. */
static void expect_errno(const char *name, int got, int want, const char *context) {
  if (got == want) {
    pass(name);
  } else if (got == 0) {
    fail(name, "%s succeeded; expected %s", context, errname(want));
  } else if (want == 0) {
    fail(name, "%s failed with %s; expected success", context, errname(got));
  } else {
    fail(name, "%s failed with %s; expected %s", context, errname(got), errname(want));
  }
}

/* ---- The device ---- */

struct dev {
  int kfd, render;
  uint32_t gpu_id;
};

static uint64_t read_prop(const char *path, const char *key, uint64_t fallback) {
  FILE *f = fopen(path, "r");
  if (!f) return fallback;
  char line[256];
  uint64_t v = fallback;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, key, n) && line[n] == ' ') {
      v = strtoull(line + n + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

/* Opens /dev/kfd, checks the version, finds the first GPU node in the topology, opens its
 * render node and acquires the VM through it, as libhsakmt does at hsaKmtOpenKFD and
 * hsaKmtAcquireSystemProperties. */
static struct dev open_dev(void) {
  struct dev d;
  d.kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (d.kfd < 0) die("open /dev/kfd: %s", errname(errno));
  struct kfd_version v = {0, 0};
  int e = kio(d.kfd, GET_VERSION, &v);
  if (e || v.major != 1) die("GET_VERSION: %s, major %u", errname(e), v.major);
  d.gpu_id = 0;
  int node = -1;
  for (int i = 0; i < 16 && !d.gpu_id; i++) {
    char path[128];
    snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    unsigned id = 0;
    if (fscanf(f, "%u", &id) == 1 && id) {
      d.gpu_id = id;
      node = i;
    }
    fclose(f);
  }
  if (!d.gpu_id) die("no GPU node with a gpu_id under /sys/class/kfd/kfd/topology/nodes");
  char path[128];
  snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/properties", node);
  uint64_t minor = read_prop(path, "drm_render_minor", 128);
  snprintf(path, sizeof path, "/dev/dri/renderD%" PRIu64, minor);
  d.render = open(path, O_RDWR | O_CLOEXEC);
  if (d.render < 0) die("open %s: %s", path, errname(errno));
  struct acquire_vm a = {(uint32_t)d.render, d.gpu_id};
  e = kio(d.kfd, ACQUIRE_VM, &a);
  if (e) die("ACQUIRE_VM: %s", errname(e));
  return d;
}

static uint64_t available(struct dev *d) {
  struct available_memory a = {0, d->gpu_id, 0};
  int e = kio(d->kfd, AVAILABLE_MEMORY, &a);
  if (e) die("AVAILABLE_MEMORY: %s", errname(e));
  return a.available;
}

/* ---- Buffers ---- */

struct bo {
  uint64_t handle, offset, va, size;
  uint8_t *cpu; /* == va once CPU-mapped */
};

/* A CPU address range to use as GPU VA too (CPU VA == GPU VA, as libhsakmt arranges). */
static uint64_t reserve_va(uint64_t size) {
  uint64_t align = size >= (2ull << 20) ? (2ull << 20) : PAGE;
  void *p = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) die("reserving %#" PRIx64 " bytes of address space: %s", size, errname(errno));
  return ((uint64_t)p + align - 1) & ~(align - 1);
}

/* ALLOC_MEMORY_OF_GPU at `va`: 0 or the errno. */
static int alloc_at(struct dev *d, uint64_t va, uint64_t size, uint32_t flags, struct bo *b) {
  struct alloc_mem a = {va, size, 0, 0, d->gpu_id, flags};
  int e = kio(d->kfd, ALLOC_MEMORY, &a);
  if (e) return e;
  b->handle = a.handle;
  b->offset = a.mmap_offset;
  b->va = va;
  b->size = size;
  b->cpu = NULL;
  return 0;
}

static int map_handle(struct dev *d, uint64_t handle, unsigned long req) {
  uint32_t ids[1] = {d->gpu_id};
  struct map_mem m = {handle, (uint64_t)(uintptr_t)ids, 1, 0};
  return kio(d->kfd, req, &m);
}

static int free_handle(struct dev *d, uint64_t handle) {
  struct free_mem f = {handle};
  return kio(d->kfd, FREE_MEMORY, &f);
}

/* Allocates, maps to the GPU and maps for the CPU at the same address. */
static struct bo new_bo(struct dev *d, uint64_t size, uint32_t flags, const char *what) {
  struct bo b;
  int e = alloc_at(d, reserve_va(size), size, flags, &b);
  if (e) die("ALLOC_MEMORY_OF_GPU of the %s (%#" PRIx64 " bytes): %s", what, size, errname(e));
  e = map_handle(d, b.handle, MAP_MEMORY);
  if (e) die("MAP_MEMORY_TO_GPU of the %s: %s", what, errname(e));
  void *p = mmap((void *)b.va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, d->render, (off_t)b.offset);
  if (p == MAP_FAILED) die("mmap of the %s at offset %#" PRIx64 ": %s", what, b.offset, errname(errno));
  b.cpu = p;
  return b;
}

static uint32_t pattern(uint32_t seed, size_t i) { return seed ^ (uint32_t)(i * 2654435761u); }

static void fill(uint8_t *p, size_t bytes, uint32_t seed) {
  for (size_t i = 0; i < bytes / 4; i++) ((volatile uint32_t *)p)[i] = pattern(seed, i);
}

/* The index of the first word that differs from the pattern, or -1. */
static long first_mismatch(const uint8_t *p, size_t bytes, uint32_t seed) {
  for (size_t i = 0; i < bytes / 4; i++)
    if (((const volatile uint32_t *)p)[i] != pattern(seed, i)) return (long)i;
  return -1;
}

/* ---- Events and queues ---- */

static int create_signal_event(struct dev *d, uint64_t event_page, uint32_t *id) {
  struct create_event c = {0};
  c.event_page_offset = event_page;
  c.event_type = EVENT_SIGNAL;
  c.auto_reset = 1;
  int e = kio(d->kfd, CREATE_EVENT, &c);
  if (!e) *id = c.event_id;
  return e;
}

static int event_op(struct dev *d, unsigned long req, uint32_t id) {
  struct event_id_args a = {id, 0};
  return kio(d->kfd, req, &a);
}

/* WAIT_EVENTS on one event: 0 and the wait result, or the errno. */
static int wait_event(struct dev *d, uint32_t id, uint32_t timeout_ms, uint32_t *result) {
  struct event_data ev;
  memset(&ev, 0, sizeof ev);
  ev.event_id = id;
  struct wait_events w = {(uint64_t)(uintptr_t)&ev, 1, 1, timeout_ms, 99};
  int e = kio(d->kfd, WAIT_EVENTS, &w);
  *result = w.wait_result;
  return e;
}

static const char *wait_name(uint32_t r) {
  return r == WAIT_COMPLETE ? "COMPLETE" : r == WAIT_TIMEOUT ? "TIMEOUT" : r == 2 ? "FAIL" : "?";
}

/* An AQL queue whose ring and amd_queue_t live in `g` (ring headers set INVALID). */
static int create_queue(struct dev *d, struct bo *g, uint32_t *id, uint64_t *doorbell_offset) {
  for (uint32_t i = 0; i < RING_SIZE / 64; i++) *(volatile uint16_t *)(g->cpu + RING_OFF + i * 64) = INVALID_HEADER;
  memset(g->cpu + AMDQ_OFF, 0, 256);
  struct create_queue q;
  memset(&q, 0, sizeof q);
  q.ring_base_address = g->va + RING_OFF;
  q.ring_size = RING_SIZE;
  q.write_pointer_address = g->va + AMDQ_OFF + AMD_QUEUE_WRITE_DISPATCH_ID;
  q.read_pointer_address = g->va + AMDQ_OFF + AMD_QUEUE_READ_DISPATCH_ID;
  q.gpu_id = d->gpu_id;
  q.queue_type = QUEUE_TYPE_COMPUTE_AQL;
  q.queue_percentage = 100;
  q.queue_priority = 7;
  int e = kio(d->kfd, CREATE_QUEUE, &q);
  if (!e) {
    *id = q.queue_id;
    *doorbell_offset = q.doorbell_offset;
  }
  return e;
}

static int destroy_queue(struct dev *d, uint32_t id) {
  struct destroy_queue q = {id, 0};
  return kio(d->kfd, DESTROY_QUEUE, &q);
}

static volatile uint64_t *u64_at(struct bo *b, uint64_t off) { return (volatile uint64_t *)(b->cpu + off); }

/* ---- owner ---- */

static int owner(void) {
  struct dev d = open_dev();
  struct bo vram = new_bo(&d, VRAM_SIZE, FLAG_VRAM | FLAG_WRITABLE | FLAG_NO_SUBSTITUTE, "VRAM buffer");
  struct bo gtt = new_bo(&d, GTT_SIZE, FLAG_GTT | FLAG_WRITABLE | FLAG_COHERENT | FLAG_EXECUTABLE, "GTT buffer");
  fill(vram.cpu, VRAM_SIZE, 0xa5a50000);
  fill(gtt.cpu + GTT_PATTERN_OFF, GTT_SIZE - GTT_PATTERN_OFF, 0x5a5a0000);

  uint32_t event;
  int e = create_signal_event(&d, 0, &event);
  if (e) die("CREATE_EVENT: %s", errname(e));
  uint32_t queue;
  uint64_t doorbell_offset;
  e = create_queue(&d, &gtt, &queue, &doorbell_offset);
  if (e) die("CREATE_QUEUE: %s", errname(e));

  uint64_t db_page = doorbell_offset & ~(DOORBELL_PAGE_SIZE - 1);
  uint64_t db_slot = (doorbell_offset & (DOORBELL_PAGE_SIZE - 1)) / 8;
  volatile uint64_t *doorbells =
      mmap(NULL, DOORBELL_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, d.kfd, (off_t)db_page);
  if (doorbells == MAP_FAILED) die("mmap of the doorbell page at %#" PRIx64 ": %s", db_page, errname(errno));
  volatile uint64_t *events =
      mmap(NULL, EVENTS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, d.kfd, (off_t)MMAP_TYPE_EVENTS);
  if (events == MAP_FAILED) die("mmap of the events page: %s", errname(errno));
  /* What the owner's own pages hold before the intruder runs. */
  uint64_t events_slot = events[event];
  uint64_t doorbell_copy[DOORBELL_PAGE_SIZE / 8];
  for (size_t i = 0; i < DOORBELL_PAGE_SIZE / 8; i++) doorbell_copy[i] = doorbells[i];

  printf("OWNER gpu_id=%u vram_handle=%#" PRIx64 " vram_offset=%#" PRIx64 " vram_size=%#" PRIx64
         " gtt_handle=%#" PRIx64 " gtt_offset=%#" PRIx64 " gtt_va=%#" PRIx64 " doorbell_offset=%#" PRIx64
         " event_id=%u queue_id=%u\n",
         d.gpu_id, vram.handle, vram.offset, vram.size, gtt.handle, gtt.offset, gtt.va, doorbell_offset, event,
         queue);
  fflush(stdout);

  char line[64];
  if (!fgets(line, sizeof line, stdin)) die("stdin closed before the test said \"check\"");

  long bad = first_mismatch(vram.cpu, VRAM_SIZE, 0xa5a50000);
  if (bad < 0) pass("owner_vram_intact");
  else fail("owner_vram_intact", "word %ld of the VRAM buffer is %#x, expected %#x", bad,
            ((uint32_t *)vram.cpu)[bad], pattern(0xa5a50000, bad));
  bad = first_mismatch(gtt.cpu + GTT_PATTERN_OFF, GTT_SIZE - GTT_PATTERN_OFF, 0x5a5a0000);
  if (bad < 0) pass("owner_gtt_intact");
  else fail("owner_gtt_intact", "word %ld of the GTT pattern changed", bad);

  int db_changed = -1;
  for (size_t i = 0; i < DOORBELL_PAGE_SIZE / 8; i++)
    if (doorbells[i] != doorbell_copy[i]) { db_changed = (int)i; break; }
  if (db_changed < 0) pass("owner_doorbells_untouched");
  else fail("owner_doorbells_untouched", "doorbell %d changed from %#" PRIx64 " to %#" PRIx64
            " (the queue's is %" PRIu64 ")", db_changed, doorbell_copy[db_changed], doorbells[db_changed], db_slot);
  if (events[event] == events_slot) pass("owner_events_page_untouched");
  else fail("owner_events_page_untouched", "slot %u changed from %#" PRIx64 " to %#" PRIx64, event, events_slot,
            events[event]);

  /* Nothing rang the queue: no packet was consumed, the write index is still 0. */
  uint64_t rptr = *u64_at(&gtt, AMDQ_OFF + AMD_QUEUE_READ_DISPATCH_ID);
  uint64_t wptr = *u64_at(&gtt, AMDQ_OFF + AMD_QUEUE_WRITE_DISPATCH_ID);
  if (rptr == 0 && wptr == 0) pass("owner_queue_untouched");
  else fail("owner_queue_untouched", "read index %" PRIu64 ", write index %" PRIu64 ", expected 0 and 0", rptr, wptr);

  /* The event exists and nobody signaled it: a poll times out... */
  uint32_t result = 99;
  e = wait_event(&d, event, 0, &result);
  if (!e && result == WAIT_TIMEOUT) pass("owner_event_not_signaled");
  else fail("owner_event_not_signaled", "WAIT_EVENTS(%u, timeout 0): %s, result %s; expected TIMEOUT", event,
            e ? errname(e) : "ok", wait_name(result));
  /* ... and the owner can signal and wait for it. */
  e = event_op(&d, SET_EVENT, event);
  if (e) fail("owner_event_set_and_wait", "SET_EVENT(%u): %s", event, errname(e));
  e = e ? e : wait_event(&d, event, 5000, &result);
  if (!e && result == WAIT_COMPLETE) pass("owner_event_set_and_wait");
  else if (!e) fail("owner_event_set_and_wait", "WAIT_EVENTS(%u) after SET_EVENT: %s", event, wait_name(result));
  else fail("owner_event_set_and_wait", "WAIT_EVENTS(%u) after SET_EVENT: %s", event, errname(e));

  /* The queue still runs: a barrier packet whose completion signal raises the event. */
  *u64_at(&gtt, SIGNAL_OFF + SIGNAL_VALUE) = 1;
  *u64_at(&gtt, SIGNAL_OFF + SIGNAL_MAILBOX) = gtt.va + MAILBOX_OFF;
  *u64_at(&gtt, SIGNAL_OFF + SIGNAL_EVENT_ID) = event;
  *u64_at(&gtt, MAILBOX_OFF) = 0;
  uint8_t *packet = gtt.cpu + RING_OFF;
  memset(packet + 2, 0, 62);
  *(volatile uint64_t *)(packet + 56) = gtt.va + SIGNAL_OFF;
  __atomic_store_n((uint16_t *)packet, (uint16_t)BARRIER_AND_HEADER, __ATOMIC_RELEASE);
  __atomic_store_n((uint64_t *)(gtt.cpu + AMDQ_OFF + AMD_QUEUE_WRITE_DISPATCH_ID), 1, __ATOMIC_RELEASE);
  doorbells[db_slot] = 0;
  e = wait_event(&d, event, 10000, &result);
  uint64_t value = *u64_at(&gtt, SIGNAL_OFF + SIGNAL_VALUE);
  rptr = *u64_at(&gtt, AMDQ_OFF + AMD_QUEUE_READ_DISPATCH_ID);
  uint64_t mailbox = *u64_at(&gtt, MAILBOX_OFF);
  if (!e && result == WAIT_COMPLETE && value == 0 && rptr == 1 && mailbox == event) pass("owner_queue_runs");
  else fail("owner_queue_runs", "after a barrier packet: WAIT_EVENTS %s result %s, signal %" PRIu64
            ", read index %" PRIu64 ", mailbox %" PRIu64 " (expected COMPLETE, 0, 1, %u)",
            e ? errname(e) : "ok", wait_name(result), value, rptr, mailbox, event);

  expect_errno("owner_queue_destroyed", destroy_queue(&d, queue), 0, "DESTROY_QUEUE of the owner's queue");
  expect_errno("owner_event_destroyed", event_op(&d, DESTROY_EVENT, event), 0, "DESTROY_EVENT of the owner's event");
  /* Both buffers are still GPU-mapped (nothing unmapped them) and free normally. */
  munmap(vram.cpu, vram.size);
  munmap(gtt.cpu, gtt.size);
  expect_errno("owner_vram_still_mapped", map_handle(&d, vram.handle, UNMAP_MEMORY), 0,
               "UNMAP_MEMORY_FROM_GPU of the owner's VRAM buffer");
  expect_errno("owner_gtt_still_mapped", map_handle(&d, gtt.handle, UNMAP_MEMORY), 0,
               "UNMAP_MEMORY_FROM_GPU of the owner's GTT buffer");
  expect_errno("owner_vram_freed", free_handle(&d, vram.handle), 0, "FREE_MEMORY_OF_GPU of the owner's VRAM buffer");
  expect_errno("owner_gtt_freed", free_handle(&d, gtt.handle), 0, "FREE_MEMORY_OF_GPU of the owner's GTT buffer");
  return failures ? 1 : 0;
}

/* ---- intruder ---- */

struct owner_values {
  uint32_t gpu_id, event_id, queue_id;
  uint64_t vram_handle, vram_offset, vram_size, gtt_handle, gtt_offset, gtt_va, doorbell_offset;
};

static struct owner_values parse_owner(int argc, char **argv) {
  struct owner_values o;
  memset(&o, 0, sizeof o);
  unsigned seen = 0;
  for (int i = 0; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) die("argument %s is not key=value", argv[i]);
    *eq = 0;
    uint64_t v = strtoull(eq + 1, NULL, 0);
    const char *k = argv[i];
#define KEY(name, bit) if (!strcmp(k, #name)) { o.name = v; seen |= 1u << bit; continue; }
    KEY(gpu_id, 0) KEY(event_id, 1) KEY(queue_id, 2) KEY(vram_handle, 3) KEY(vram_offset, 4) KEY(vram_size, 5)
    KEY(gtt_handle, 6) KEY(gtt_offset, 7) KEY(gtt_va, 8) KEY(doorbell_offset, 9)
#undef KEY
    die("unknown key %s", k);
  }
  if (seen != 0x3ff) die("missing owner values (have mask %#x)", seen);
  return o;
}

/* mmap(fd, offset) must fail with `want`; it must never show the owner's bytes. */
static void expect_mmap_refused(const char *name, int fd, uint64_t offset, uint64_t len, int want) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
  if (p != MAP_FAILED) {
    fail(name, "mmap of %#" PRIx64 " bytes at the owner's offset %#" PRIx64 " succeeded (first word %#x)", len,
         offset, *(uint32_t *)p);
    munmap(p, len);
  } else if (errno != want) {
    fail(name, "mmap at the owner's offset %#" PRIx64 " failed with %s; expected %s", offset, errname(errno),
         errname(want));
  } else {
    pass(name);
  }
}

static int intruder(int argc, char **argv) {
  struct owner_values o = parse_owner(argc, argv);
  struct dev d = open_dev();
  if (d.gpu_id != o.gpu_id) die("the intruder sees gpu_id %u, the owner %u", d.gpu_id, o.gpu_id);

  /* Phase 1: the intruder owns no buffer, event or queue; every owner value is refused. */
  expect_errno("intruder_free_vram", free_handle(&d, o.vram_handle), EINVAL, "FREE_MEMORY_OF_GPU(owner's VRAM handle)");
  expect_errno("intruder_free_gtt", free_handle(&d, o.gtt_handle), EINVAL, "FREE_MEMORY_OF_GPU(owner's GTT handle)");
  expect_errno("intruder_map_vram", map_handle(&d, o.vram_handle, MAP_MEMORY), EINVAL,
               "MAP_MEMORY_TO_GPU(owner's VRAM handle)");
  expect_errno("intruder_map_gtt", map_handle(&d, o.gtt_handle, MAP_MEMORY), EINVAL,
               "MAP_MEMORY_TO_GPU(owner's GTT handle)");
  expect_errno("intruder_unmap_vram", map_handle(&d, o.vram_handle, UNMAP_MEMORY), EINVAL,
               "UNMAP_MEMORY_FROM_GPU(owner's VRAM handle)");
  expect_mmap_refused("intruder_mmap_vram_page", d.render, o.vram_offset, PAGE, EINVAL);
  expect_mmap_refused("intruder_mmap_vram_whole", d.render, o.vram_offset, o.vram_size, EINVAL);
  expect_mmap_refused("intruder_mmap_gtt", d.render, o.gtt_offset, PAGE, EINVAL);

  uint32_t result = 99;
  expect_errno("intruder_set_event", event_op(&d, SET_EVENT, o.event_id), EINVAL, "SET_EVENT(owner's event)");
  expect_errno("intruder_reset_event", event_op(&d, RESET_EVENT, o.event_id), EINVAL, "RESET_EVENT(owner's event)");
  expect_errno("intruder_poll_event", wait_event(&d, o.event_id, 0, &result), EINVAL,
               "WAIT_EVENTS(owner's event, timeout 0)");
  /* A timeout makes it a blocking wait (its own wait connection in daemon mode). */
  expect_errno("intruder_wait_event", wait_event(&d, o.event_id, 200, &result), EINVAL,
               "WAIT_EVENTS(owner's event, timeout 200 ms)");
  expect_errno("intruder_destroy_event", event_op(&d, DESTROY_EVENT, o.event_id), EINVAL,
               "DESTROY_EVENT(owner's event)");
  /* The owner's GTT handle as the events page of a new event. */
  uint32_t unused;
  expect_errno("intruder_event_page_handle", create_signal_event(&d, o.gtt_handle, &unused), EINVAL,
               "CREATE_EVENT with the owner's GTT handle as events page");

  expect_errno("intruder_destroy_queue", destroy_queue(&d, o.queue_id), EINVAL, "DESTROY_QUEUE(owner's queue)");
  /* EFAULT for these two, as the kernel answers (pqm_update_queue_properties, pqm_update_mqd). */
  struct update_queue u = {o.gtt_va, o.queue_id, RING_SIZE, 50, 3};
  expect_errno("intruder_update_queue", kio(d.kfd, UPDATE_QUEUE, &u), EFAULT, "UPDATE_QUEUE(owner's queue)");
  uint32_t mask[4] = {1, 0, 0, 0};
  struct set_cu_mask m = {o.queue_id, 32, (uint64_t)(uintptr_t)mask};
  expect_errno("intruder_set_cu_mask", kio(d.kfd, SET_CU_MASK, &m), EFAULT, "SET_CU_MASK(owner's queue)");
  struct alloc_queue_gws g = {o.queue_id, 1, 0, 0};
  expect_errno("intruder_alloc_queue_gws", kio(d.kfd, ALLOC_QUEUE_GWS, &g), EINVAL, "ALLOC_QUEUE_GWS(owner's queue)");
  /* A queue on the owner's ring, read and write pointers: not mapped in the intruder's VM. */
  struct create_queue q;
  memset(&q, 0, sizeof q);
  q.ring_base_address = o.gtt_va + RING_OFF;
  q.ring_size = RING_SIZE;
  q.write_pointer_address = o.gtt_va + AMDQ_OFF + AMD_QUEUE_WRITE_DISPATCH_ID;
  q.read_pointer_address = o.gtt_va + AMDQ_OFF + AMD_QUEUE_READ_DISPATCH_ID;
  q.gpu_id = d.gpu_id;
  q.queue_type = QUEUE_TYPE_COMPUTE_AQL;
  q.queue_percentage = 100;
  q.queue_priority = 7;
  expect_errno("intruder_queue_on_owner_ring", kio(d.kfd, CREATE_QUEUE, &q), EINVAL,
               "CREATE_QUEUE on the owner's ring and pointers");

  /* Doorbell offsets name only the GPU: the intruder gets its own doorbell page. */
  uint64_t db_page = o.doorbell_offset & ~(DOORBELL_PAGE_SIZE - 1);
  uint64_t db_slot = (o.doorbell_offset & (DOORBELL_PAGE_SIZE - 1)) / 8;
  volatile uint64_t *db = mmap(NULL, DOORBELL_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, d.kfd, (off_t)db_page);
  if (db == MAP_FAILED) {
    fail("intruder_doorbell_page_is_own", "mmap of the doorbell page at %#" PRIx64 ": %s", db_page, errname(errno));
  } else {
    uint64_t before = db[db_slot];
    db[db_slot] = DOORBELL_MAGIC;
    if (before == 0 && db[db_slot] == DOORBELL_MAGIC) pass("intruder_doorbell_page_is_own");
    else fail("intruder_doorbell_page_is_own", "doorbell %" PRIu64 " held %#" PRIx64 " before the write", db_slot,
              before);
  }
  /* So does the events page offset (no GPU in it at all). */
  volatile uint64_t *ev = mmap(NULL, EVENTS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, d.kfd, (off_t)MMAP_TYPE_EVENTS);
  if (ev == MAP_FAILED) {
    fail("intruder_events_page_is_own", "mmap of the events page: %s", errname(errno));
  } else {
    ev[o.event_id] = EVENT_SLOT_MAGIC;
    pass("intruder_events_page_is_own");
  }

  /* Phase 2: the intruder's own objects, numbered like the owner's (ids and handles are per
   * process). Operations on those numbers reach the intruder's objects only. */
  uint32_t my_event;
  int e = create_signal_event(&d, 0, &my_event);
  if (e) die("CREATE_EVENT: %s", errname(e));
  struct bo my_vram = new_bo(&d, VRAM_SIZE, FLAG_VRAM | FLAG_WRITABLE | FLAG_NO_SUBSTITUTE, "VRAM buffer");
  struct bo my_gtt = new_bo(&d, GTT_SIZE, FLAG_GTT | FLAG_WRITABLE | FLAG_COHERENT | FLAG_EXECUTABLE, "GTT buffer");
  fill(my_vram.cpu, VRAM_SIZE, 0xbbbb0000);
  uint32_t my_queue;
  uint64_t my_doorbell;
  e = create_queue(&d, &my_gtt, &my_queue, &my_doorbell);
  if (e) die("CREATE_QUEUE: %s", errname(e));
  printf("collisions event=%d queue=%d doorbell=%d vram_handle=%d gtt_handle=%d\n", my_event == o.event_id,
         my_queue == o.queue_id, my_doorbell == o.doorbell_offset, my_vram.handle == o.vram_handle,
         my_gtt.handle == o.gtt_handle);
  fflush(stdout);

  /* The owner's event number: the intruder's event, if it has that number. */
  int mine = my_event == o.event_id;
  expect_errno("intruder_own_event_set", event_op(&d, SET_EVENT, o.event_id), mine ? 0 : EINVAL,
               "SET_EVENT(the owner's event number)");
  if (mine) {
    e = wait_event(&d, o.event_id, 2000, &result);
    if (!e && result == WAIT_COMPLETE) pass("intruder_own_event_wait");
    else fail("intruder_own_event_wait", "WAIT_EVENTS on its own event: %s %s", e ? errname(e) : "ok",
              wait_name(result));
    /* Left signaled: had it been the owner's, the owner's poll would complete. */
    expect_errno("intruder_own_event_set_again", event_op(&d, SET_EVENT, o.event_id), 0, "SET_EVENT(own event)");
  }

  /* The owner's mmap offsets: the intruder's buffer if one of its own covers them. */
  struct bo *mine_at[2] = {&my_vram, &my_gtt};
  uint64_t offsets[2] = {o.vram_offset, o.gtt_offset};
  const char *names[2] = {"intruder_mmap_vram_offset_after_alloc", "intruder_mmap_gtt_offset_after_alloc"};
  for (int k = 0; k < 2; k++) {
    struct bo *cover = NULL;
    for (int j = 0; j < 2; j++)
      if (offsets[k] >= mine_at[j]->offset && offsets[k] < mine_at[j]->offset + mine_at[j]->size) cover = mine_at[j];
    if (!cover) {
      expect_mmap_refused(names[k], d.render, offsets[k], PAGE, EINVAL);
      continue;
    }
    uint64_t within = offsets[k] - cover->offset;
    uint32_t *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, d.render, (off_t)offsets[k]);
    if (p == MAP_FAILED) {
      fail(names[k], "mmap of its own buffer at %#" PRIx64 ": %s", offsets[k], errname(errno));
    } else if (memcmp(p, cover->cpu + within, PAGE)) {
      fail(names[k], "mmap at %#" PRIx64 " does not show the intruder's own buffer (first word %#x)", offsets[k], p[0]);
    } else {
      pass(names[k]);
    }
    if (p != MAP_FAILED) munmap(p, PAGE);
  }

  /* The owner's VRAM handle number: frees the intruder's buffer if it has that number. */
  mine = my_vram.handle == o.vram_handle || my_gtt.handle == o.vram_handle;
  struct bo *victim = my_vram.handle == o.vram_handle ? &my_vram : &my_gtt;
  if (mine) {
    expect_errno("intruder_own_unmap", map_handle(&d, o.vram_handle, UNMAP_MEMORY), 0,
                 "UNMAP_MEMORY_FROM_GPU(the owner's VRAM handle number, its own buffer)");
    if (victim == &my_gtt) die("the GTT buffer holding the queue took the owner's VRAM handle number");
    munmap(victim->cpu, victim->size);
  }
  expect_errno("intruder_own_free", free_handle(&d, o.vram_handle), mine ? 0 : EINVAL,
               "FREE_MEMORY_OF_GPU(the owner's VRAM handle number)");
  /* Gone from the intruder's table: the number is refused from now on. */
  expect_errno("intruder_own_free_again", free_handle(&d, o.vram_handle), EINVAL,
               "a second FREE_MEMORY_OF_GPU(the owner's VRAM handle number)");
  /* The owner's GTT handle number: maps the intruder's buffer (already mapped: a no-op). */
  mine = my_gtt.handle == o.gtt_handle;
  expect_errno("intruder_own_map", map_handle(&d, o.gtt_handle, MAP_MEMORY), mine ? 0 : EINVAL,
               "MAP_MEMORY_TO_GPU(the owner's GTT handle number)");

  /* The owner's queue number: the intruder's queue, if it has that number. */
  mine = my_queue == o.queue_id;
  struct update_queue u2 = {my_gtt.va + RING_OFF, o.queue_id, RING_SIZE, 50, 3};
  expect_errno("intruder_own_update_queue", kio(d.kfd, UPDATE_QUEUE, &u2), mine ? 0 : EFAULT,
               "UPDATE_QUEUE(the owner's queue number)");
  expect_errno("intruder_own_destroy_queue", destroy_queue(&d, o.queue_id), mine ? 0 : EINVAL,
               "DESTROY_QUEUE(the owner's queue number)");
  expect_errno("intruder_own_destroy_queue_again", destroy_queue(&d, o.queue_id), EINVAL,
               "a second DESTROY_QUEUE(the owner's queue number)");
  if (!mine) destroy_queue(&d, my_queue);
  /* The owner's event number, destroyed once (the intruder's own), then refused. */
  mine = my_event == o.event_id;
  expect_errno("intruder_own_destroy_event", event_op(&d, DESTROY_EVENT, o.event_id), mine ? 0 : EINVAL,
               "DESTROY_EVENT(the owner's event number)");
  expect_errno("intruder_own_destroy_event_again", event_op(&d, DESTROY_EVENT, o.event_id), EINVAL,
               "a second DESTROY_EVENT(the owner's event number)");
  /* Exits with its GTT buffer mapped: the daemon frees what is left. */
  return failures ? 1 : 0;
}

/* ---- VRAM limits ---- */

/* Fake GPU VAs for buffers never mapped (ALLOC does not map; distinct and page-aligned). */
#define HOG_VA_BASE 0x100000000000ull

static void expect_available(const char *name, struct dev *d, uint64_t want) {
  uint64_t a = available(d);
  if (a == want) pass(name);
  else fail(name, "AVAILABLE_MEMORY is %" PRIu64 ", expected %" PRIu64, a, want);
}

/* Writes `value` into page `page` of the buffer and reads it back (the one page touched). */
static int touch(struct dev *d, struct bo *b, uint64_t page, uint64_t value) {
  volatile uint64_t *p =
      mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, d->render, (off_t)(b->offset + page * PAGE));
  if (p == MAP_FAILED) return errno;
  *p = value;
  int ok = *p == value;
  munmap((void *)p, PAGE);
  return ok ? 0 : EIO;
}

static int limit(uint64_t vram) {
  struct dev d = open_dev();
  const uint64_t gib = 1ull << 30;
  expect_available("limit_available_is_vram", &d, vram);
  struct bo big, one, rest, small;
  /* More than the GPU has, in one buffer. */
  expect_errno("limit_oversize_enomem", alloc_at(&d, HOG_VA_BASE, vram + (2ull << 20), FLAG_VRAM, &big), ENOMEM,
               "ALLOC_MEMORY_OF_GPU of VRAM + 2 MiB");
  expect_available("limit_oversize_took_nothing", &d, vram);
  expect_errno("limit_one_gib", alloc_at(&d, HOG_VA_BASE, gib, FLAG_VRAM | FLAG_WRITABLE, &one), 0,
               "ALLOC_MEMORY_OF_GPU of 1 GiB");
  expect_available("limit_available_after_one_gib", &d, vram - gib);
  uint64_t left = vram - gib;
  expect_errno("limit_one_page_too_many", alloc_at(&d, HOG_VA_BASE + 2 * gib, left + PAGE, FLAG_VRAM, &rest), ENOMEM,
               "ALLOC_MEMORY_OF_GPU of what is left + 4 KiB");
  expect_errno("limit_exactly_the_rest", alloc_at(&d, HOG_VA_BASE + 2 * gib, left, FLAG_VRAM | FLAG_WRITABLE, &rest),
               0, "ALLOC_MEMORY_OF_GPU of exactly what is left");
  expect_available("limit_available_zero", &d, 0);
  expect_errno("limit_full_enomem", alloc_at(&d, HOG_VA_BASE + vram + 4 * gib, PAGE, FLAG_VRAM, &small), ENOMEM,
               "ALLOC_MEMORY_OF_GPU of 4 KiB of VRAM with none left");
  /* GTT is host memory, not VRAM: still there. */
  int e = alloc_at(&d, HOG_VA_BASE + vram + 4 * gib, PAGE, FLAG_GTT, &small);
  expect_errno("limit_gtt_still_allocates", e, 0, "ALLOC_MEMORY_OF_GPU of 4 KiB of GTT with the VRAM full");
  if (!e) free_handle(&d, small.handle);
  /* The memory is there where it is touched: the last page of the big buffer. */
  expect_errno("limit_touch_last_page", touch(&d, &rest, left / PAGE - 1, 0x1234567890abcdefull), 0,
               "writing the last page of the rest");
  expect_errno("limit_free_one_gib", free_handle(&d, one.handle), 0, "FREE_MEMORY_OF_GPU of the 1 GiB buffer");
  expect_available("limit_available_after_free", &d, gib);
  expect_errno("limit_realloc_one_gib", alloc_at(&d, HOG_VA_BASE, gib, FLAG_VRAM, &one), 0,
               "ALLOC_MEMORY_OF_GPU of 1 GiB again");
  expect_errno("limit_free_one", free_handle(&d, one.handle), 0, "FREE_MEMORY_OF_GPU of the 1 GiB buffer");
  expect_errno("limit_free_rest", free_handle(&d, rest.handle), 0, "FREE_MEMORY_OF_GPU of the rest");
  expect_available("limit_all_back", &d, vram);
  return failures ? 1 : 0;
}

static int hog(uint64_t chunk_mib, uint64_t vram) {
  struct dev d = open_dev();
  const uint64_t chunk = chunk_mib << 20;
  const uint64_t max = vram / chunk;
  uint64_t avail_before = available(&d);
  if (avail_before > vram) fail("hog_available_before", "AVAILABLE_MEMORY %" PRIu64 " > VRAM %" PRIu64, avail_before, vram);
  struct bo *bos = calloc(max + 2, sizeof *bos);
  uint64_t count = 0;
  int e = 0;
  for (;;) {
    e = alloc_at(&d, HOG_VA_BASE + count * chunk, chunk, FLAG_VRAM | FLAG_WRITABLE, &bos[count]);
    if (e) break;
    /* One page touched per buffer, a different one each time. */
    uint64_t page = (count * 7) % (chunk / PAGE);
    int t = touch(&d, &bos[count], page, 0xfeed000000000000ull | (uint64_t)getpid() << 16 | count);
    if (t) die("touching page %" PRIu64 " of buffer %" PRIu64 ": %s", page, count, errname(t));
    count++;
    if (count > max) {
      fail("hog_enomem", "%" PRIu64 " buffers of %" PRIu64 " MiB allocated: more than the GPU's %" PRIu64 " bytes",
           count, chunk_mib, vram);
      break;
    }
  }
  uint64_t avail_at_enomem = available(&d);
  if (e == ENOMEM && avail_at_enomem < chunk) pass("hog_enomem");
  else if (e) fail("hog_enomem", "allocation %" PRIu64 " failed with %s (AVAILABLE_MEMORY %" PRIu64 ")", count,
                   errname(e), avail_at_enomem);
  /* Still a working client: GTT allocates, the version answers. */
  struct bo g;
  int ge = alloc_at(&d, HOG_VA_BASE - (1ull << 30), PAGE, FLAG_GTT, &g);
  ge = ge ? ge : free_handle(&d, g.handle);
  struct kfd_version v = {0, 0};
  ge = ge ? ge : kio(d.kfd, GET_VERSION, &v);
  expect_errno("hog_still_works", ge, 0, "GTT ALLOC/FREE and GET_VERSION after ENOMEM");
  printf("HOG count=%" PRIu64 " avail_before=%" PRIu64 " avail_at_enomem=%" PRIu64 "\n", count, avail_before,
         avail_at_enomem);
  fflush(stdout);
  /* Hold everything until the test closes stdin. */
  char buf[64];
  while (fgets(buf, sizeof buf, stdin)) {}
  /* The touched pages kept their values while 15 other clients allocated. */
  uint64_t lost = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t page = (i * 7) % (chunk / PAGE);
    volatile uint64_t *p =
        mmap(NULL, PAGE, PROT_READ, MAP_SHARED, d.render, (off_t)(bos[i].offset + page * PAGE));
    if (p == MAP_FAILED || *p != (0xfeed000000000000ull | (uint64_t)getpid() << 16 | i)) lost++;
    if (p != MAP_FAILED) munmap((void *)p, PAGE);
  }
  if (!lost) pass("hog_pages_kept");
  else fail("hog_pages_kept", "%" PRIu64 " of %" PRIu64 " touched pages lost their value", lost, count);
  /* Exits holding every buffer: the daemon gives the VRAM back. */
  return failures ? 1 : 0;
}

static int full(uint64_t vram) {
  struct dev d = open_dev();
  /* Clients that just exited are released asynchronously by the daemon: wait (bounded). */
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  uint64_t a;
  for (;;) {
    a = available(&d);
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
    if (a == vram || waited > 20) {
      printf("full_waited=%.3f\n", waited);
      break;
    }
    struct timespec ms = {0, 10 * 1000 * 1000};
    nanosleep(&ms, NULL);
  }
  if (a == vram) pass("full_available_is_vram");
  else fail("full_available_is_vram", "AVAILABLE_MEMORY %" PRIu64 " after 20 s, expected %" PRIu64, a, vram);
  struct bo all, more;
  expect_errno("full_alloc_all", alloc_at(&d, HOG_VA_BASE, vram, FLAG_VRAM | FLAG_WRITABLE, &all), 0,
               "ALLOC_MEMORY_OF_GPU of all the VRAM in one buffer");
  expect_errno("full_touch_last_page", touch(&d, &all, vram / PAGE - 1, 42), 0, "writing its last page");
  expect_errno("full_then_enomem", alloc_at(&d, HOG_VA_BASE + vram, PAGE, FLAG_VRAM, &more), ENOMEM,
               "ALLOC_MEMORY_OF_GPU of 4 KiB more");
  expect_errno("full_free", free_handle(&d, all.handle), 0, "FREE_MEMORY_OF_GPU of it");
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  /* Never hang a test run: the test's own deadlines are shorter. */
  alarm(300);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && !strcmp(argv[1], "owner")) return owner();
  if (argc >= 2 && !strcmp(argv[1], "intruder")) return intruder(argc - 2, argv + 2);
  if (argc == 3 && !strcmp(argv[1], "limit")) return limit(strtoull(argv[2], NULL, 0));
  if (argc == 4 && !strcmp(argv[1], "hog")) return hog(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
  if (argc == 3 && !strcmp(argv[1], "full")) return full(strtoull(argv[2], NULL, 0));
  fprintf(stderr, "usage: %s owner | intruder k=v... | limit VRAM | hog MIB VRAM | full VRAM\n", argv[0]);
  return 2;
}
