// For integration/tests/trace.rs (the timeline): two streams with a dependency between them.
// Stream a runs first_on_a then second_on_a (in order); stream b runs first_on_b, then waits
// for an event recorded after second_on_a, then runs after_event_on_b, which reads what both
// streams wrote. Results are checked against a CPU reference.
#include "check.h"

constexpr unsigned N = 64 * 256;

__global__ void first_on_a(float* a) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (float)i;
  for (int k = 0; k < 64; k++) v = v * 0.5f + 1.0f;
  a[i] = v;
}

__global__ void second_on_a(float* a) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = a[i] + 1.0f;
}

__global__ void first_on_b(float* b) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  b[i] = 3.0f * (float)(i % 7);
}

__global__ void after_event_on_b(const float* a, float* b) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  b[i] = b[i] + a[i];
}

int main() {
  float *a, *b;
  HIP_CHECK(hipMalloc(&a, N * sizeof(float)));
  HIP_CHECK(hipMalloc(&b, N * sizeof(float)));
  hipStream_t sa, sb;
  HIP_CHECK(hipStreamCreate(&sa));
  HIP_CHECK(hipStreamCreate(&sb));
  hipEvent_t done_a;
  HIP_CHECK(hipEventCreateWithFlags(&done_a, hipEventDisableTiming));
  hipLaunchKernelGGL(first_on_a, dim3(N / 256), dim3(256), 0, sa, a);
  hipLaunchKernelGGL(first_on_b, dim3(N / 256), dim3(256), 0, sb, b);
  hipLaunchKernelGGL(second_on_a, dim3(N / 256), dim3(256), 0, sa, a);
  HIP_CHECK(hipEventRecord(done_a, sa));
  HIP_CHECK(hipStreamWaitEvent(sb, done_a, 0));
  hipLaunchKernelGGL(after_event_on_b, dim3(N / 256), dim3(256), 0, sb, a, b);
  HIP_CHECK(hipStreamSynchronize(sb));
  HIP_CHECK(hipStreamSynchronize(sa));
  float* back = (float*)malloc(N * sizeof(float));
  HIP_CHECK(hipMemcpy(back, b, N * sizeof(float), hipMemcpyDeviceToHost));
  for (unsigned i = 0; i < N; i++) {
    float v = (float)i;
    for (int k = 0; k < 64; k++) v = v * 0.5f + 1.0f;
    float want = 3.0f * (float)(i % 7) + (v + 1.0f);
    if (back[i] != want) fail("two streams", "b[%u] = %g, expected %g", i, back[i], want);
  }
  printf("PASS two streams\n");
  return 0;
}
