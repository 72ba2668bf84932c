// Concurrency figures for `cargo xtask bench` (issue 13), printed as "name<TAB>value<TAB>unit":
//   bench_streams throughput   8 streams x 1000 small kernels vs the same 8000 on one stream
//   bench_streams latency N    N launches of a one-workgroup kernel, each waited for: median
//                              and p99 latency (run while another client runs a long kernel)
// Every kernel's result is checked.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

__global__ void bump(unsigned* counters, unsigned slot) {
  if (threadIdx.x == 0) atomicAdd(&counters[slot], 1u);
}

static double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

static int throughput() {
  const int streams = 8, per_stream = 1000;
  unsigned* counters;
  HIP_CHECK(hipMalloc(&counters, streams * sizeof(unsigned)));
  std::vector<hipStream_t> s(streams);
  for (auto& x : s) HIP_CHECK(hipStreamCreateWithFlags(&x, hipStreamNonBlocking));
  double rate[2];
  for (int pass = 0; pass < 2; pass++) {
    const bool many = pass == 1;
    HIP_CHECK(hipMemset(counters, 0, streams * sizeof(unsigned)));
    HIP_CHECK(hipDeviceSynchronize());
    auto t = std::chrono::steady_clock::now();
    for (int k = 0; k < per_stream; k++)
      for (int i = 0; i < streams; i++)
        hipLaunchKernelGGL(bump, dim3(1), dim3(64), 0, many ? s[i] : s[0], counters, many ? i : 0);
    HIP_CHECK(hipDeviceSynchronize());
    rate[pass] = streams * per_stream / seconds_since(t);
    unsigned got[streams];
    HIP_CHECK(hipMemcpy(got, counters, sizeof(got), hipMemcpyDeviceToHost));
    for (int i = 0; i < streams; i++) {
      unsigned want = many ? per_stream : (i == 0 ? streams * per_stream : 0);
      if (got[i] != want) {
        fprintf(stderr, "counter %d: %u, expected %u\n", i, got[i], want);
        return 1;
      }
    }
  }
  printf("8000 small kernels on 1 stream\t%.0f\tkernels/s\n", rate[0]);
  printf("8000 small kernels on 8 streams\t%.0f\tkernels/s\n", rate[1]);
  return 0;
}

static int latency(int n) {
  unsigned* counters;
  HIP_CHECK(hipMalloc(&counters, sizeof(unsigned)));
  HIP_CHECK(hipMemset(counters, 0, sizeof(unsigned)));
  hipStream_t s;
  HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  std::vector<double> us;
  for (int i = 0; i < n; i++) {
    auto t = std::chrono::steady_clock::now();
    hipLaunchKernelGGL(bump, dim3(1), dim3(64), 0, s, counters, 0);
    HIP_CHECK(hipStreamSynchronize(s));
    us.push_back(seconds_since(t) * 1e6);
  }
  unsigned got;
  HIP_CHECK(hipMemcpy(&got, counters, sizeof(got), hipMemcpyDeviceToHost));
  if (got != (unsigned)n) {
    fprintf(stderr, "counter %u, expected %d\n", got, n);
    return 1;
  }
  std::sort(us.begin(), us.end());
  printf("small kernel latency, median of %d\t%.1f\tus\n", n, us[n / 2]);
  printf("small kernel latency, p99 of %d\t%.1f\tus\n", n, us[std::min(n - 1, n * 99 / 100)]);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "throughput")) return throughput();
  if (argc > 2 && !strcmp(argv[1], "latency")) return latency(atoi(argv[2]));
  fprintf(stderr, "usage: bench_streams throughput | latency N\n");
  return 2;
}
