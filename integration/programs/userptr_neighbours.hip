// Application threads keep writing next to host buffers that the main thread registers
// (hipHostRegister), uses from kernels and unregisters, over and over. A registration
// covers whole pages, so those pages also hold the neighbours' data: a counter another
// thread increments, malloc's chunk headers. No write may be lost, whatever the
// simulator does to share the pages with the GPU (in daemon mode they must reach
// another process).
//
//   neighbour_counters: a thread increments counters in the first and last page of a
//     registered range (outside the buffer); at the end each counter equals the number
//     of increments the thread made.
//   malloc_neighbours: a thread allocates, fills, checks and frees small blocks while
//     the main thread registers malloc'd buffers among them; every block keeps its
//     pattern and malloc never reports corruption.
//
// Each part prints how much the other thread did and during how many registrations it made
// progress ("overlapped by writes"): the test requires enough of both, or the race it is
// about may not have happened. ROUNDS (environment) sets the number of registrations per
// part (default 200); arguments name the parts to run (default: both).
#include "check.h"
#include <atomic>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <vector>

__global__ void scale_add(int* buf, int n, int round) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = buf[i] * 3 + round;
}

static std::atomic<bool> stop{false};
// The other thread's loop count so far, for the main thread to see it run.
static std::atomic<uint64_t> progress{0};

// Starts `body` on another thread and returns once it is running.
static pthread_t start_neighbour(void* (*body)(void*)) {
  stop = false;
  progress = 0;
  pthread_t t;
  pthread_create(&t, nullptr, body, nullptr);
  while (progress.load(std::memory_order_relaxed) == 0) sched_yield();
  return t;
}

// Runs one registration round once the other thread is seen running (so that it is likely
// to write during the registration); true if it made progress meanwhile.
template <typename F>
static bool overlapped(F round) {
  uint64_t before = progress.load(std::memory_order_relaxed);
  while (progress.load(std::memory_order_relaxed) == before) sched_yield();
  before = progress.load(std::memory_order_relaxed);
  round();
  return progress.load(std::memory_order_relaxed) != before;
}

// Counters before and after the buffer, in the pages the registration covers.
static const int COUNTERS = 8;
static volatile uint64_t* before_buf;
static volatile uint64_t* after_buf;
static uint64_t increments;

static void* increment_counters(void*) {
  uint64_t n = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    for (int k = 0; k < COUNTERS; k++) {
      before_buf[k] = before_buf[k] + 1;  // a plain read-modify-write, as application code does
      after_buf[k] = after_buf[k] + 1;
    }
    n++;
    progress.store(n, std::memory_order_relaxed);
  }
  increments = n;
  return nullptr;
}

static void use_registered(int* host, int n, int round, const char* what) {
  for (int i = 0; i < n; i++) host[i] = i ^ round;
  HIP_CHECK(hipHostRegister(host, n * sizeof(int), hipHostRegisterDefault));
  int* dev;
  HIP_CHECK(hipHostGetDevicePointer((void**)&dev, host, 0));
  scale_add<<<(n + 255) / 256, 256>>>(dev, n, round);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    int want = (i ^ round) * 3 + round;
    if (host[i] != want) fail(what, "round %d: element %d = %d, want %d", round, i, host[i], want);
  }
  HIP_CHECK(hipHostUnregister(host));
}

