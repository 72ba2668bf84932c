// Device code that calls functions with a stack (issue 18): recursion, virtual calls through
// base pointers, a deep call chain with arrays in every frame, printf from a called
// function, and a recursion deeper than the default stack after hipDeviceSetLimit.
// Every result is checked against the same code run on the host.
#include "check.h"

struct Shape {
  __host__ __device__ virtual int area(int x) const { return x; }
};
struct Square : Shape {
  __host__ __device__ int area(int x) const override { return x * x; }
};
struct Triangle : Shape {
  __host__ __device__ int area(int x) const override { return x * (x + 1) / 2; }
};

__host__ __device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

// Each frame holds an array the compiler must keep on the stack (indexed by a runtime value).
__host__ __device__ __noinline__ int chain(int n, int pick) {
  int a[16];
  for (int i = 0; i < 16; i++) a[i] = n * 3 + i;
  return n == 0 ? a[pick & 15] : chain(n - 1, pick + a[pick & 15]) + a[(pick + n) & 15];
}

// A recursion of `depth` frames of 256 bytes each: deeper than the default stack.
__host__ __device__ __noinline__ unsigned deep(int depth, unsigned seed) {
  unsigned a[64];
  for (int i = 0; i < 64; i++) a[i] = seed * 2654435761u + i;
  return depth == 0 ? a[seed & 63] : deep(depth - 1, a[(seed >> 3) & 63]) ^ a[depth & 63];
}

__device__ __noinline__ void report(int t, int v) {
  if (t % 97 == 0) printf("thread %d computed %d\n", t, v);
}

__global__ void calls(int* out) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  Shape plain;
  Square sq;
  Triangle tri;
  const Shape* s = t % 3 == 0 ? &plain : t % 3 == 1 ? static_cast<const Shape*>(&sq) : &tri;
  int v = fib(t % 13) + s->area(t % 50) + chain(t % 24, t);
  report(t, v);
  out[t] = v;
}

__global__ void deep_calls(unsigned* out, int depth) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  out[t] = deep(depth, t);
}

#define NEW_HIP (HIP_VERSION_MAJOR > 5 || (HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR >= 3))

int main() {
#if NEW_HIP
  // Since HIP 5.3 the stack of a kernel with calls is what this limit says (1 KiB by
  // default), as on the hardware; the chain below needs about 3 KiB per thread.
  HIP_CHECK(hipDeviceSetLimit(hipLimitStackSize, 96 * 1024));
  size_t limit = 0;
  HIP_CHECK(hipDeviceGetLimit(&limit, hipLimitStackSize));
  if (limit < 96 * 1024) fail("stack limit", "hipDeviceGetLimit says %zu bytes", limit);
#endif
  const int n = 2048;
  int* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(int)));
  hipLaunchKernelGGL(calls, dim3(n / 256), dim3(256), 0, 0, d);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  int* h = (int*)malloc(n * sizeof(int));
  HIP_CHECK(hipMemcpy(h, d, n * sizeof(int), hipMemcpyDeviceToHost));
  Shape plain;
  Square sq;
  Triangle tri;
  for (int t = 0; t < n; t++) {
    const Shape* s = t % 3 == 0 ? &plain : t % 3 == 1 ? static_cast<const Shape*>(&sq) : &tri;
    int want = fib(t % 13) + s->area(t % 50) + chain(t % 24, t);
    if (h[t] != want) fail("device calls", "thread %d: %d, expected %d", t, h[t], want);
  }
  pass("recursion, virtual calls and a deep call chain");

#if NEW_HIP
  // 200 frames of about 300 bytes: ~60 KiB per thread, beyond the default stack.
  const int depth = 200;
  const char* what = "recursion 200 frames deep with a 96 KiB stack limit";
#else
  // HIP 5.2 has no stack limit: 40 frames (~12 KiB) fit the compiler's 16 KiB default.
  const int depth = 40;
  const char* what = "recursion 40 frames deep";
#endif
  const int m = 256;
  unsigned* du;
  HIP_CHECK(hipMalloc(&du, m * sizeof(unsigned)));
  hipLaunchKernelGGL(deep_calls, dim3(m / 64), dim3(64), 0, 0, du, depth);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  unsigned* hu = (unsigned*)malloc(m * sizeof(unsigned));
  HIP_CHECK(hipMemcpy(hu, du, m * sizeof(unsigned), hipMemcpyDeviceToHost));
  for (int t = 0; t < m; t++) {
    unsigned want = deep(depth, t);
    if (hu[t] != want) fail("deep recursion", "thread %d: %#x, expected %#x", t, hu[t], want);
  }
  pass(what);
  return 0;
}
