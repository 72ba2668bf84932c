// Shared helpers for the HIP test programs: every program checks its
// results against a CPU reference and prints "PASS <what>" or
// "FAIL <what>: <details>", exiting non-zero on the first failure.
#pragma once
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdarg>

#define HIP_CHECK(x)                                                                   \
  do {                                                                                 \
    hipError_t err_ = (x);                                                             \
    if (err_ != hipSuccess) {                                                          \
      printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(err_)); \
      exit(2);                                                                         \
    }                                                                                  \
  } while (0)

static inline void fail(const char* what, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void fail(const char* what, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL %s: ", what);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  exit(1);
}

static inline void pass(const char* what) { printf("PASS %s\n", what); }

// Distance in units in the last place between two floats of the same sign.
static inline int64_t ulp_diff_f32(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : INT64_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return llabs((int64_t)ia - (int64_t)ib);
}

static inline int64_t ulp_diff_f64(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : INT64_MAX;
  int64_t ia, ib;
  memcpy(&ia, &a, 8);
  memcpy(&ib, &b, 8);
  if (ia < 0) ia = INT64_MIN - ia;
  if (ib < 0) ib = INT64_MIN - ib;
  __int128 d = (__int128)ia - (__int128)ib;
  return d < 0 ? (int64_t)-d : (int64_t)d;
}