static void neighbour_counters(int rounds) {
  const size_t page = 4096, region_bytes = 4 * page;
  char* region = (char*)mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) fail("neighbour_counters", "mmap failed");
  // The buffer starts 256 bytes into page 0 and ends 256 bytes before the end of
  // page 3; the counters sit in the bytes around it.
  before_buf = (volatile uint64_t*)region;
  int* buf = (int*)(region + 256);
  int n = (int)((region_bytes - 512) / sizeof(int));
  after_buf = (volatile uint64_t*)(region + region_bytes - 128);
  pthread_t t = start_neighbour(increment_counters);
  int during = 0;
  for (int round = 0; round < rounds; round++)
    during += overlapped([&] { use_registered(buf, n, round, "neighbour_counters"); });
  stop = true;
  pthread_join(t, nullptr);
  for (int k = 0; k < COUNTERS; k++) {
    if (before_buf[k] != increments || after_buf[k] != increments)
      fail("neighbour_counters", "counter %d: %llu before and %llu after the buffer, want %llu (increments lost)", k,
           (unsigned long long)before_buf[k], (unsigned long long)after_buf[k], (unsigned long long)increments);
  }
  printf("neighbour_counters: %d registrations, %llu increments of each counter, %d overlapped by writes\n", rounds,
         (unsigned long long)increments, during);
  munmap(region, region_bytes);
  pass("neighbour_counters");
}

// Small blocks, each filled with a pattern derived from its address and a serial.
static std::atomic<uint64_t> checked_blocks{0};
static std::atomic<int> bad_block{0};

static void* churn_malloc(void*) {
  std::vector<std::pair<uint32_t*, uint32_t>> live;
  uint32_t serial = 1, seed = 12345;
  uint64_t checked = 0, steps = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    progress.store(++steps, std::memory_order_relaxed);
    seed = seed * 1664525u + 1013904223u;
    if (live.size() < 64 && (seed >> 28) < 10) {
      size_t words = 4 + (seed >> 8) % 60;
      uint32_t* b = (uint32_t*)malloc(words * 4 + 4);
      b[0] = (uint32_t)words;
      for (size_t i = 1; i <= words; i++) b[i] = serial * 2654435761u + (uint32_t)i;
      live.push_back({b, serial++});
    } else if (!live.empty()) {
      size_t k = (seed >> 4) % live.size();
      uint32_t* b = live[k].first;
      uint32_t s = live[k].second;
      for (uint32_t i = 1; i <= b[0]; i++)
        if (b[i] != s * 2654435761u + i) bad_block = 1;
      checked++;
      free(b);
      live[k] = live.back();
      live.pop_back();
    }
  }
  for (auto& blk : live) {
    for (uint32_t i = 1; i <= blk.first[0]; i++)
      if (blk.first[i] != blk.second * 2654435761u + i) bad_block = 1;
    free(blk.first);
  }
  checked_blocks = checked;
  return nullptr;
}

static void malloc_neighbours(int rounds) {
  // One arena for every thread, so the other thread's blocks are the registered
  // buffers' neighbours (by default each thread would get its own heap).
  mallopt(M_ARENA_MAX, 1);
  pthread_t t = start_neighbour(churn_malloc);
  int during = 0;
  for (int round = 0; round < rounds; round++) {
    // Sizes that land in malloc's heap, between the other thread's blocks.
    int n = 200 + (round * 37) % 3000;
    int* buf = (int*)malloc(n * sizeof(int));
    during += overlapped([&] { use_registered(buf, n, round, "malloc_neighbours"); });
    free(buf);
  }
  stop = true;
  pthread_join(t, nullptr);
  if (bad_block) fail("malloc_neighbours", "a block of the other thread lost its contents");
  printf("malloc_neighbours: %d registrations, %llu blocks checked, %d overlapped by writes\n", rounds,
         (unsigned long long)checked_blocks.load(), during);
  pass("malloc_neighbours");
}

int main(int argc, char** argv) {
  const char* r = getenv("ROUNDS");
  int rounds = r ? atoi(r) : 200;
  // Arguments name the parts to run (default: both).
  bool all = argc < 2;
  for (int i = 1; i < argc; i++) all = all || !strcmp(argv[i], "all");
  auto wanted = [&](const char* part) {
    for (int i = 1; i < argc; i++)
      if (!strcmp(argv[i], part)) return true;
    return all;
  };
  if (wanted("neighbour_counters")) neighbour_counters(rounds);
  if (wanted("malloc_neighbours")) malloc_neighbours(rounds);
  return 0;
}
