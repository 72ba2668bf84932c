// rocRAND throughput for `cargo xtask bench`: 16 M uniform floats from the library's
// Philox generator on the simulated GPU, against the same numbers drawn on one host core
// with rocRAND's device API compiled for the host (rocRAND 5.3 has no host generator).
#define FQUALIFIERS __forceinline__ __host__ __device__
#include "check.h"
#include <chrono>
#include <hiprand/hiprand.h>
#include <rocrand/rocrand_kernel.h>
#include <vector>

using Clock = std::chrono::steady_clock;

int main() {
  const size_t n = 16 << 20;
  hiprandGenerator_t g;
  if (hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_PHILOX4_32_10) != HIPRAND_STATUS_SUCCESS) return 1;
  hiprandSetPseudoRandomGeneratorSeed(g, 42);
  float* d;
  HIP_CHECK(hipMalloc(&d, n * 4));
  hiprandGenerateUniform(g, d, 1 << 16);  // warm-up: code load, state set-up
  HIP_CHECK(hipDeviceSynchronize());
  hiprandSetGeneratorOffset(g, 0);  // the timed run starts the sequence again
  auto t = Clock::now();
  if (hiprandGenerateUniform(g, d, n) != HIPRAND_STATUS_SUCCESS) return 1;
  HIP_CHECK(hipDeviceSynchronize());
  double gpu = std::chrono::duration<double>(Clock::now() - t).count();
  std::vector<float> h(n);
  rocrand_state_philox4x32_10 s;
  rocrand_init(42, 0, 0, &s);
  t = Clock::now();
  for (size_t i = 0; i < n; i++) h[i] = rocrand_uniform(&s);
  double host = std::chrono::duration<double>(Clock::now() - t).count();
  std::vector<float> back(n);
  HIP_CHECK(hipMemcpy(back.data(), d, n * 4, hipMemcpyDeviceToHost));
  if (back != h) fail("rocrand 16M uniform", "device and host sequences differ");
  printf("rocRAND philox 16M uniform: simulated\t%.1f\tms\n", gpu * 1e3);
  printf("rocRAND philox 16M uniform: host, one core\t%.1f\tms\n", host * 1e3);
  return 0;
}
