// Atomics across many workgroups: integer and float histograms
// (atomicAdd), atomicCAS-based increment, atomicMax.
#include "check.h"

__global__ void histogram(const int* in, int n, int* hist, float* fhist) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int bin = in[i] & 63;
    atomicAdd(&hist[bin], 1);
    atomicAdd(&fhist[bin], 0.5f);
  }
}

__global__ void cas_increment(unsigned* counter, int per_thread) {
  for (int k = 0; k < per_thread; k++) {
    unsigned old = *counter, assumed;
    do {
      assumed = old;
      old = atomicCAS(counter, assumed, assumed + 1);
    } while (old != assumed);
  }
}

__global__ void maximum(const int* in, int n, int* out, unsigned long long* out64) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicMax(out, in[i]);
    atomicMax(out64, (unsigned long long)in[i] * 3000000000ull);
  }
}

int main() {
  const int n = 1 << 18;
  int* h = (int*)malloc(n * 4);
  for (int i = 0; i < n; i++) h[i] = (int)((i * 2654435761u) >> 7);
  int *d, *hist;
  float* fhist;
  HIP_CHECK(hipMalloc(&d, n * 4));
  HIP_CHECK(hipMalloc(&hist, 64 * 4));
  HIP_CHECK(hipMalloc(&fhist, 64 * 4));
  HIP_CHECK(hipMemcpy(d, h, n * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(hist, 0, 64 * 4));
  HIP_CHECK(hipMemset(fhist, 0, 64 * 4));
  hipLaunchKernelGGL(histogram, dim3(120), dim3(256), 0, 0, d, n, hist, fhist);
  int r[64];
  float fr[64];
  HIP_CHECK(hipMemcpy(r, hist, 64 * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(fr, fhist, 64 * 4, hipMemcpyDeviceToHost));
  int want[64] = {0};
  for (int i = 0; i < n; i++) want[h[i] & 63]++;
  for (int b = 0; b < 64; b++) {
    if (r[b] != want[b]) fail("atomic_add_int", "bin %d: %d, want %d", b, r[b], want[b]);
    // Multiples of 0.5 up to 2^18 are exact in f32: the order does not matter.
    if (fr[b] != want[b] * 0.5f) fail("atomic_add_float", "bin %d: %g, want %g", b, fr[b], want[b] * 0.5f);
  }
  pass("atomic_add_histogram");

  unsigned* counter;
  HIP_CHECK(hipMalloc(&counter, 4));
  HIP_CHECK(hipMemset(counter, 0, 4));
  hipLaunchKernelGGL(cas_increment, dim3(32), dim3(64), 0, 0, counter, 10);
  unsigned c;
  HIP_CHECK(hipMemcpy(&c, counter, 4, hipMemcpyDeviceToHost));
  if (c != 32 * 64 * 10) fail("atomic_cas", "counter %u, want %u", c, 32 * 64 * 10);
  pass("atomic_cas");

  int* mx;
  unsigned long long* mx64;
  HIP_CHECK(hipMalloc(&mx, 4));
  HIP_CHECK(hipMalloc(&mx64, 8));
  int lowest = INT32_MIN;
  unsigned long long zero = 0;
  HIP_CHECK(hipMemcpy(mx, &lowest, 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(mx64, &zero, 8, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(maximum, dim3(n / 256), dim3(256), 0, 0, d, n, mx, mx64);
  int m;
  unsigned long long m64;
  HIP_CHECK(hipMemcpy(&m, mx, 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&m64, mx64, 8, hipMemcpyDeviceToHost));
  int wm = INT32_MIN;
  unsigned long long wm64 = 0;
  for (int i = 0; i < n; i++) {
    if (h[i] > wm) wm = h[i];
    unsigned long long v = (unsigned long long)h[i] * 3000000000ull;
    if (v > wm64) wm64 = v;
  }
  if (m != wm || m64 != wm64) fail("atomic_max", "%d / %llu, want %d / %llu", m, m64, wm, wm64);
  pass("atomic_max");
  return 0;
}
