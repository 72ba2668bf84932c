// Cooperative groups across the whole grid (issue 13).
//
// `reduce`: hipLaunchCooperativeKernel at the largest grid the occupancy API says can be
// co-resident (hipOccupancyMaxActiveBlocksPerMultiprocessor x multiProcessorCount, 256 threads
// a block) runs rounds of a grid-wide reduction, sum of (i + round) over a large array of i in
// 64-bit integers, with cg::this_grid().sync() between its steps: every block adds its part,
// sync, block 0 adds the parts, sync, every block reads the total. Checked against the CPU.
// Before the first grid.sync() every block counts itself in and waits (bounded by the
// watchdog) until all have: a GPU that cannot hold the whole grid at once makes the blocks give
// up there, instead of hanging in the hardware barrier.
//
// `too-large`: a cooperative launch of one block more than can be co-resident must fail with
// hipErrorCooperativeLaunchTooLarge, not hang; afterwards an ordinary kernel still runs.
//
// usage: grid_sync reduce|too-large [timeout seconds, default 30]
#include "concurrency.h"
#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

const unsigned THREADS = 256;
const unsigned ROUNDS = 3;

__global__ void grid_reduce(const unsigned* a, unsigned long long n, unsigned long long* partial,
                            unsigned long long* total, unsigned long long* seen, unsigned* arrived,
                            unsigned* status, const unsigned* abort_word) {
  __shared__ unsigned long long sums[THREADS];
  __shared__ bool all_here;
  cg::grid_group grid = cg::this_grid();
  const unsigned b = blockIdx.x, t = threadIdx.x, blocks = gridDim.x;
  if (t == 0) {
    atomicAdd(arrived, 1u);
    all_here = wait_at_least<Poll::Sleep>(arrived, blocks, abort_word);
    // 1: ran; 2: gave up waiting for the other blocks; 3: not a valid grid group.
    status[b] = !grid.is_valid() ? 3 : all_here ? 1 : 2;
  }
  __syncthreads();
  if (!all_here || !grid.is_valid()) return;
  for (unsigned r = 0; r < ROUNDS; r++) {
    unsigned long long s = 0;
    for (unsigned long long i = (unsigned long long)b * THREADS + t; i < n; i += (unsigned long long)blocks * THREADS)
      s += a[i] + r;
    sums[t] = s;
    __syncthreads();
    for (unsigned w = THREADS / 2; w > 0; w /= 2) {
      if (t < w) sums[t] += sums[t + w];
      __syncthreads();
    }
    if (t == 0) partial[b] = sums[0];
    grid.sync();
    if (b == 0) {
      unsigned long long s2 = 0;
      for (unsigned k = t; k < blocks; k += THREADS) s2 += partial[k];
      sums[t] = s2;
      __syncthreads();
      for (unsigned w = THREADS / 2; w > 0; w /= 2) {
        if (t < w) sums[t] += sums[t + w];
        __syncthreads();
      }
      if (t == 0) total[r] = sums[0];
    }
    grid.sync();
    // Every block must see block 0's total (written before the barrier).
    if (t == 0) seen[(unsigned long long)r * blocks + b] = *(volatile unsigned long long*)&total[r];
    __syncthreads();
  }
}

__global__ void plain(unsigned* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * 1000 + threadIdx.x; }

static int co_resident_blocks(int* per_cu, int* cus) {
  int dev = 0;
  HIP_CHECK(hipGetDevice(&dev));
  int coop = 0;
  HIP_CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, dev));
  if (!coop) fail("grid_sync", "the device does not report cooperative launch support");
  HIP_CHECK(hipDeviceGetAttribute(cus, hipDeviceAttributeMultiprocessorCount, dev));
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(per_cu, grid_reduce, THREADS, 0));
  if (*per_cu < 1) fail("grid_sync", "occupancy: %d blocks of %u threads per CU", *per_cu, THREADS);
  return *per_cu * *cus;
}

static hipError_t launch(unsigned blocks, const unsigned* a, unsigned long long n, unsigned long long* partial,
                         unsigned long long* total, unsigned long long* seen, unsigned* arrived, unsigned* status,
                         const unsigned* abort_word) {
  void* args[] = {&a, &n, &partial, &total, &seen, &arrived, &status, &abort_word};
  return hipLaunchCooperativeKernel(reinterpret_cast<void*>(grid_reduce), dim3(blocks), dim3(THREADS), args, 0, 0);
}

