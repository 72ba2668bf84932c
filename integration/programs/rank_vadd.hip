// One rank of a multi-process job (torchrun-style RANK/WORLD_SIZE, or one of several
// clients of a daemon): prints the device addresses it got, then runs and verifies a
// vector add whose data depends on the rank, ROUNDS times (default 4; with ROUNDS set,
// a line per round).
#include "check.h"

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const char* r = getenv("RANK");
  int rank = r ? atoi(r) : 0;
  const char* rr = getenv("ROUNDS");
  int rounds = rr ? atoi(rr) : 4;
  const int n = 1 << 18;
  float *a = (float*)malloc(n * 4), *b = (float*)malloc(n * 4), *c = (float*)malloc(n * 4);
  for (int i = 0; i < n; i++) a[i] = (float)(i % 1000) + rank * 10000.0f, b[i] = (float)rank;
  float *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, n * 4));
  HIP_CHECK(hipMalloc(&db, n * 4));
  HIP_CHECK(hipMalloc(&dc, n * 4));
  printf("rank %d buffers %p %p %p\n", rank, (void*)da, (void*)db, (void*)dc);
  for (int round = 0; round < rounds; round++) {
    HIP_CHECK(hipMemcpy(da, a, n * 4, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(vadd, dim3(n / 256), dim3(256), 0, 0, da, db, dc, n);
    HIP_CHECK(hipMemcpy(c, dc, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      if (c[i] != a[i] + b[i]) fail("rank_vadd", "rank %d round %d: c[%d] = %g, want %g", rank, round, i, c[i], a[i] + b[i]);
    for (int i = 0; i < n; i++) b[i] += 1.0f;
    if (rr) {
      printf("round %d ok\n", round);
      fflush(stdout);
    }
  }
  printf("PASS rank %d\n", rank);
  return 0;
}
