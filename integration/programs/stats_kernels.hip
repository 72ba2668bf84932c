// For integration/tests/stats.rs (run statistics): a straight-line kernel launched a given
// number of times (argv[1], default 3) on 40 blocks of 256 threads, every work-item in range,
// so each wave runs each of its instructions exactly once; the result is checked against a
// CPU reference.
#include "check.h"

__global__ void scale_add(const float* x, float* y, float a) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? atoi(argv[1]) : 3;
  const unsigned blocks = 40, threads = 256, n = blocks * threads;
  const float a = 0.5f;
  float *hx = (float*)malloc(n * sizeof(float)), *hy = (float*)malloc(n * sizeof(float));
  for (unsigned i = 0; i < n; i++) {
    hx[i] = (float)(i % 97);
    hy[i] = (float)(i % 13);
  }
  float *dx, *dy;
  HIP_CHECK(hipMalloc(&dx, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dy, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(dx, hx, n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dy, hy, n * sizeof(float), hipMemcpyHostToDevice));
  for (int l = 0; l < launches; l++) {
    hipLaunchKernelGGL(scale_add, dim3(blocks), dim3(threads), 0, 0, dx, dy, a);
  }
  HIP_CHECK(hipDeviceSynchronize());
  float* back = (float*)malloc(n * sizeof(float));
  HIP_CHECK(hipMemcpy(back, dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (unsigned i = 0; i < n; i++) {
    float want = hy[i];
    for (int l = 0; l < launches; l++) want = a * hx[i] + want;
    if (back[i] != want) fail("scale_add", "y[%u] = %g, expected %g", i, back[i], want);
  }
  printf("PASS scale_add x%d\n", launches);
  HIP_CHECK(hipFree(dx));
  HIP_CHECK(hipFree(dy));
  return 0;
}
