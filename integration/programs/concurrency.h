// Helpers for the programs whose kernels wait for other kernels, for the host or for other
// processes (issue 13, integration/tests/concurrency.rs). A simulator that runs one dispatch
// at a time never lets such a wait end, so every wait is bounded: spin loops on the GPU also
// watch an abort word in host memory, which a watchdog thread sets when a phase of the program
// is out of time. The kernels then give up, report it in their results, and the program
// prints FAIL. If even that does not end the phase (a kernel stuck where it cannot watch the
// abort word, e.g. in a hardware barrier), the watchdog prints FAIL and exits the process.
#pragma once
#include "check.h"
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unistd.h>

// Host memory the GPU reads and writes while kernels run: pinned, mapped, coherent. Zeroed.
template <typename T>
static T* host_shared(size_t n) {
  T* p = nullptr;
  HIP_CHECK(hipHostMalloc((void**)&p, n * sizeof(T), hipHostMallocMapped | hipHostMallocCoherent));
  memset((void*)p, 0, n * sizeof(T));
  return p;
}

// The device's address of host_shared memory.
template <typename T>
static T* device_view(T* host) {
  void* d = nullptr;
  HIP_CHECK(hipHostGetDevicePointer(&d, host, 0));
  return (T*)d;
}

// The seconds every phase gets: argv[i] if given, else 30.
static inline double timeout_arg(int argc, char** argv, int i) { return argc > i ? atof(argv[i]) : 30.0; }

// Sets the abort word when an armed phase is out of time; exits the process `grace` seconds
// later if the phase still has not ended.
class Watchdog {
 public:
  explicit Watchdog(double grace_s = 20.0) : grace_(grace_s) {
    abort_host_ = host_shared<unsigned>(1);
    abort_dev_ = device_view(abort_host_);
    thread_ = std::thread([this] { loop(); });
    thread_.detach();
  }

  // What kernels poll: nonzero once they should give up.
  const unsigned* abort_word() const { return abort_dev_; }

  // Starts a phase that must end within `seconds`.
  void arm(double seconds, const char* what) {
    std::lock_guard<std::mutex> g(m_);
    what_ = what;
    seconds_ = seconds;
    deadline_ = after(seconds);
    armed_ = true;
    generation_++;
    cv_.notify_all();
  }

  // The phase ended.
  void disarm() {
    std::lock_guard<std::mutex> g(m_);
    armed_ = false;
    cv_.notify_all();
  }

  // Whether the abort word was set.
  bool fired() const { return __atomic_load_n(abort_host_, __ATOMIC_ACQUIRE) != 0; }

 private:
  static std::chrono::steady_clock::time_point after(double seconds) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }

  void loop() {
    std::unique_lock<std::mutex> g(m_);
    for (;;) {
      cv_.wait(g, [this] { return armed_; });
      unsigned gen = generation_;
      if (cv_.wait_until(g, deadline_, [&] { return !armed_ || generation_ != gen; })) continue;
      __atomic_store_n(abort_host_, 1u, __ATOMIC_RELEASE);
      fprintf(stderr, "watchdog: %s: not done after %g s, telling the kernels to give up\n", what_, seconds_);
      auto hard = after(grace_);
      if (cv_.wait_until(g, hard, [&] { return !armed_ || generation_ != gen; })) continue;
      printf("FAIL %s: not done %g s after the kernels were told to give up (%g s in all)\n", what_, grace_,
             seconds_ + grace_);
      fflush(stdout);
      fflush(stderr);
      _exit(3);
    }
  }

  double grace_;
  unsigned* abort_host_ = nullptr;
  unsigned* abort_dev_ = nullptr;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false;
  unsigned generation_ = 0;
  const char* what_ = "";
  double seconds_ = 0;
  std::chrono::steady_clock::time_point deadline_;
};

// How a kernel polls memory that something else writes.
enum class Poll {
  // Plain volatile loads in a tight loop.
  Spin,
  // Atomic (acquire, system scope) loads with s_sleep between them, as runtimes poll.
  Sleep,
};

template <Poll P>
__device__ inline unsigned poll_load(const unsigned* p) {
  if (P == Poll::Spin) return *(const volatile unsigned*)p;
  return __hip_atomic_load(const_cast<unsigned*>(p), __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}

__device__ inline bool told_to_give_up(const unsigned* abort_word) { return *(const volatile unsigned*)abort_word != 0; }

// Waits until *p >= want. False if told to give up first.
template <Poll P>
__device__ inline bool wait_at_least(const unsigned* p, unsigned want, const unsigned* abort_word) {
  for (;;) {
    if (poll_load<P>(p) >= want) return true;
    if (told_to_give_up(abort_word)) return false;
    if (P == Poll::Sleep) __builtin_amdgcn_s_sleep(4);
  }
}

// Waits until *p is nonzero and returns it; 0 if told to give up first.
template <Poll P>
__device__ inline unsigned wait_nonzero(const unsigned* p, const unsigned* abort_word) {
  for (;;) {
    unsigned v = poll_load<P>(p);
    if (v) return v;
    if (told_to_give_up(abort_word)) return 0;
    if (P == Poll::Sleep) __builtin_amdgcn_s_sleep(4);
  }
}

// A 32-bit mixing function (the same on host and device) for values a CPU can recompute.
__host__ __device__ inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
