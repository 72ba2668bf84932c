// HIP IPC between two processes on one GPU: memory handles (hipIpcGetMemHandle /
// hipIpcOpenMemHandle) and event handles (hipIpcGetEventHandle / hipIpcOpenEventHandle). The two
// processes must be clients of one rocjitsu daemon (`rocjitsu --daemon` or `--attach`): this
// program is the producer, and for each scenario it starts itself again as the consumer
// (posix_spawn of /proc/self/exe; the child inherits the environment, so it reaches the same
// daemon). The two talk over a pair of pipes, one text line per message; handles travel as hex.
//
// What the stacks do underneath: ROCm 5.2 shares memory through the KFD's IPC_EXPORT_HANDLE /
// IPC_IMPORT_HANDLE ioctls (the handle carries the KFD's share handle). ROCm 6.x does the same
// unless the system reports dmabuf support; then it exports a dmabuf (EXPORT_DMABUF), hands its
// fd to the importer over a UNIX socket of ROCR's own (named after the exporter's pid, which the
// handle carries), and the importer gives it to the KFD (IMPORT_DMABUF). IPC events are HIP's
// own: a shared-memory file in /dev/shm whose signal words the producer's GPU clears, registered
// with hipHostRegister in both processes.
//
// Scenarios (the producer prints `PASS <name>` for each; a failure prints
// `FAIL <scenario> (<role>): <step>: <what>` with the HIP error's name and text, and exits
// non-zero):
//   memory handle                 the consumer opens a 4 MiB buffer, checks it sees the producer's
//                                 values (hipMemcpy) and rewrites every element with a kernel; the
//                                 producer checks every element against the CPU.
//   small sub-allocation handle   the same for the third of three 64 KiB buffers: ROCR carves small
//                                 allocations out of 2 MiB blocks, so this one does not start its
//                                 block (the handle carries the fragment's offset).
//   interior pointer handle       a handle taken at a pointer inside a buffer shares the whole
//                                 buffer: the consumer's pointer is its start (HIP 5.2 and 6.x
//                                 both return the base, as CUDA does); the consumer rewrites only
//                                 from the interior pointer on, and the elements before it must
//                                 stay as they were.
//   event handle opened           an interprocess event's handle opens in the consumer (HIP maps
//                                 the event's shared memory and registers it with the GPU).
//   event handle with hipEventSynchronize
//   event handle with hipStreamWaitEvent
//                                 the producer's kernel waits for a gate in host memory, then writes
//                                 a buffer both processes share; the producer records the IPC event
//                                 after it. The consumer must see the event pending while the gate
//                                 is shut (deterministic: the kernel cannot finish), then, once it
//                                 is open, wait for the event and see every final value. Where
//                                 HIP's hipEventRecord does not reach the event's shared memory
//                                 (HIP 6.4: see record_reached_shared_memory) no process can wait
//                                 for it: the program prints `SKIP <name>: …` instead.
//   forged handles refused        a real handle with its identifying bytes random or with bytes
//                                 flipped (and, on ROCm 6, 64 random bytes) must fail to open, with
//                                 an error and no crash; the real handle then still opens.
//   stale handle refused          a handle of a buffer the producer freed must not open.
//   importer keeps freed memory   the consumer opens a buffer, the producer frees it (and allocates
//                                 and fills a new one); the consumer still reads the producer's
//                                 values through its mapping and writes through it, and the
//                                 producer's new buffer is untouched.
//   local mode refuses IPC        (`ipc local`, rocjitsu without a daemon: one simulated GPU per
//                                 process) hipIpcGetMemHandle fails cleanly and the GPU still works.
//
// Every wait on the other process is bounded (the timeout argument, default 60 s): a consumer
// that does not answer or end in time is killed and the scenario fails. The consumer dies with
// the producer (PR_SET_PDEATHSIG), so nothing is left behind.
//
// usage: ipc [timeout seconds [memory|events|forged|stale|keeps ...]]
//                                   every scenario but the local one, or those named (needs a daemon)
//        ipc local                  local mode: exporting must fail cleanly
//        ipc consumer <scenario> <producer pid> <read fd> <write fd> <timeout>   (internal)
#include "concurrency.h"
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <string>
#include <vector>

extern char** environ;

// ---- failure reporting --------------------------------------------------------------------------

// Which scenario and role is running, and the step it is at: every failure names them.
static const char* g_scenario = "ipc";
static const char* g_role = "producer";
static std::string g_step = "starting";
// The consumer this producer runs (0: none), killed when the producer fails.
static pid_t g_consumer = 0;

static void step(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void step(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_step = buf;
}

static void reap_consumer(double grace_s);
static std::string describe_status(int status);

// Prints the failure and ends the process without running HIP's teardown: a failing scenario
// may leave a kernel spinning on a gate, and the daemon cleans up after a client that is gone.
[[noreturn]] static void die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] static void die(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  printf("FAIL %s (%s): %s: %s\n", g_scenario, g_role, g_step.c_str(), buf);
  fflush(stdout);
  fflush(stderr);
  // Give a consumer that failed on its own a moment to print why, then make sure it is gone.
  reap_consumer(2.0);
  _exit(1);
}

