// Two kernels of one process on two non-blocking streams hand a value over through device
// memory (issue 13): kernel A (stream 1, N workgroups of 256) counts its workgroups in, then
// every thread spins until a flag is set and writes a value derived from it; kernel B (stream 2,
// launched after A) waits until at least one of A's workgroups is running, then sets the flag.
// Neither can finish unless both run at the same time, whichever the GPU starts first. Runs
// once with tight volatile-load spinning and once with atomic loads and s_sleep.
//
// usage: flag_handoff <workgroups> [timeout seconds per variant, default 30]
#include "concurrency.h"

template <Poll P>
__global__ void waiter(const unsigned* flag, unsigned* arrived, unsigned* out, const unsigned* abort_word) {
  if (threadIdx.x == 0) atomicAdd(arrived, 1u);
  unsigned token = wait_nonzero<P>(flag, abort_word);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  // 0 means this thread gave up; the host recomputes the rest.
  out[i] = token ? token * 2654435761u + i : 0;
}

template <Poll P>
__global__ void setter(unsigned* flag, const unsigned* arrived, unsigned token, unsigned* seen,
                       const unsigned* abort_word) {
  if (threadIdx.x != 0) return;
  if (!wait_at_least<P>(arrived, 1, abort_word)) {
    *seen = 0xffffffffu;
    return;
  }
  *seen = *(const volatile unsigned*)arrived;
  __hip_atomic_store(flag, token, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}

template <Poll P>
static void run(const char* what, unsigned groups, unsigned token, double timeout, Watchdog& wd, hipStream_t s1,
                hipStream_t s2) {
  const unsigned threads = groups * 256;
  unsigned *flag, *arrived, *out, *seen;
  HIP_CHECK(hipMalloc(&flag, 4));
  HIP_CHECK(hipMalloc(&arrived, 4));
  HIP_CHECK(hipMalloc(&seen, 4));
  HIP_CHECK(hipMalloc(&out, threads * 4));
  HIP_CHECK(hipMemset(flag, 0, 4));
  HIP_CHECK(hipMemset(arrived, 0, 4));
  HIP_CHECK(hipMemset(seen, 0, 4));
  HIP_CHECK(hipMemset(out, 0xab, threads * 4));
  HIP_CHECK(hipDeviceSynchronize());

  wd.arm(timeout, what);
  hipLaunchKernelGGL(waiter<P>, dim3(groups), dim3(256), 0, s1, flag, arrived, out, wd.abort_word());
  HIP_CHECK(hipGetLastError());
  hipLaunchKernelGGL(setter<P>, dim3(1), dim3(64), 0, s2, flag, arrived, token, seen, wd.abort_word());
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipStreamSynchronize(s2));
  HIP_CHECK(hipStreamSynchronize(s1));
  wd.disarm();

  unsigned h_arrived = 0, h_seen = 0;
  unsigned* h_out = (unsigned*)malloc(threads * 4);
  HIP_CHECK(hipMemcpy(&h_arrived, arrived, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&h_seen, seen, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(h_out, out, threads * 4, hipMemcpyDeviceToHost));
  if (h_seen == 0xffffffffu)
    fail(what, "kernel B gave up after %g s: none of kernel A's %u workgroups ran while it waited", timeout, groups);
  unsigned gave_up = 0, wrong = 0, first_bad = threads;
  for (unsigned i = 0; i < threads; i++) {
    unsigned want = token * 2654435761u + i;
    if (h_out[i] == 0) gave_up++;
    else if (h_out[i] != want) wrong++;
    if (h_out[i] != want && first_bad == threads) first_bad = i;
  }
  if (gave_up)
    fail(what, "%u of %u threads of kernel A gave up after %g s without seeing the flag kernel B sets", gave_up,
         threads, timeout);
  if (wrong)
    fail(what, "%u of %u results wrong, first out[%u] = %#x, want %#x", wrong, threads, first_bad, h_out[first_bad],
         token * 2654435761u + first_bad);
  if (h_arrived != groups) fail(what, "%u of %u workgroups of kernel A counted in", h_arrived, groups);
  if (h_seen < 1 || h_seen > groups) fail(what, "kernel B saw %u workgroups of A arrive", h_seen);
  if (wd.fired()) fail(what, "the watchdog fired");
  printf("%s: %u workgroups waited, kernel B saw %u of them running\n", what, groups, h_seen);
  pass(what);
  free(h_out);
  HIP_CHECK(hipFree(flag));
  HIP_CHECK(hipFree(arrived));
  HIP_CHECK(hipFree(seen));
  HIP_CHECK(hipFree(out));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: flag_handoff <workgroups> [timeout seconds]\n");
    return 2;
  }
  unsigned groups = (unsigned)atoi(argv[1]);
  double timeout = timeout_arg(argc, argv, 2);
  if (groups == 0) fail("flag_handoff", "bad workgroup count %s", argv[1]);
  Watchdog& wd = *new Watchdog();
  hipStream_t s1, s2;
  HIP_CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  char spin[64], sleepy[64];
  snprintf(spin, sizeof spin, "flag_handoff %u spin", groups);
  snprintf(sleepy, sizeof sleepy, "flag_handoff %u sleep", groups);
  run<Poll::Spin>(spin, groups, 0x9e3779b9u ^ groups, timeout, wd, s1, s2);
  run<Poll::Sleep>(sleepy, groups, 0x7f4a7c15u ^ groups, timeout, wd, s1, s2);
  HIP_CHECK(hipStreamDestroy(s1));
  HIP_CHECK(hipStreamDestroy(s2));
  return 0;
}
