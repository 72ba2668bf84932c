// A code object loaded at run time with hipModuleLoad (compiled with --genco): the
// kernels the spawn-pattern workers launch through ctypes.
#include <hip/hip_runtime.h>

extern "C" __global__ void scale_add(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