// A crash (a failed assertion in the ROCm stack, a bad pointer) still says where it happened.
static void on_fatal_signal(int sig) {
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "FAIL %s (%s): %s: killed by signal %d (%s)\n", g_scenario, g_role, g_step.c_str(),
                   sig, strsignal(sig));
  if (n > 0) write(STDOUT_FILENO, buf, n < (int)sizeof buf ? n : (int)sizeof buf - 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

#define TRY(call)                                                                              \
  do {                                                                                         \
    hipError_t e_ = (call);                                                                    \
    if (e_ != hipSuccess) die("%s failed: %s (%s)", #call, hipGetErrorName(e_), hipGetErrorString(e_)); \
  } while (0)

static void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s (%s): ", g_scenario, g_role);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- values both processes and the CPU compute ---------------------------------------------------

__host__ __device__ inline uint32_t initial(uint32_t i, uint32_t seed) { return mix32(i * 0x9e3779b9u + seed); }
__host__ __device__ inline uint32_t transform(uint32_t x) { return x * 3u + 7u; }

// What the event scenario's producer kernel writes in `round`: enough work per element that the
// writes take a while after the gate opens (a consumer that did not really wait would read some
// elements before their final value lands).
const int ROUND_WORK = 64;
__host__ __device__ inline uint32_t round_value(uint32_t i, uint32_t round) {
  uint32_t v = i ^ (round * 0x01000193u);
  for (int k = 0; k < ROUND_WORK; k++) v = mix32(v + k);
  return v;
}

const uint32_t SEED_BIG = 0x1001, SEED_SMALL = 0x2002, SEED_MID = 0x3003, SEED_LIVE = 0x4004, SEED_STALE = 0x5005,
               SEED_KEEP = 0x6006, SEED_OTHER = 0x7007;

__global__ void fill(uint32_t* p, uint32_t n, uint32_t seed) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = initial(i, seed);
}

__global__ void transform_all(uint32_t* p, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = transform(p[i]);
}

// Waits (one lane per workgroup) until the gate opens, then writes round_value(). A workgroup
// that was told to give up (the watchdog) counts itself in `gave_up` and writes nothing.
__global__ void gated_fill(uint32_t* p, uint32_t n, uint32_t round, const unsigned* gate, const unsigned* abort_word,
                           unsigned* gave_up) {
  __shared__ unsigned open;
  if (threadIdx.x == 0) open = wait_nonzero<Poll::Sleep>(gate, abort_word);
  __syncthreads();
  if (!open) {
    if (threadIdx.x == 0) atomicAdd(gave_up, 1u);
    return;
  }
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = round_value(i, round);
}

// Counts the elements that are not round_value(i, round) and keeps the lowest such index.
struct Tally {
  unsigned wrong;
  unsigned first;
};

__global__ void check_round(const uint32_t* p, uint32_t n, uint32_t round, Tally* t) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && p[i] != round_value(i, round)) {
    atomicAdd(&t->wrong, 1u);
    atomicMin(&t->first, i);
  }
}

static dim3 grid_for(uint32_t n) { return dim3((n + 255) / 256); }

// ---- handles as text -----------------------------------------------------------------------------

template <typename H>
static std::string to_hex(const H& h) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  const unsigned char* b = (const unsigned char*)&h;
  for (size_t i = 0; i < sizeof h; i++) {
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

template <typename H>
static H from_hex(const std::string& s) {
  H h;
  if (s.size() != 2 * sizeof h) die("a handle of %zu hex digits, want %zu: %s", s.size(), 2 * sizeof h, s.c_str());
  unsigned char* b = (unsigned char*)&h;
  for (size_t i = 0; i < sizeof h; i++) {
    unsigned v;
    if (sscanf(s.c_str() + 2 * i, "%2x", &v) != 1) die("not a hex handle: %s", s.c_str());
    b[i] = (unsigned char)v;
  }
  return h;
}

static std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> w;
  size_t i = 0;
  while (i < line.size()) {
    size_t j = line.find(' ', i);
    if (j == std::string::npos) j = line.size();
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return w;
}

// ---- the link between producer and consumer ------------------------------------------------------

struct Link {
  int in = -1;   // lines from the other process
  int out = -1;  // lines to it
  std::string pending;
  double timeout = 60;
};

static void say(Link& l, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(Link& l, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof buf - 1) die("message too long");
  buf[n++] = '\n';
  for (int done = 0; done < n;) {
    ssize_t w = write(l.out, buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("cannot tell the other process `%.*s`: %s (it ended?)", n - 1, buf, strerror(errno));
    done += (int)w;
  }
}

// The next line from the other process; fails after the link's timeout or if it ended.
static std::string hear(Link& l, const char* waiting_for) {
  double end = now_s() + l.timeout;
  for (;;) {
    size_t nl = l.pending.find('\n');
    if (nl != std::string::npos) {
      std::string line = l.pending.substr(0, nl);
      l.pending.erase(0, nl + 1);
      return line;
    }
    double left = end - now_s();
    if (left <= 0) die("no `%s` from the other process within %g s", waiting_for, l.timeout);
    pollfd p = {l.in, POLLIN, 0};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("poll: %s", strerror(errno));
    if (r == 0) continue;
    char buf[4096];
    ssize_t got = read(l.in, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) die("the other process ended (or closed its pipe) before sending `%s`", waiting_for);
    l.pending.append(buf, got);
  }
}

// The words after `word` on the next line, which must start with it.
static std::vector<std::string> expect(Link& l, const char* word) {
  std::string line = hear(l, word);
  std::vector<std::string> w = words(line);
  if (w.empty() || w[0] != word) die("expected `%s` from the other process, got `%s`", word, line.c_str());
  w.erase(w.begin());
  return w;
}

// ---- starting and ending the consumer ------------------------------------------------------------

static void set_cloexec(int fd) {
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) die("fcntl: %s", strerror(errno));
}

// Starts this program as the consumer of `scenario`. Its pipe ends are handed over as fd numbers:
// they are the only descriptors of ours without close-on-exec, so the consumer sees end-of-file
// as soon as the producer is gone, and the other way round.
static Link start_consumer(const char* scenario, double timeout) {
  step("starting the consumer");
  int down[2], up[2];  // producer -> consumer, consumer -> producer
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) die("pipe2: %s", strerror(errno));
  int child_in = dup(down[0]), child_out = dup(up[1]);  // dup() clears close-on-exec
  if (child_in < 0 || child_out < 0) die("dup: %s", strerror(errno));
  close(down[0]);
  close(up[1]);
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  exe[len] = 0;
  std::string pid = std::to_string(getpid()), in = std::to_string(child_in), out = std::to_string(child_out);
  char secs[32];
  snprintf(secs, sizeof secs, "%g", timeout);
  const char* argv[] = {exe, "consumer", scenario, pid.c_str(), in.c_str(), out.c_str(), secs, nullptr};
  fflush(stdout);
  pid_t child;
  int err = posix_spawn(&child, exe, nullptr, nullptr, (char* const*)argv, environ);
  close(child_in);
  close(child_out);
  if (err != 0) die("posix_spawn %s: %s", exe, strerror(err));
  g_consumer = child;
  Link l;
  l.in = up[0];
  l.out = down[1];
  l.timeout = timeout;
  return l;
}

