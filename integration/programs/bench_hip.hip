// Figures for `cargo xtask bench` (printed as `name<TAB>value<TAB>unit` lines):
// vector add and saxpy on 16 M floats on the GPU versus the same loops on one host core
// (compiled -O2 in this program; the best of five runs each), empty-kernel launch +
// synchronize latency (median of 1000), and hipMemcpy bandwidth for 256 MiB each way versus
// a host memcpy.
#include "check.h"
#include <algorithm>
#include <chrono>
#include <vector>

using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The best of five runs of `run`, for the simulated and the native side alike: a shared
// VM's speed varies from second to second, and the ratio of two single runs with it.
template <class F> static double best_of_5(F run) {
  double best = 1e30;
  for (int k = 0; k < 5; k++) {
    auto t0 = Clock::now();
    run();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void empty() {}

__attribute__((noinline)) static void host_vadd(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
__attribute__((noinline)) static void host_saxpy(float a, const float* x, float* y, int n) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 16 << 20;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; i++) a[i] = i * 0.5f, b[i] = 1.0f / (1 + i % 100);
  float *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, n * 4));
  HIP_CHECK(hipMalloc(&db, n * 4));
  HIP_CHECK(hipMalloc(&dc, n * 4));
  HIP_CHECK(hipMemcpy(da, a.data(), n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), n * 4, hipMemcpyHostToDevice));

  hipLaunchKernelGGL(vadd, dim3(n / 256), dim3(256), 0, 0, da, db, dc, n);  // warm-up (code load)
  HIP_CHECK(hipDeviceSynchronize());
  double gpu = best_of_5([&] {
    hipLaunchKernelGGL(vadd, dim3(n / 256), dim3(256), 0, 0, da, db, dc, n);
    HIP_CHECK(hipDeviceSynchronize());
  });
  host_vadd(a.data(), b.data(), c.data(), n);  // warm-up: the first pass faults pages in
  double host = best_of_5([&] { host_vadd(a.data(), b.data(), c.data(), n); });
  printf("vector add 16M: simulated\t%.1f\tms\n", gpu * 1e3);
  printf("vector add 16M: host loop -O2\t%.1f\tms\n", host * 1e3);
  printf("vector add 16M: simulated / native\t%.1f\tx\n", gpu / host);

  hipLaunchKernelGGL(saxpy, dim3(n / 256), dim3(256), 0, 0, 2.0f, da, dc, n);
  HIP_CHECK(hipDeviceSynchronize());
  gpu = best_of_5([&] {
    hipLaunchKernelGGL(saxpy, dim3(n / 256), dim3(256), 0, 0, 2.0f, da, dc, n);
    HIP_CHECK(hipDeviceSynchronize());
  });
  host = best_of_5([&] { host_saxpy(2.0f, a.data(), c.data(), n); });
  printf("saxpy 16M: simulated\t%.1f\tms\n", gpu * 1e3);
  printf("saxpy 16M: host loop -O2\t%.1f\tms\n", host * 1e3);
  printf("saxpy 16M: simulated / native\t%.1f\tx\n", gpu / host);

  std::vector<double> lat;
  auto t = Clock::now();
  for (int i = 0; i < 1000; i++) {
    t = Clock::now();
    hipLaunchKernelGGL(empty, dim3(1), dim3(64), 0, 0);
    HIP_CHECK(hipDeviceSynchronize());
    lat.push_back(seconds_since(t));
  }
  std::sort(lat.begin(), lat.end());
  printf("empty launch + sync (median of 1000)\t%.1f\tus\n", lat[500] * 1e6);

  const size_t bytes = 256u << 20;
  char *h, *h2, *d;
  HIP_CHECK(hipHostMalloc(&h, bytes));
  h2 = (char*)malloc(bytes);
  memset(h, 1, bytes);
  memset(h2, 2, bytes);
  HIP_CHECK(hipMalloc(&d, bytes));
  HIP_CHECK(hipMemcpy(d, h, bytes, hipMemcpyHostToDevice));  // warm-up
  t = Clock::now();
  HIP_CHECK(hipMemcpy(d, h, bytes, hipMemcpyHostToDevice));
  printf("hipMemcpy 256 MiB H2D\t%.2f\tGB/s\n", bytes / seconds_since(t) / 1e9);
  t = Clock::now();
  HIP_CHECK(hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost));
  printf("hipMemcpy 256 MiB D2H\t%.2f\tGB/s\n", bytes / seconds_since(t) / 1e9);
  t = Clock::now();
  memcpy(h2, h, bytes);
  printf("host memcpy 256 MiB\t%.2f\tGB/s\n", bytes / seconds_since(t) / 1e9);
  // The copies must have moved every byte (a bandwidth of a partial copy means nothing).
  return h2[12345] == 1 && h2[bytes / 2 + 7] == 1 && h2[bytes - 1] == 1 ? 0 : 1;
}
