// Vector add in float, int and double, with hipMemcpy both ways, hipMemset
// and a device-to-device copy.
#include "check.h"

template <typename T>
__global__ void vadd(const T* a, const T* b, T* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
static void run(const char* name, int n) {
  size_t bytes = n * sizeof(T);
  T *ha = (T*)malloc(bytes), *hb = (T*)malloc(bytes), *hc = (T*)malloc(bytes);
  for (int i = 0; i < n; i++) {
    ha[i] = (T)(i % 1000) * (T)3 + (T)1;
    hb[i] = (T)(n - i) / (T)2;
  }
  T *da, *db, *dc, *dd;
  HIP_CHECK(hipMalloc(&da, bytes));
  HIP_CHECK(hipMalloc(&db, bytes));
  HIP_CHECK(hipMalloc(&dc, bytes));
  HIP_CHECK(hipMalloc(&dd, bytes));
  HIP_CHECK(hipMemcpy(da, ha, bytes, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, hb, bytes, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dc, 0xff, bytes));
  hipLaunchKernelGGL(vadd<T>, dim3((n + 255) / 256), dim3(256), 0, 0, da, db, dc, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(dd, dc, bytes, hipMemcpyDeviceToDevice));
  HIP_CHECK(hipMemcpy(hc, dd, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    T want = ha[i] + hb[i];
    if (hc[i] != want) fail(name, "c[%d] = %g, want %g", i, (double)hc[i], (double)want);
  }
  // hipMemset really sets bytes: clear and read back.
  HIP_CHECK(hipMemset(dc, 0, bytes));
  HIP_CHECK(hipMemcpy(hc, dc, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hc[i] != (T)0) fail(name, "after hipMemset c[%d] = %g", i, (double)hc[i]);
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  HIP_CHECK(hipFree(dd));
  free(ha);
  free(hb);
  free(hc);
  pass(name);
}

int main() {
  run<float>("vector_add_float", 1 << 20);
  run<int>("vector_add_int", 100003);
  run<double>("vector_add_double", 65536 + 17);
  return 0;
}