static std::string describe_status(int status) {
  char buf[128];
  if (WIFEXITED(status))
    snprintf(buf, sizeof buf, "exited with %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, sizeof buf, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(buf, sizeof buf, "ended with status %#x", status);
  return buf;
}

// Waits up to `seconds` for `pid` to end; false (and *status unset) if it is still running.
static bool wait_for(pid_t pid, double seconds, int* status) {
  double end = now_s() + seconds;
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (now_s() >= end) return false;
    usleep(10000);
  }
}

// On failure: lets the consumer end on its own for `grace_s`, then kills it; never leaves a zombie.
static void reap_consumer(double grace_s) {
  pid_t c = g_consumer;
  if (!c) return;
  g_consumer = 0;
  int status;
  if (wait_for(c, grace_s, &status)) {
    printf("%s (%s): the consumer %s\n", g_scenario, g_role, describe_status(status).c_str());
  } else {
    kill(c, SIGKILL);
    waitpid(c, &status, 0);
    printf("%s (%s): killed the consumer\n", g_scenario, g_role);
  }
}

// Closes the link and waits for the consumer to exit 0 (killing it after the timeout).
static void finish_consumer(Link& l) {
  step("waiting for the consumer to end");
  close(l.out);
  int status = 0;
  if (!wait_for(g_consumer, l.timeout, &status)) {
    kill(g_consumer, SIGKILL);
    waitpid(g_consumer, &status, 0);
    g_consumer = 0;
    die("the consumer did not end within %g s: killed it", l.timeout);
  }
  g_consumer = 0;
  close(l.in);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the consumer %s", describe_status(status).c_str());
}

// ---- helpers on buffers --------------------------------------------------------------------------

static uint32_t* alloc_filled(uint32_t n, uint32_t seed) {
  uint32_t* p = nullptr;
  TRY(hipMalloc(&p, (size_t)n * 4));
  hipLaunchKernelGGL(fill, grid_for(n), dim3(256), 0, 0, p, n, seed);
  TRY(hipGetLastError());
  return p;
}

static std::vector<uint32_t> read_back(const uint32_t* d, uint32_t n) {
  std::vector<uint32_t> h(n);
  TRY(hipMemcpy(h.data(), d, (size_t)n * 4, hipMemcpyDeviceToHost));
  return h;
}

// Fails unless h[i] == want(i) for every i in [0, n).
template <typename F>
static void check_all(const char* what, const std::vector<uint32_t>& h, uint32_t n, F want) {
  uint32_t wrong = 0, first = 0;
  for (uint32_t i = 0; i < n; i++)
    if (h[i] != want(i) && wrong++ == 0) first = i;
  if (wrong)
    die("%s: %u of %u elements wrong, the first at %u: %#x, want %#x", what, wrong, n, first, h[first], want(first));
}

// A memory handle as the consumer gets it: the buffer's elements (`count`, filled with
// initial(i, seed)) and the first one the consumer rewrites (`from`).
struct Region {
  hipIpcMemHandle_t handle;
  uint32_t from, count, seed;
};

static std::string region_text(const Region& r) {
  return to_hex(r.handle) + ":" + std::to_string(r.from) + ":" + std::to_string(r.count) + ":" + std::to_string(r.seed);
}

static Region parse_region(const std::string& s) {
  size_t a = s.find(':'), b = s.find(':', a + 1), c = s.find(':', b + 1);
  if (a == std::string::npos || b == std::string::npos || c == std::string::npos) die("not a region: %s", s.c_str());
  Region r;
  r.handle = from_hex<hipIpcMemHandle_t>(s.substr(0, a));
  r.from = (uint32_t)strtoul(s.c_str() + a + 1, nullptr, 10);
  r.count = (uint32_t)strtoul(s.c_str() + b + 1, nullptr, 10);
  r.seed = (uint32_t)strtoul(s.c_str() + c + 1, nullptr, 10);
  return r;
}

