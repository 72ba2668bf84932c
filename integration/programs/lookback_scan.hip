// Single-pass inclusive prefix sum with decoupled look-back (issue 13), over 10,000 workgroups
// of 256 threads, 4 uint32 items a thread (sums modulo 2^32). A workgroup takes its tile number
// from an atomic counter when it starts, so tiles go to workgroups in whatever order the GPU
// runs them; it publishes its tile's sum, then walks back over its predecessors' published
// sums (spinning while one has not published yet) until it finds a complete prefix, and
// publishes its own. Checked against the CPU's scan.
//
// As in rocPRIM, a tile's state is one 64-bit word (flag and sum) written and read with single
// 64-bit atomic accesses. The word also carries a check of the sum, so a read that sees half of
// a store (a torn 64-bit access) is recognised, counted, reported and retried.
//
// usage: lookback_scan [timeout seconds, default 30]
#include "concurrency.h"

const unsigned THREADS = 256;
const unsigned ITEMS = 4;
const unsigned TILE = THREADS * ITEMS;
const unsigned TILES = 10000;

// A tile's published state: the sum in the low word; in the high word the flag (2 bits) and
// the other 30 bits of mix32(sum), to recognise torn reads. 0: not published yet.
const unsigned AGGREGATE = 1;  // the tile's own sum
const unsigned PREFIX = 2;     // the sum of every item up to the tile's end

__device__ inline void publish(unsigned long long* state, unsigned flag, unsigned value) {
  unsigned long long hi = (mix32(value) & ~3u) | flag;
  __hip_atomic_store(state, hi << 32 | value, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}

__global__ void scan(const unsigned* in, unsigned* out, unsigned long long* state, unsigned* next_tile,
                     unsigned* order, unsigned* gave_up, unsigned* torn, const unsigned* abort_word) {
  __shared__ unsigned tile_s, exclusive_s;
  __shared__ unsigned sums[THREADS];
  const unsigned t = threadIdx.x;
  if (t == 0) {
    tile_s = atomicAdd(next_tile, 1u);
    order[tile_s] = blockIdx.x;
  }
  __syncthreads();
  const unsigned tile = tile_s;
  const unsigned base = tile * TILE + t * ITEMS;
  unsigned v[ITEMS];
  unsigned mine = 0;
  for (unsigned k = 0; k < ITEMS; k++) {
    v[k] = in[base + k];
    mine += v[k];
  }
  // Inclusive scan of the threads' sums (Hillis-Steele in LDS).
  sums[t] = mine;
  __syncthreads();
  for (unsigned d = 1; d < THREADS; d *= 2) {
    unsigned add = t >= d ? sums[t - d] : 0;
    __syncthreads();
    sums[t] += add;
    __syncthreads();
  }
  const unsigned aggregate = sums[THREADS - 1];
  if (t == 0) {
    unsigned exclusive = 0;
    if (tile == 0) {
      publish(&state[0], PREFIX, aggregate);
    } else {
      publish(&state[tile], AGGREGATE, aggregate);
      for (int j = (int)tile - 1; j >= 0;) {
        unsigned long long s = __hip_atomic_load(&state[j], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
        unsigned hi = (unsigned)(s >> 32), value = (unsigned)s, flag = hi & 3;
        if (flag == 0) {
          if (told_to_give_up(abort_word)) {
            atomicAdd(gave_up, 1u);
            break;
          }
          continue;
        }
        if ((hi & ~3u) != (mix32(value) & ~3u)) {
          atomicAdd(torn, 1u);
          continue;
        }
        exclusive += value;
        if (flag == PREFIX) break;
        j--;
      }
      publish(&state[tile], PREFIX, exclusive + aggregate);
    }
    exclusive_s = exclusive;
  }
  __syncthreads();
  unsigned run = exclusive_s + sums[t] - mine;
  for (unsigned k = 0; k < ITEMS; k++) {
    run += v[k];
    out[base + k] = run;
  }
}

int main(int argc, char** argv) {
  const char* what = "lookback_scan";
  double timeout = timeout_arg(argc, argv, 1);
  const size_t n = (size_t)TILES * TILE;
  unsigned* h_in = (unsigned*)malloc(n * 4);
  unsigned* h_out = (unsigned*)malloc(n * 4);
  for (size_t i = 0; i < n; i++) h_in[i] = mix32((unsigned)i);
  unsigned *in, *out, *next_tile, *order, *gave_up, *torn;
  unsigned long long* state;
  HIP_CHECK(hipMalloc(&in, n * 4));
  HIP_CHECK(hipMalloc(&out, n * 4));
  HIP_CHECK(hipMalloc(&state, TILES * 8));
  HIP_CHECK(hipMalloc(&next_tile, 4));
  HIP_CHECK(hipMalloc(&order, TILES * 4));
  HIP_CHECK(hipMalloc(&gave_up, 4));
  HIP_CHECK(hipMalloc(&torn, 4));
  HIP_CHECK(hipMemcpy(in, h_in, n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(out, 0, n * 4));
  HIP_CHECK(hipMemset(state, 0, TILES * 8));
  HIP_CHECK(hipMemset(next_tile, 0, 4));
  HIP_CHECK(hipMemset(gave_up, 0, 4));
  HIP_CHECK(hipMemset(torn, 0, 4));

  Watchdog& wd = *new Watchdog();
  wd.arm(timeout, what);
  hipLaunchKernelGGL(scan, dim3(TILES), dim3(THREADS), 0, 0, in, out, state, next_tile, order, gave_up, torn,
                     wd.abort_word());
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  wd.disarm();

  unsigned h_gave_up = 0, h_next = 0, h_torn = 0;
  HIP_CHECK(hipMemcpy(&h_gave_up, gave_up, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&h_torn, torn, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&h_next, next_tile, 4, hipMemcpyDeviceToHost));
  if (h_gave_up)
    fail(what, "%u workgroups gave up after %g s waiting for a predecessor that never published its sum", h_gave_up,
         timeout);
  if (h_torn)
    fail(what, "%u look-back reads were torn: a 64-bit atomic load saw half of another workgroup's 64-bit "
         "atomic store (naturally aligned 64-bit global accesses must be single-copy atomic)", h_torn);
  if (h_next != TILES) fail(what, "%u of %u tiles were taken", h_next, TILES);
  HIP_CHECK(hipMemcpy(h_out, out, n * 4, hipMemcpyDeviceToHost));
  unsigned run = 0;
  for (size_t i = 0; i < n; i++) {
    run += h_in[i];
    if (h_out[i] != run) fail(what, "out[%zu] = %u, want %u (tile %zu)", i, h_out[i], run, i / TILE);
  }
  // How far the tile order strayed from the block order (information only: any order is valid).
  unsigned* h_order = (unsigned*)malloc(TILES * 4);
  HIP_CHECK(hipMemcpy(h_order, order, TILES * 4, hipMemcpyDeviceToHost));
  unsigned moved = 0;
  for (unsigned k = 0; k < TILES; k++) moved += h_order[k] != k;
  printf("%u tiles of %u items, %zu items in all; %u tiles went to a block with another index\n", TILES, TILE, n,
         moved);
  if (wd.fired()) fail(what, "the watchdog fired");
  pass(what);
  return 0;
}
