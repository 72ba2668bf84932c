// A kernel polls host memory (hipHostMalloc: pinned, mapped, coherent) until the host writes it,
// while the host first waits for a kernel on another stream (issue 13). The other stream's
// kernel starts its work only once the poller is running, so the host's wait ends only if both
// kernels run at the same time; then the host checks that kernel's results, checks the poller is
// still polling, writes the value, and checks the poller saw it. Runs once with tight
// volatile-load polling and once with atomic loads and s_sleep.
//
// usage: host_poll [timeout seconds per variant, default 30]
#include "concurrency.h"

const unsigned POLL_GROUPS = 4;
const unsigned WORK_GROUPS = 64;

template <Poll P>
__global__ void poller(const unsigned* host_value, unsigned* started, unsigned* out, const unsigned* abort_word) {
  if (threadIdx.x == 0) atomicAdd(started, 1u);
  unsigned v = wait_nonzero<P>(host_value, abort_word);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = v ? mix32(v + i) | 1 : 0;
}

// Waits until the poller runs, then fills out[i] = mix32(i).
template <Poll P>
__global__ void worker(const unsigned* started, unsigned* out, unsigned* gave_up, const unsigned* abort_word) {
  __shared__ bool go;
  if (threadIdx.x == 0) {
    go = wait_at_least<P>(started, 1, abort_word);
    if (!go) atomicAdd(gave_up, 1u);
  }
  __syncthreads();
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = go ? mix32(i) : 0;
}

template <Poll P>
static void run(const char* what, unsigned value, double timeout, Watchdog& wd, hipStream_t s1, hipStream_t s2) {
  const unsigned polls = POLL_GROUPS * 256, works = WORK_GROUPS * 256;
  unsigned* host_value = host_shared<unsigned>(1);
  unsigned *started, *gave_up, *poll_out, *work_out;
  HIP_CHECK(hipMalloc(&started, 4));
  HIP_CHECK(hipMalloc(&gave_up, 4));
  HIP_CHECK(hipMalloc(&poll_out, polls * 4));
  HIP_CHECK(hipMalloc(&work_out, works * 4));
  HIP_CHECK(hipMemset(started, 0, 4));
  HIP_CHECK(hipMemset(gave_up, 0, 4));
  HIP_CHECK(hipMemset(poll_out, 0xab, polls * 4));
  HIP_CHECK(hipMemset(work_out, 0xab, works * 4));
  HIP_CHECK(hipDeviceSynchronize());

  wd.arm(timeout, what);
  hipLaunchKernelGGL(poller<P>, dim3(POLL_GROUPS), dim3(256), 0, s1, device_view(host_value), started, poll_out,
                     wd.abort_word());
  HIP_CHECK(hipGetLastError());
  hipLaunchKernelGGL(worker<P>, dim3(WORK_GROUPS), dim3(256), 0, s2, started, work_out, gave_up, wd.abort_word());
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipStreamSynchronize(s2));
  // The poller cannot have finished: nobody wrote its value yet.
  hipError_t q = hipStreamQuery(s1);
  bool still_polling = q == hipErrorNotReady;
  __atomic_store_n(host_value, value, __ATOMIC_RELEASE);
  HIP_CHECK(hipStreamSynchronize(s1));
  wd.disarm();

  unsigned h_gave_up = 0, h_started = 0;
  unsigned* h = (unsigned*)malloc(works * 4);
  HIP_CHECK(hipMemcpy(&h_gave_up, gave_up, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&h_started, started, 4, hipMemcpyDeviceToHost));
  if (h_gave_up)
    fail(what, "%u workgroups of the other stream's kernel gave up after %g s: the polling kernel never ran meanwhile",
         h_gave_up, timeout);
  HIP_CHECK(hipMemcpy(h, work_out, works * 4, hipMemcpyDeviceToHost));
  for (unsigned i = 0; i < works; i++)
    if (h[i] != mix32(i)) fail(what, "other stream's kernel: out[%u] = %#x, want %#x", i, h[i], mix32(i));
  HIP_CHECK(hipMemcpy(h, poll_out, polls * 4, hipMemcpyDeviceToHost));
  unsigned missed = 0;
  for (unsigned i = 0; i < polls; i++) missed += h[i] == 0;
  if (missed)
    fail(what, "%u of %u polling threads gave up after %g s without seeing the host's write", missed, polls, timeout);
  if (!still_polling)
    fail(what, "hipStreamQuery on the polling kernel's stream said %s before the host wrote the value",
         hipGetErrorName(q));
  for (unsigned i = 0; i < polls; i++)
    if (h[i] != (mix32(value + i) | 1)) fail(what, "poller: out[%u] = %#x, want %#x", i, h[i], mix32(value + i) | 1);
  if (h_started != POLL_GROUPS) fail(what, "%u of %u polling workgroups counted in", h_started, POLL_GROUPS);
  if (wd.fired()) fail(what, "the watchdog fired");
  pass(what);
  free(h);
  HIP_CHECK(hipHostFree(host_value));
  HIP_CHECK(hipFree(started));
  HIP_CHECK(hipFree(gave_up));
  HIP_CHECK(hipFree(poll_out));
  HIP_CHECK(hipFree(work_out));
}

int main(int argc, char** argv) {
  double timeout = timeout_arg(argc, argv, 1);
  Watchdog& wd = *new Watchdog();
  hipStream_t s1, s2;
  HIP_CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  run<Poll::Spin>("host_poll spin", 0x2545f491u, timeout, wd, s1, s2);
  run<Poll::Sleep>("host_poll sleep", 0x5851f42du, timeout, wd, s1, s2);
  HIP_CHECK(hipStreamDestroy(s1));
  HIP_CHECK(hipStreamDestroy(s2));
  return 0;
}
