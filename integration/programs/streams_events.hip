// Two streams with hipMemcpyAsync and kernels, events (record,
// synchronize, elapsed time), and a cross-stream wait.
#include "check.h"

__global__ void scale(float* p, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

__global__ void add_into(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += src[i];
}

int main() {
  const int n = 1 << 16;
  float *h0, *h1;
  HIP_CHECK(hipHostMalloc(&h0, n * 4));
  HIP_CHECK(hipHostMalloc(&h1, n * 4));
  for (int i = 0; i < n; i++) {
    h0[i] = (float)i;
    h1[i] = (float)(n - i);
  }
  float *d0, *d1;
  HIP_CHECK(hipMalloc(&d0, n * 4));
  HIP_CHECK(hipMalloc(&d1, n * 4));
  hipStream_t s0, s1;
  HIP_CHECK(hipStreamCreate(&s0));
  HIP_CHECK(hipStreamCreate(&s1));
  hipEvent_t start, done1, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&done1));
  HIP_CHECK(hipEventCreate(&stop));

  HIP_CHECK(hipEventRecord(start, s0));
  HIP_CHECK(hipMemcpyAsync(d0, h0, n * 4, hipMemcpyHostToDevice, s0));
  HIP_CHECK(hipMemcpyAsync(d1, h1, n * 4, hipMemcpyHostToDevice, s1));
  hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s0, d0, 2.0f, n);
  hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s1, d1, 3.0f, n);
  HIP_CHECK(hipEventRecord(done1, s1));
  // s0 must see s1's result before adding it.
  HIP_CHECK(hipStreamWaitEvent(s0, done1, 0));
  hipLaunchKernelGGL(add_into, dim3(n / 256), dim3(256), 0, s0, d0, d1, n);
  HIP_CHECK(hipMemcpyAsync(h0, d0, n * 4, hipMemcpyDeviceToHost, s0));
  HIP_CHECK(hipEventRecord(stop, s0));
  HIP_CHECK(hipEventSynchronize(stop));
  if (hipEventQuery(stop) != hipSuccess) fail("events", "stop event not complete after synchronize");
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  if (!(ms >= 0.0f && ms < 60000.0f)) fail("events", "elapsed time %g ms", ms);
  for (int i = 0; i < n; i++) {
    float want = 2.0f * i + 3.0f * (n - i);
    if (h0[i] != want) fail("streams", "h0[%d] = %g, want %g", i, h0[i], want);
  }
  HIP_CHECK(hipStreamSynchronize(s1));
  HIP_CHECK(hipDeviceSynchronize());
  pass("streams_and_events");
  return 0;
}
