// Block reduction in LDS with __syncthreads, warp shuffles, ballot/any/all,
// and a tiled 256x256 matrix multiply in LDS (exact for ints, 1e-4 relative
// for floats).
#include "check.h"

__global__ void block_sum(const int* in, long long* out) {
  __shared__ long long s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void shuffles(const int* in, int* out) {
  int lane = threadIdx.x % warpSize;
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 5;
  out[base + 0] = __shfl(v, (lane * 7) % warpSize);
  out[base + 1] = __shfl_xor(v, 5);
  out[base + 2] = __shfl_down(v, 3);
  // A full warp-sum through shfl_down.
  int sum = v;
  for (int off = warpSize / 2; off > 0; off /= 2) sum += __shfl_down(sum, off);
  out[base + 3] = sum;
  out[base + 4] = __shfl_up(v, 2);
}

__global__ void votes(const int* in, unsigned long long* ballots, int* anys, int* alls) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned long long b = __ballot(v > 50);
  int any = __any(v > 98);
  int all = __all(v >= 0);
  if (threadIdx.x % warpSize == 0) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
    ballots[w] = b;
    anys[w] = any;
    alls[w] = all;
  }
}

template <typename T>
__global__ void matmul(const T* a, const T* b, T* c, int n) {
  __shared__ T ta[16][16], tb[16][16];
  int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  T acc = 0;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

template <typename T>
static void run_matmul(const char* name, bool exact) {
  const int n = 256;
  T *a = (T*)malloc(n * n * sizeof(T)), *b = (T*)malloc(n * n * sizeof(T)), *c = (T*)malloc(n * n * sizeof(T));
  for (int i = 0; i < n * n; i++) {
    a[i] = (T)((i * 37) % 11) - (T)5;
    b[i] = (T)((i * 13) % 7) - (T)3;
    if (!exact) {
      a[i] = a[i] * (T)0.37;
      b[i] = b[i] * (T)1.9;
    }
  }
  T *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, n * n * sizeof(T)));
  HIP_CHECK(hipMalloc(&db, n * n * sizeof(T)));
  HIP_CHECK(hipMalloc(&dc, n * n * sizeof(T)));
  HIP_CHECK(hipMemcpy(da, a, n * n * sizeof(T), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b, n * n * sizeof(T), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(matmul<T>, dim3(n / 16, n / 16), dim3(16, 16), 0, 0, da, db, dc, n);
  HIP_CHECK(hipMemcpy(c, dc, n * n * sizeof(T), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double want = 0, mag = 0;
      for (int k = 0; k < n; k++) {
        want += (double)a[i * n + k] * (double)b[k * n + j];
        mag += fabs((double)a[i * n + k] * (double)b[k * n + j]);
      }
      double got = (double)c[i * n + j];
      bool ok = exact ? got == want : fabs(got - want) <= 1e-4 * (mag > 1 ? mag : 1);
      if (!ok) fail(name, "c[%d][%d] = %.9g, want %.9g", i, j, got, want);
    }
  pass(name);
}

int main() {
  {
    const int blocks = 64, n = blocks * 256;
    int* h = (int*)malloc(n * 4);
    for (int i = 0; i < n; i++) h[i] = (i * 2654435761u) % 1000 - 500;
    int* d;
    long long* o;
    HIP_CHECK(hipMalloc(&d, n * 4));
    HIP_CHECK(hipMalloc(&o, blocks * 8));
    HIP_CHECK(hipMemcpy(d, h, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(block_sum, dim3(blocks), dim3(256), 0, 0, d, o);
    long long r[64];
    HIP_CHECK(hipMemcpy(r, o, blocks * 8, hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
      long long want = 0;
      for (int t = 0; t < 256; t++) want += h[b * 256 + t];
      if (r[b] != want) fail("block_reduction", "block %d: %lld, want %lld", b, r[b], want);
    }
    pass("block_reduction");
  }
  {
    const int n = 256;
    int h[n], *d, *o, r[n * 5];
    for (int i = 0; i < n; i++) h[i] = i * 3 + 1;
    HIP_CHECK(hipMalloc(&d, n * 4));
    HIP_CHECK(hipMalloc(&o, n * 5 * 4));
    HIP_CHECK(hipMemcpy(d, h, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(shuffles, dim3(2), dim3(128), 0, 0, d, o);
    HIP_CHECK(hipMemcpy(r, o, n * 5 * 4, hipMemcpyDeviceToHost));
    const int ws = 64;
    for (int i = 0; i < n; i++) {
      int lane = i % ws, w0 = i - lane;
      int want[5];
      want[0] = h[w0 + (lane * 7) % ws];
      want[1] = h[w0 + (lane ^ 5)];
      want[2] = lane + 3 < ws ? h[i + 3] : h[i];
      long long s = 0;
      for (int k = 0; k < ws; k++) s += h[w0 + k];
      want[4] = lane >= 2 ? h[i - 2] : h[i];
      for (int k = 0; k < 5; k++) {
        if (k == 3) {
          if (lane == 0 && r[i * 5 + 3] != s) fail("warp_shuffle", "warp sum %d, want %lld", r[i * 5 + 3], s);
          continue;
        }
        if (r[i * 5 + k] != want[k]) fail("warp_shuffle", "lane %d op %d: %d, want %d", i, k, r[i * 5 + k], want[k]);
      }
    }
    pass("warp_shuffle");
  }
  {
    const int n = 512, warps = n / 64;
    int h[n], *d, *da, *dl, any[warps], all[warps];
    unsigned long long* db;
    unsigned long long ballots[warps];
    for (int i = 0; i < n; i++) h[i] = (i * 37) % 100 - (i == 300 ? 1000 : 0);
    HIP_CHECK(hipMalloc(&d, n * 4));
    HIP_CHECK(hipMalloc(&db, warps * 8));
    HIP_CHECK(hipMalloc(&da, warps * 4));
    HIP_CHECK(hipMalloc(&dl, warps * 4));
    HIP_CHECK(hipMemcpy(d, h, n * 4, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(votes, dim3(4), dim3(128), 0, 0, d, db, da, dl);
    HIP_CHECK(hipMemcpy(ballots, db, warps * 8, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(any, da, warps * 4, hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(all, dl, warps * 4, hipMemcpyDeviceToHost));
    for (int w = 0; w < warps; w++) {
      unsigned long long want = 0;
      int wany = 0, wall = 1;
      for (int l = 0; l < 64; l++) {
        int v = h[w * 64 + l];
        if (v > 50) want |= 1ull << l;
        if (v > 98) wany = 1;
        if (v < 0) wall = 0;
      }
      if (ballots[w] != want) fail("ballot", "warp %d: %#llx, want %#llx", w, ballots[w], want);
      if (!!any[w] != wany || !!all[w] != wall) fail("any_all", "warp %d: any %d all %d", w, any[w], all[w]);
    }
    pass("ballot_any_all");
  }
  run_matmul<int>("matmul_int", true);
  run_matmul<float>("matmul_float", false);
  return 0;
}