static void* open_handle(const hipIpcMemHandle_t& h, const char* what) {
  step("hipIpcOpenMemHandle of %s", what);
  void* p = nullptr;
  TRY(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
  if (!p) die("hipIpcOpenMemHandle succeeded with a null pointer");
  return p;
}

// ---- scenario 1: memory handles ------------------------------------------------------------------

const uint32_t BIG_N = 1u << 20;          // 4 MiB
const uint32_t SMALL_N = 16u << 10;       // 64 KiB
const uint32_t MID_N = 256u << 10;        // 1 MiB
const uint32_t MID_INNER = 40000;         // 160,000 bytes in: not even page aligned

static void memory_handles(double timeout) {
  g_scenario = "memory handle";
  step("allocating and filling");
  uint32_t* big = alloc_filled(BIG_N, SEED_BIG);
  uint32_t* small[3];
  for (int k = 0; k < 3; k++) small[k] = alloc_filled(SMALL_N, k == 2 ? SEED_SMALL : SEED_OTHER + k);
  uint32_t* mid = alloc_filled(MID_N, SEED_MID);
  TRY(hipDeviceSynchronize());
  note("small allocations at %p %p %p", (void*)small[0], (void*)small[1], (void*)small[2]);

  Region r[3];
  step("hipIpcGetMemHandle of a 4 MiB buffer");
  TRY(hipIpcGetMemHandle(&r[0].handle, big));
  r[0].from = 0, r[0].count = BIG_N, r[0].seed = SEED_BIG;
  step("hipIpcGetMemHandle of a 64 KiB sub-allocation");
  TRY(hipIpcGetMemHandle(&r[1].handle, small[2]));
  r[1].from = 0, r[1].count = SMALL_N, r[1].seed = SEED_SMALL;
  step("hipIpcGetMemHandle of an interior pointer");
  TRY(hipIpcGetMemHandle(&r[2].handle, mid + MID_INNER));
  r[2].from = MID_INNER, r[2].count = MID_N, r[2].seed = SEED_MID;

  Link l = start_consumer("memory handle", timeout);
  say(l, "regions %s %s %s", region_text(r[0]).c_str(), region_text(r[1]).c_str(), region_text(r[2]).c_str());
  step("waiting for the consumer's kernels");
  expect(l, "done");
  finish_consumer(l);

  step("checking the 4 MiB buffer");
  check_all("4 MiB buffer", read_back(big, BIG_N), BIG_N, [](uint32_t i) { return transform(initial(i, SEED_BIG)); });
  pass("memory handle");

  g_scenario = "small sub-allocation handle";
  step("checking the 64 KiB sub-allocations");
  check_all("the shared sub-allocation", read_back(small[2], SMALL_N), SMALL_N,
            [](uint32_t i) { return transform(initial(i, SEED_SMALL)); });
  for (int k = 0; k < 2; k++)
    check_all("a neighbouring sub-allocation", read_back(small[k], SMALL_N), SMALL_N,
              [k](uint32_t i) { return initial(i, SEED_OTHER + k); });
  pass("small sub-allocation handle");

  g_scenario = "interior pointer handle";
  step("checking the buffer shared from an interior pointer");
  check_all("the buffer shared from an interior pointer", read_back(mid, MID_N), MID_N, [](uint32_t i) {
    return i < MID_INNER ? initial(i, SEED_MID) : transform(initial(i, SEED_MID));
  });
  pass("interior pointer handle");

  TRY(hipFree(big));
  for (uint32_t* s : small) TRY(hipFree(s));
  TRY(hipFree(mid));
}

// Opens each region, checks it holds the producer's values (a copy through the mapping), rewrites
// its elements from `from` on with a kernel and closes it.
static void memory_handles_consumer(Link& l) {
  step("waiting for the handles");
  std::vector<std::string> w = expect(l, "regions");
  const char* names[] = {"the 4 MiB buffer", "the 64 KiB sub-allocation", "the interior pointer"};
  if (w.size() != 3) die("want 3 regions, got %zu", w.size());
  for (int k = 0; k < 3; k++) {
    Region r = parse_region(w[k]);
    uint32_t* p = (uint32_t*)open_handle(r.handle, names[k]);
    step("reading %s through the mapping", names[k]);
    check_all(names[k], read_back(p, r.count), r.count, [&](uint32_t i) { return initial(i, r.seed); });
    step("rewriting %s with a kernel", names[k]);
    hipLaunchKernelGGL(transform_all, grid_for(r.count - r.from), dim3(256), 0, 0, p + r.from, r.count - r.from);
    TRY(hipGetLastError());
    TRY(hipDeviceSynchronize());
    step("hipIpcCloseMemHandle of %s", names[k]);
    TRY(hipIpcCloseMemHandle(p));
  }
  say(l, "done");
}

// ---- scenario 2: event handles -------------------------------------------------------------------

const uint32_t EVENT_N = 1u << 18;  // 1 MiB, 1024 workgroups
const char* const WAYS[2] = {"event handle with hipEventSynchronize", "event handle with hipStreamWaitEvent"};

// Whether hipEventRecord of an interprocess event reached the event's shared memory, where other
// processes look. HIP keeps the event in a file in /dev/shm named by the handle's bytes; the file
// starts with five ints (owners, owner's device, owner's pid, read index, write index) and a
// record meant for other processes takes a slot, raising the write index from 0. HIP 6.4 (clr of
// late 2024) takes the IPC path only for an event whose last marker was not a record
// (Event::unrecorded_, false from creation), so hipEventRecord records it locally only and no
// other process can ever wait for it, on any GPU.
static bool record_reached_shared_memory(const hipIpcEventHandle_t& h) {
  char name[sizeof h.reserved + 1] = {0};
  memcpy(name, h.reserved, sizeof h.reserved);
  std::string path = std::string("/dev/shm") + name;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) die("cannot open the event's shared memory %s: %s", path.c_str(), strerror(errno));
  int32_t head[5] = {0};
  size_t got = fread(head, sizeof head[0], 5, f);
  fclose(f);
  if (got != 5) die("the event's shared memory %s is too short", path.c_str());
  return head[4] != 0;
}

