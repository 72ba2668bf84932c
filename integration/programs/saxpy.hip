// saxpy, a 2-D grid, a 1M-thread grid and dynamic shared memory.
#include "check.h"

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void grid2d(int* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = x * 1000 + y;
}

__global__ void ids(unsigned* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i ^ 0x5a5a5a5au;
}

// Reverses each block's slice through dynamically sized shared memory.
__global__ void reverse_dynamic(const int* in, int* out) {
  extern __shared__ int buf[];
  int t = threadIdx.x;
  int base = blockIdx.x * blockDim.x;
  buf[t] = in[base + t];
  __syncthreads();
  out[base + t] = buf[blockDim.x - 1 - t];
}

int main() {
  {
    const int n = 1 << 20;
    float *x = (float*)malloc(n * 4), *y = (float*)malloc(n * 4), *r = (float*)malloc(n * 4);
    for (int i = 0; i < n; i++) {
      x[i] = (float)(i % 97) * 0.25f;
      y[i] = (float)(i % 13) - 6.0f;
    }
    float *dx, *dy;
    HIP_CHECK(hipMalloc(&dx, n * 4));
    HIP_CHECK(hipMalloc(&dy, n * 4));
    HIP_CHECK(hipMemcpy(dx, x, n * 4, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dy, y, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(saxpy, dim3(n / 256), dim3(256), 0, 0, 2.5f, dx, dy, n);
    HIP_CHECK(hipMemcpy(r, dy, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      float want = fmaf(2.5f, x[i], y[i]);
      float want_unfused = 2.5f * x[i] + y[i];
      if (r[i] != want && r[i] != want_unfused) fail("saxpy", "y[%d] = %.9g, want %.9g", i, r[i], want);
    }
    pass("saxpy");
  }
  {
    const int w = 300, h = 70;
    int* d;
    HIP_CHECK(hipMalloc(&d, w * h * 4));
    hipLaunchKernelGGL(grid2d, dim3((w + 15) / 16, (h + 7) / 8), dim3(16, 8), 0, 0, d, w, h);
    int* r = (int*)malloc(w * h * 4);
    HIP_CHECK(hipMemcpy(r, d, w * h * 4, hipMemcpyDeviceToHost));
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        if (r[y * w + x] != x * 1000 + y) fail("grid_2d", "out[%d][%d] = %d", y, x, r[y * w + x]);
    pass("grid_2d");
  }
  {
    const unsigned n = 1 << 20;
    unsigned* d;
    HIP_CHECK(hipMalloc(&d, n * 4));
    hipLaunchKernelGGL(ids, dim3(n / 1024), dim3(1024), 0, 0, d);
    unsigned* r = (unsigned*)malloc(n * 4);
    HIP_CHECK(hipMemcpy(r, d, n * 4, hipMemcpyDeviceToHost));
    for (unsigned i = 0; i < n; i++)
      if (r[i] != (i ^ 0x5a5a5a5au)) fail("grid_1m_threads", "out[%u] = %#x", i, r[i]);
    pass("grid_1m_threads");
  }
  {
    const int block = 192, blocks = 40, n = block * blocks;
    int *in, *out, *h = (int*)malloc(n * 4);
    for (int i = 0; i < n; i++) h[i] = i * 7;
    HIP_CHECK(hipMalloc(&in, n * 4));
    HIP_CHECK(hipMalloc(&out, n * 4));
    HIP_CHECK(hipMemcpy(in, h, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(reverse_dynamic, dim3(blocks), dim3(block), block * sizeof(int), 0, in, out);
    HIP_CHECK(hipMemcpy(h, out, n * 4, hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
      for (int t = 0; t < block; t++)
        if (h[b * block + t] != (b * block + block - 1 - t) * 7) fail("dynamic_shared", "out[%d]", b * block + t);
    pass("dynamic_shared");
  }
  return 0;
}