static void reduce(double timeout) {
  const char* what = "grid_sync_reduce";
  int per_cu = 0, cus = 0;
  const unsigned blocks = co_resident_blocks(&per_cu, &cus);
  printf("co-resident grid: %u blocks of %u threads (%d per CU x %d CUs)\n", blocks, THREADS, per_cu, cus);
  const unsigned long long n = 3ull << 20;
  unsigned* h_a = (unsigned*)malloc(n * 4);
  for (unsigned long long i = 0; i < n; i++) h_a[i] = (unsigned)i;
  unsigned *a, *arrived, *status;
  unsigned long long *partial, *total, *seen;
  HIP_CHECK(hipMalloc(&a, n * 4));
  HIP_CHECK(hipMalloc(&arrived, 4));
  HIP_CHECK(hipMalloc(&status, blocks * 4));
  HIP_CHECK(hipMalloc(&partial, blocks * 8));
  HIP_CHECK(hipMalloc(&total, ROUNDS * 8));
  HIP_CHECK(hipMalloc(&seen, (size_t)ROUNDS * blocks * 8));
  HIP_CHECK(hipMemcpy(a, h_a, n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(arrived, 0, 4));
  HIP_CHECK(hipMemset(status, 0, blocks * 4));
  HIP_CHECK(hipMemset(total, 0, ROUNDS * 8));
  HIP_CHECK(hipMemset(seen, 0, (size_t)ROUNDS * blocks * 8));

  Watchdog& wd = *new Watchdog();
  wd.arm(timeout, what);
  hipError_t e = launch(blocks, a, n, partial, total, seen, arrived, status, wd.abort_word());
  if (e != hipSuccess)
    fail(what, "hipLaunchCooperativeKernel of %u blocks (as many as the occupancy API says fit): %s (%s)", blocks,
         hipGetErrorName(e), hipGetErrorString(e));
  HIP_CHECK(hipDeviceSynchronize());
  wd.disarm();

  unsigned* h_status = (unsigned*)malloc(blocks * 4);
  unsigned h_arrived = 0;
  HIP_CHECK(hipMemcpy(h_status, status, blocks * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&h_arrived, arrived, 4, hipMemcpyDeviceToHost));
  unsigned counts[4] = {0, 0, 0, 0};
  for (unsigned b = 0; b < blocks; b++) counts[h_status[b] < 4 ? h_status[b] : 0]++;
  if (counts[3]) fail(what, "%u blocks found this_grid() not valid (no cooperative launch set-up)", counts[3]);
  if (counts[0] == blocks)
    fail(what, "the kernel never ran (none of its %u blocks started), though the launch and hipDeviceSynchronize "
         "returned success", blocks);
  if (counts[2] || counts[0])
    fail(what, "only %u of %u blocks were resident at once: %u gave up after %g s waiting for the rest, %u never ran",
         h_arrived, blocks, counts[2], timeout, counts[0]);
  unsigned long long h_total[ROUNDS];
  unsigned long long* h_seen = (unsigned long long*)malloc((size_t)ROUNDS * blocks * 8);
  HIP_CHECK(hipMemcpy(h_total, total, ROUNDS * 8, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(h_seen, seen, (size_t)ROUNDS * blocks * 8, hipMemcpyDeviceToHost));
  for (unsigned r = 0; r < ROUNDS; r++) {
    unsigned long long want = 0;
    for (unsigned long long i = 0; i < n; i++) want += h_a[i] + r;
    if (h_total[r] != want) fail(what, "round %u: total %llu, want %llu", r, h_total[r], want);
    for (unsigned b = 0; b < blocks; b++)
      if (h_seen[(size_t)r * blocks + b] != want)
        fail(what, "round %u: block %u read total %llu after grid.sync(), want %llu", r, b,
             h_seen[(size_t)r * blocks + b], want);
  }
  printf("%u blocks, %u rounds, sum of i for i < %llu = %llu\n", blocks, ROUNDS, n, h_total[0]);
  pass(what);
}

static void too_large() {
  const char* what = "cooperative_launch_too_large";
  int per_cu = 0, cus = 0;
  const unsigned blocks = co_resident_blocks(&per_cu, &cus) + 1;
  unsigned *a, *arrived, *status;
  unsigned long long *partial, *total, *seen;
  const unsigned long long n = THREADS;
  HIP_CHECK(hipMalloc(&a, n * 4));
  HIP_CHECK(hipMalloc(&arrived, 4));
  HIP_CHECK(hipMalloc(&status, blocks * 4));
  HIP_CHECK(hipMalloc(&partial, blocks * 8));
  HIP_CHECK(hipMalloc(&total, ROUNDS * 8));
  HIP_CHECK(hipMalloc(&seen, (size_t)ROUNDS * blocks * 8));
  unsigned* never = host_shared<unsigned>(1);
  // Should it launch after all, its blocks give up at once instead of waiting.
  *never = 1;
  hipError_t e = launch(blocks, a, n, partial, total, seen, arrived, status, device_view(never));
  printf("cooperative launch of %u blocks (%d per CU x %d CUs fit): %s (%s)\n", blocks, per_cu, cus,
         hipGetErrorName(e), hipGetErrorString(e));
  if (e != hipErrorCooperativeLaunchTooLarge)
    fail(what, "got %s, want hipErrorCooperativeLaunchTooLarge", hipGetErrorName(e));
  (void)hipGetLastError();
  // The device still works.
  unsigned* out;
  HIP_CHECK(hipMalloc(&out, 4 * THREADS * 4));
  hipLaunchKernelGGL(plain, dim3(4), dim3(THREADS), 0, 0, out);
  HIP_CHECK(hipGetLastError());
  unsigned h[4 * THREADS];
  HIP_CHECK(hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost));
  for (unsigned i = 0; i < 4 * THREADS; i++)
    if (h[i] != (i / THREADS) * 1000 + i % THREADS) fail(what, "a kernel after the refused launch: out[%u] = %u", i, h[i]);
  pass(what);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "reduce")) reduce(timeout_arg(argc, argv, 2));
  else if (!strcmp(mode, "too-large")) too_large();
  else {
    fprintf(stderr, "usage: grid_sync reduce|too-large [timeout seconds]\n");
    return 2;
  }
  return 0;
}
