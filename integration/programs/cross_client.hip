// Two processes on one GPU (two clients of one rocjitsu daemon) hand values over while both
// run kernels (issue 13). The test creates a small file both map (MAP_SHARED); each process's
// host relays between that file and its own pinned host memory (hipHostMalloc, mapped and
// coherent), which its kernels read and write.
//
// `waiter` (client A): a kernel of 416 workgroups of 256 threads publishes a challenge computed
// on the GPU, then every thread spins until a response appears in its host memory and writes a
// value derived from it. The host copies the challenge to the file, prints "spinning" once the
// kernel runs, and copies the response from the file when client B puts it there.
// `producer` (client B, started once A prints "spinning"): reads the challenge from the file,
// computes the response with a kernel of its own and puts it in the file.
// A's kernel can finish only if B's kernel ran while it was running. Both check their results
// against the CPU.
//
// usage: cross_client waiter|producer <shared file> [timeout seconds, default 30]
#include "concurrency.h"
#include <fcntl.h>
#include <sys/mman.h>

// The shared file's layout.
struct Shared {
  unsigned challenge;
  unsigned response;
};

const unsigned WAIT_GROUPS = 416;
const unsigned RESPONSE_TERMS = 64 * 256;
const unsigned SEED = 0x1234567u;

__host__ __device__ inline unsigned challenge_of(unsigned seed) { return mix32(seed * 0x9e3779b9u + 7) | 1; }

// What B's kernel computes from the challenge (the CPU computes it the same way).
__host__ __device__ inline unsigned response_term(unsigned challenge, unsigned k) {
  unsigned h = challenge ^ k;
  for (int r = 0; r < 16; r++) h = mix32(h + r);
  return h;
}

static unsigned cpu_response(unsigned challenge) {
  unsigned s = 0;
  for (unsigned k = 0; k < RESPONSE_TERMS; k++) s += response_term(challenge, k);
  return s | 1;
}

// host[0]: challenge (GPU writes), host[1]: workgroups running, host[2]: response (host writes).
__global__ void wait_for_response(unsigned* host, unsigned seed, unsigned* out, const unsigned* abort_word) {
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) __hip_atomic_store(&host[0], challenge_of(seed), __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    __hip_atomic_fetch_add(&host[1], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  }
  unsigned r = wait_nonzero<Poll::Sleep>(&host[2], abort_word);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = r ? r ^ i : 0;
}

__global__ void respond(unsigned challenge, unsigned* sum) {
  unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(sum, response_term(challenge, k));
}

static Shared* map_shared(const char* path) {
  int fd = open(path, O_RDWR);
  if (fd < 0) fail("cross_client", "cannot open %s", path);
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("cross_client", "cannot map %s", path);
  close(fd);
  return (Shared*)p;
}

static unsigned load(const unsigned* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void store(unsigned* p, unsigned v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

static int waiter(Shared* shared, double timeout) {
  const char* what = "cross_client_waiter";
  const unsigned threads = WAIT_GROUPS * 256;
  unsigned* host = host_shared<unsigned>(4);
  unsigned* out;
  HIP_CHECK(hipMalloc(&out, threads * 4));
  HIP_CHECK(hipMemset(out, 0xab, threads * 4));
  hipStream_t s;
  HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_CHECK(hipDeviceSynchronize());
  Watchdog& wd = *new Watchdog();
  wd.arm(timeout, what);
  auto start = std::chrono::steady_clock::now();
  hipLaunchKernelGGL(wait_for_response, dim3(WAIT_GROUPS), dim3(256), 0, s, device_view(host), SEED, out,
                     wd.abort_word());
  HIP_CHECK(hipGetLastError());
  bool announced = false, relayed = false;
  unsigned running_when_relayed = 0;
  for (;;) {
    hipError_t q = hipStreamQuery(s);
    if (q == hipSuccess) break;
    if (q != hipErrorNotReady) fail(what, "hipStreamQuery: %s", hipGetErrorName(q));
    unsigned c = load(&host[0]);
    if (!announced && c && load(&host[1]) > 0) {
      store(&shared->challenge, c);
      printf("spinning\n");
      fflush(stdout);
      announced = true;
    }
    unsigned r = load(&shared->response);
    if (!relayed && r) {
      running_when_relayed = load(&host[1]);
      store(&host[2], r);
      relayed = true;
    }
    usleep(200);
  }
  wd.disarm();
  double took = seconds_since(start);
  unsigned* h = (unsigned*)malloc(threads * 4);
  HIP_CHECK(hipMemcpy(h, out, threads * 4, hipMemcpyDeviceToHost));
  const unsigned challenge = challenge_of(SEED), want = cpu_response(challenge);
  if (load(&host[0]) != challenge)
    fail(what, "the kernel published challenge %#x, want %#x", load(&host[0]), challenge);
  unsigned gave_up = 0;
  for (unsigned i = 0; i < threads; i++) gave_up += h[i] == 0;
  if (gave_up)
    fail(what, "%u of %u threads gave up after %g s: no response from the other client (%s)", gave_up, threads,
         timeout, relayed ? "it came too late" : "its kernel did not run while this one spun");
  for (unsigned i = 0; i < threads; i++)
    if (h[i] != (want ^ i)) fail(what, "out[%u] = %#x, want %#x", i, h[i], want ^ i);
  if (load(&host[1]) != WAIT_GROUPS) fail(what, "%u of %u workgroups counted in", load(&host[1]), WAIT_GROUPS);
  if (wd.fired()) fail(what, "the watchdog fired");
  printf("%s: response %#x after %.2f s, %u workgroups were running when it came\n", what, want, took,
         running_when_relayed);
  pass(what);
  return 0;
}

static int producer(Shared* shared, double timeout) {
  const char* what = "cross_client_producer";
  auto start = std::chrono::steady_clock::now();
  unsigned challenge;
  while (!(challenge = load(&shared->challenge))) {
    if (seconds_since(start) > timeout) fail(what, "no challenge in the shared file after %g s", timeout);
    usleep(200);
  }
  if (challenge != challenge_of(SEED)) fail(what, "challenge %#x, want %#x", challenge, challenge_of(SEED));
  unsigned* sum;
  HIP_CHECK(hipMalloc(&sum, 4));
  HIP_CHECK(hipMemset(sum, 0, 4));
  Watchdog& wd = *new Watchdog();
  wd.arm(timeout, what);
  hipLaunchKernelGGL(respond, dim3(RESPONSE_TERMS / 256), dim3(256), 0, 0, challenge, sum);
  HIP_CHECK(hipGetLastError());
  unsigned h = 0;
  HIP_CHECK(hipMemcpy(&h, sum, 4, hipMemcpyDeviceToHost));
  wd.disarm();
  h |= 1;
  if (h != cpu_response(challenge)) fail(what, "response %#x, want %#x", h, cpu_response(challenge));
  store(&shared->response, h);
  printf("%s: response %#x after %.2f s\n", what, h, seconds_since(start));
  pass(what);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cross_client waiter|producer <shared file> [timeout seconds]\n");
    return 2;
  }
  Shared* shared = map_shared(argv[2]);
  double timeout = timeout_arg(argc, argv, 3);
  if (!strcmp(argv[1], "waiter")) return waiter(shared, timeout);
  if (!strcmp(argv[1], "producer")) return producer(shared, timeout);
  fprintf(stderr, "usage: cross_client waiter|producer <shared file> [timeout seconds]\n");
  return 2;
}