static void event_handles(double timeout) {
  g_scenario = "event handle opened";
  step("allocating");
  uint32_t* shared = nullptr;
  TRY(hipMalloc(&shared, EVENT_N * 4));
  TRY(hipMemset(shared, 0, EVENT_N * 4));
  unsigned* gave_up = nullptr;
  TRY(hipMalloc(&gave_up, 4));
  TRY(hipMemset(gave_up, 0, 4));
  unsigned* gates = host_shared<unsigned>(2);
  hipStream_t s;
  TRY(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  TRY(hipDeviceSynchronize());
  Watchdog& wd = *new Watchdog();

  // A fresh event per round: ROCm 5.2's HIP takes only an IPC event's first record through its
  // shared memory.
  hipEvent_t ev[2];
  hipIpcEventHandle_t eh[2];
  hipIpcMemHandle_t mh;
  step("hipIpcGetMemHandle of the shared buffer");
  TRY(hipIpcGetMemHandle(&mh, shared));
  for (int k = 0; k < 2; k++) {
    step("hipEventCreateWithFlags(hipEventInterprocess | hipEventDisableTiming)");
    TRY(hipEventCreateWithFlags(&ev[k], hipEventInterprocess | hipEventDisableTiming));
    step("hipIpcGetEventHandle");
    TRY(hipIpcGetEventHandle(&eh[k], ev[k]));
  }

  Link l = start_consumer("event handle opened", timeout);
  say(l, "handles %s %s %s", to_hex(mh).c_str(), to_hex(eh[0]).c_str(), to_hex(eh[1]).c_str());
  step("waiting for the consumer to open the handles");
  expect(l, "opened");
  pass("event handle opened");

  for (uint32_t round = 1; round <= 2; round++) {
    g_scenario = WAYS[round - 1];
    step("round %u: launching the gated kernel and recording the event", round);
    wd.arm(timeout, g_scenario);
    hipLaunchKernelGGL(gated_fill, grid_for(EVENT_N), dim3(256), 0, s, shared, EVENT_N, round,
                       device_view(gates) + (round - 1), wd.abort_word(), gave_up);
    TRY(hipGetLastError());
    TRY(hipEventRecord(ev[round - 1], s));
    bool shared_record = record_reached_shared_memory(eh[round - 1]);
    if (shared_record) {
      say(l, "recorded %u", round);
      step("round %u: waiting for the consumer to see the event pending", round);
      expect(l, "pending");
    }
    __atomic_store_n(&gates[round - 1], 1u, __ATOMIC_RELEASE);
    if (shared_record) {
      step("round %u: waiting for the consumer to check the values after its wait", round);
      expect(l, "checked");
    }
    step("round %u: hipStreamSynchronize", round);
    TRY(hipStreamSynchronize(s));
    wd.disarm();
    unsigned g = 0;
    TRY(hipMemcpy(&g, gave_up, 4, hipMemcpyDeviceToHost));
    if (g) die("%u workgroups gave up waiting for the gate (the watchdog fired)", g);
    if (shared_record) {
      pass(g_scenario);
    } else {
      printf("SKIP %s: this HIP's hipEventRecord does not reach the interprocess event's shared memory (its write "
             "index stays 0), so no other process can wait for it\n",
             g_scenario);
      say(l, "skip %u", round);
    }
  }
  finish_consumer(l);
  for (hipEvent_t e : ev) TRY(hipEventDestroy(e));
  TRY(hipStreamDestroy(s));
  TRY(hipFree(shared));
  TRY(hipFree(gave_up));
}

// Queues on `s` (after whatever `s` waits for) a kernel that checks the shared buffer into `t`.
static void launch_check(hipStream_t s, const uint32_t* shared, uint32_t round, Tally* t) {
  TRY(hipMemsetAsync(&t->wrong, 0, sizeof t->wrong, s));
  TRY(hipMemsetAsync(&t->first, 0xff, sizeof t->first, s));
  hipLaunchKernelGGL(check_round, grid_for(EVENT_N), dim3(256), 0, s, shared, EVENT_N, round, t);
  TRY(hipGetLastError());
}

static void check_tally(Tally* t, uint32_t round) {
  Tally h;
  TRY(hipMemcpy(&h, t, sizeof h, hipMemcpyDeviceToHost));
  if (h.wrong)
    die("round %u: %u of %u elements were not final after the wait (the first at %u): the wait ended before the "
        "producer's kernel did",
        round, h.wrong, EVENT_N, h.first);
}

static void event_handles_consumer(Link& l) {
  step("waiting for the handles");
  std::vector<std::string> w = expect(l, "handles");
  if (w.size() != 3) die("want 3 handles, got %zu", w.size());
  uint32_t* shared = (uint32_t*)open_handle(from_hex<hipIpcMemHandle_t>(w[0]), "the shared buffer");
  hipEvent_t ev[2];
  for (int k = 0; k < 2; k++) {
    step("hipIpcOpenEventHandle");
    TRY(hipIpcOpenEventHandle(&ev[k], from_hex<hipIpcEventHandle_t>(w[1 + k])));
  }
  hipStream_t s;
  TRY(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Tally* t = nullptr;
  TRY(hipMalloc(&t, sizeof(Tally)));
  TRY(hipDeviceSynchronize());
  say(l, "opened");

  for (uint32_t round = 1; round <= 2; round++) {
    g_scenario = WAYS[round - 1];
    hipEvent_t e = ev[round - 1];
    step("round %u: waiting for the record", round);
    std::string line = hear(l, "recorded");
    if (line.rfind("skip", 0) == 0) continue;
    if (line.rfind("recorded", 0) != 0) die("expected `recorded` from the other process, got `%s`", line.c_str());
    // The producer's kernel waits for a gate that the producer opens only after this answer: the
    // event cannot have completed yet.
    step("round %u: hipEventQuery while the producer's kernel is held", round);
    hipError_t q = hipEventQuery(e);
    if (q != hipErrorNotReady)
      die("hipEventQuery returned %s (%s), want hipErrorNotReady: the producer's kernel cannot have finished",
          hipGetErrorName(q), hipGetErrorString(q));
    say(l, "pending %u", round);
    // The wait starts after the gate opens: HIP may block the caller of hipStreamWaitEvent on an
    // IPC event until it completes (a host callback waits for the shared signal).
    if (round == 1) {
      step("round %u: hipEventSynchronize", round);
      TRY(hipEventSynchronize(e));
    } else {
      step("round %u: hipStreamWaitEvent", round);
      TRY(hipStreamWaitEvent(s, e, 0));
    }
    launch_check(s, shared, round, t);
    step("round %u: hipStreamSynchronize after the wait", round);
    TRY(hipStreamSynchronize(s));
    step("round %u: checking the values", round);
    check_tally(t, round);
    hipError_t q2 = hipEventQuery(e);
    if (q2 != hipSuccess) die("hipEventQuery after the wait returned %s, want hipSuccess", hipGetErrorName(q2));
    say(l, "checked %u", round);
  }
  g_scenario = "event handle opened";
  step("hipIpcCloseMemHandle");
  TRY(hipIpcCloseMemHandle(shared));
  for (hipEvent_t e : ev) TRY(hipEventDestroy(e));
  TRY(hipStreamDestroy(s));
  TRY(hipFree(t));
}

// ---- scenarios 3 and 4: handles that must not open -----------------------------------------------

// hipIpcOpenMemHandle of `h` in a thread of its own, waiting at most `seconds`: false if the
// call has not returned by then, else its result and pointer. A call that did not return cannot
// be joined: the caller must end the process with _exit.
static bool open_within(const hipIpcMemHandle_t& h, double seconds, hipError_t* result, void** p) {
  struct Call {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    hipError_t result = hipSuccess;
    void* p = nullptr;
  };
  Call* c = new Call();  // leaked on purpose if the call never returns
  std::thread([c, h] {
    void* p = nullptr;
    hipError_t r = hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess);
    std::lock_guard<std::mutex> g(c->m);
    c->result = r;
    c->p = p;
    c->done = true;
    c->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> g(c->m);
  if (!c->cv.wait_for(g, std::chrono::duration<double>(seconds), [c] { return c->done; })) return false;
  *result = c->result;
  *p = c->p;
  return true;
}

// ROCm 6's dmabuf importer asks the exporter's socket server for the fd; when the exporter
// declines (no such export, or it can no longer export it), ROCR closes the connection and the
// importer loops on the end of file (ReceiveDmaBufFd: `while (!rcv) rcv = recvmsg(…)`) instead of
// failing. So on ROCm 6 an open that has not returned after this long has been refused (it did not
// get the memory); on ROCm 5.2 (the KFD's own IPC ioctls) it must return.
const double REFUSAL_WAIT = 25;

// Fails unless opening `h` fails (or, on ROCm 6, blocks as above). True if the call is still stuck.
static bool must_refuse(const hipIpcMemHandle_t& h, const char* what) {
  step("hipIpcOpenMemHandle of %s", what);
  void* p = nullptr;
  double start = now_s();
  hipError_t r = hipSuccess;
  bool returned = open_within(h, REFUSAL_WAIT, &r, &p);
  if (returned && r == hipSuccess) {
    (void)hipIpcCloseMemHandle(p);
    die("hipIpcOpenMemHandle of %s succeeded (mapped at %p): it must fail", what, p);
  }
  if (!returned) {
#if HIP_VERSION_MAJOR >= 6
    note("%s: hipIpcOpenMemHandle still blocked after %g s (ROCR 6's importer loops when the exporter declines): "
         "refused",
         what, REFUSAL_WAIT);
    return true;
#else
    die("hipIpcOpenMemHandle of %s did not return within %g s", what, REFUSAL_WAIT);
#endif
  }
  note("%s: refused with %s (%s) after %.1f s", what, hipGetErrorName(r), hipGetErrorString(r), now_s() - start);
  return false;
}

static void forged_handles(double timeout) {
  g_scenario = "forged handles refused";
  step("allocating");
  uint32_t* live = alloc_filled(BIG_N, SEED_LIVE);
  TRY(hipDeviceSynchronize());
  hipIpcMemHandle_t h;
  step("hipIpcGetMemHandle");
  TRY(hipIpcGetMemHandle(&h, live));
  Link l = start_consumer("forged handles refused", timeout + 3 * REFUSAL_WAIT);
  say(l, "handle %s", to_hex(h).c_str());
  step("waiting for the consumer's attempts");
  expect(l, "done");
  finish_consumer(l);
  TRY(hipFree(live));
  pass("forged handles refused");
}

static void forged_handles_consumer(Link& l) {
  step("waiting for the handle");
  std::vector<std::string> w = expect(l, "handle");
  if (w.size() != 1) die("want 1 handle, got %zu", w.size());
  hipIpcMemHandle_t real = from_hex<hipIpcMemHandle_t>(w[0]);

  bool stuck = false;
  uint32_t x = 0xfeedbeefu;  // seeded: the same bytes every run
#if HIP_VERSION_MAJOR >= 6
  // 64 random bytes. (Not on ROCm 5.2: its thunk trusts the handle's aperture, size and GPU
  // fields, bytes 16-27, and dereferences a null aperture for garbage there, in user space before
  // any ioctl, on real GPUs too. ROCm 6's thunk checks the aperture; over dmabuf its importer
  // looks for the exporter named in bytes 8-11 and finds none.)
  hipIpcMemHandle_t random;
  for (size_t i = 0; i < sizeof random.reserved; i++) random.reserved[i] = (char)(x = mix32(x + (uint32_t)i));
  stuck |= must_refuse(random, "64 random bytes");
#endif

  // The real handle with its first 16 bytes random. ROCm 5.2: they are the KFD's 128-bit share
  // handle, which the simulated KFD must not know. ROCm 6 (dmabuf): bytes 0-7 name the export
  // and 8-11 are the exporter's pid (its socket's name).
  hipIpcMemHandle_t forged = real;
  for (size_t i = 0; i < 16; i++) forged.reserved[i] = (char)(x = mix32(x + (uint32_t)i));
  stuck |= must_refuse(forged, "the real handle with 16 random identifying bytes");

  // The real handle with bytes 1, 5 and 9 flipped (in the same fields).
  hipIpcMemHandle_t flipped = real;
  for (int i : {1, 5, 9}) flipped.reserved[i] ^= (char)0xff;
  stuck |= must_refuse(flipped, "the real handle with 3 bytes flipped");

  // The refusals changed nothing: the real handle still opens and holds the producer's values.
  uint32_t* p = (uint32_t*)open_handle(real, "the real handle after the refusals");
  step("reading through the real handle");
  check_all("the real handle", read_back(p, BIG_N), BIG_N, [](uint32_t i) { return initial(i, SEED_LIVE); });
  step("hipIpcCloseMemHandle");
  TRY(hipIpcCloseMemHandle(p));
  say(l, "done");
  if (stuck) {
    // A call that never returns cannot be joined, and HIP's teardown would wait for it.
    fflush(stdout);
    _exit(0);
  }
}

static void stale_handle(double timeout) {
  g_scenario = "stale handle refused";
  step("allocating");
  uint32_t* gone = alloc_filled(BIG_N, SEED_STALE);
  TRY(hipDeviceSynchronize());
  hipIpcMemHandle_t h;
  step("hipIpcGetMemHandle");
  TRY(hipIpcGetMemHandle(&h, gone));
  step("hipFree of the exported buffer");
  TRY(hipFree(gone));
  TRY(hipDeviceSynchronize());
  Link l = start_consumer("stale handle refused", timeout + REFUSAL_WAIT);
  say(l, "handle %s", to_hex(h).c_str());
  step("waiting for the consumer's attempt");
  expect(l, "done");
  finish_consumer(l);
  pass("stale handle refused");
}

static void stale_handle_consumer(Link& l) {
  step("waiting for the handle");
  std::vector<std::string> w = expect(l, "handle");
  if (w.size() != 1) die("want 1 handle, got %zu", w.size());
  bool stuck = must_refuse(from_hex<hipIpcMemHandle_t>(w[0]), "a handle of a freed buffer");
  say(l, "done");
  if (stuck) {
    fflush(stdout);
    _exit(0);
  }
}

// ---- scenario 5: the importer keeps the memory ---------------------------------------------------

static void importer_keeps(double timeout) {
  g_scenario = "importer keeps freed memory";
  step("allocating");
  uint32_t* buf = alloc_filled(BIG_N, SEED_KEEP);
  TRY(hipDeviceSynchronize());
  hipIpcMemHandle_t h;
  step("hipIpcGetMemHandle");
  TRY(hipIpcGetMemHandle(&h, buf));
  Link l = start_consumer("importer keeps freed memory", timeout);
  say(l, "handle %s", to_hex(h).c_str());
  step("waiting for the consumer to open the handle");
  expect(l, "opened");
  step("hipFree of the buffer the consumer has open");
  TRY(hipFree(buf));
  // A new buffer of the same size, likely where the old one was: the consumer must not see it.
  step("allocating and filling a new buffer");
  uint32_t* other = alloc_filled(BIG_N, SEED_OTHER);
  TRY(hipDeviceSynchronize());
  say(l, "freed");
  step("waiting for the consumer to use its mapping");
  expect(l, "done");
  finish_consumer(l);
  step("checking the new buffer");
  check_all("the producer's new buffer", read_back(other, BIG_N), BIG_N,
            [](uint32_t i) { return initial(i, SEED_OTHER); });
  TRY(hipFree(other));
  pass("importer keeps freed memory");
}

static void importer_keeps_consumer(Link& l) {
  step("waiting for the handle");
  std::vector<std::string> w = expect(l, "handle");
  if (w.size() != 1) die("want 1 handle, got %zu", w.size());
  uint32_t* p = (uint32_t*)open_handle(from_hex<hipIpcMemHandle_t>(w[0]), "the buffer");
  say(l, "opened");
  step("waiting for the producer to free the buffer");
  expect(l, "freed");
  step("reading the freed buffer through the mapping");
  check_all("the buffer after the producer freed it", read_back(p, BIG_N), BIG_N,
            [](uint32_t i) { return initial(i, SEED_KEEP); });
  step("rewriting it with a kernel");
  hipLaunchKernelGGL(transform_all, grid_for(BIG_N), dim3(256), 0, 0, p, BIG_N);
  TRY(hipGetLastError());
  TRY(hipDeviceSynchronize());
  step("reading it back");
  check_all("the buffer after the kernel", read_back(p, BIG_N), BIG_N,
            [](uint32_t i) { return transform(initial(i, SEED_KEEP)); });
  step("hipIpcCloseMemHandle");
  TRY(hipIpcCloseMemHandle(p));
  say(l, "done");
}

// ---- local mode ----------------------------------------------------------------------------------

static int local_mode() {
  g_scenario = "local mode refuses IPC";
  step("allocating");
  uint32_t* buf = alloc_filled(BIG_N, SEED_BIG);
  TRY(hipDeviceSynchronize());
  step("hipIpcGetMemHandle without a daemon");
  hipIpcMemHandle_t h;
  hipError_t r = hipIpcGetMemHandle(&h, buf);
  if (r == hipSuccess) die("hipIpcGetMemHandle succeeded: a process with a simulated GPU of its own cannot share it");
  note("hipIpcGetMemHandle: %s (%s)", hipGetErrorName(r), hipGetErrorString(r));
  // Failing left nothing broken: the buffer is intact and kernels still run on it.
  step("using the buffer after the refusal");
  hipLaunchKernelGGL(transform_all, grid_for(BIG_N), dim3(256), 0, 0, buf, BIG_N);
  TRY(hipGetLastError());
  TRY(hipDeviceSynchronize());
  check_all("the buffer after the refusal", read_back(buf, BIG_N), BIG_N,
            [](uint32_t i) { return transform(initial(i, SEED_BIG)); });
  TRY(hipFree(buf));
  pass("local mode refuses IPC");
  return 0;
}

// ---- main ----------------------------------------------------------------------------------------

static int consumer_main(int argc, char** argv) {
  if (argc != 7) die("usage: ipc consumer <scenario> <producer pid> <read fd> <write fd> <timeout>");
  g_role = "consumer";
  g_scenario = argv[2];
  // End with the producer, whatever happens to it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != (pid_t)atoi(argv[3])) _exit(1);  // it is already gone
  Link l;
  l.in = atoi(argv[4]);
  l.out = atoi(argv[5]);
  l.timeout = atof(argv[6]);
  set_cloexec(l.in);
  set_cloexec(l.out);
  std::string s = g_scenario;
  if (s == "memory handle") memory_handles_consumer(l);
  else if (s == "event handle opened") event_handles_consumer(l);
  else if (s == "forged handles refused") forged_handles_consumer(l);
  else if (s == "stale handle refused") stale_handle_consumer(l);
  else if (s == "importer keeps freed memory") importer_keeps_consumer(l);
  else die("unknown scenario");
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // A write to a pipe whose reader died must fail with EPIPE, not kill the writer silently.
  signal(SIGPIPE, SIG_IGN);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, on_fatal_signal);
  if (argc >= 2 && !strcmp(argv[1], "consumer")) return consumer_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "local")) return local_mode();
  double timeout = argc > 1 ? atof(argv[1]) : 60.0;
  if (timeout <= 0) {
    fprintf(stderr, "usage: ipc [timeout seconds [memory|events|forged|stale|keeps ...]] | ipc local\n");
    return 2;
  }
  // Every scenario, or (to look at one) those named.
  struct {
    const char* name;
    void (*run)(double);
  } scenarios[] = {{"memory", memory_handles},
                   {"events", event_handles},
                   {"forged", forged_handles},
                   {"stale", stale_handle},
                   {"keeps", importer_keeps}};
  for (auto& sc : scenarios) {
    bool wanted = argc <= 2;
    for (int i = 2; i < argc; i++) wanted |= !strcmp(argv[i], sc.name);
    if (wanted) sc.run(timeout);
  }
  return 0;
}
