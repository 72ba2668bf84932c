// gfx942 (MI300X) matrix cores: 256x256x256 products from the MFMAs CDNA3 added, one wave
// per 32x32 output tile, checked element by element against a CPU product.
//   fp8: v_mfma_f32_32x32x16_fp8_fp8 on E4M3 "FNUZ" inputs (gfx942's fp8: exponent bias 8,
//        0x80 is NaN), encoded here on the CPU;
//   i8:  v_mfma_i32_32x32x16_i8 (CDNA3's doubled-K i8 shape).
// Inputs are small integers, exactly representable in both formats, so every sum is exact
// whatever order the hardware adds in.
#include "check.h"
#include <vector>

constexpr int N = 256;

typedef float floatx16 __attribute__((ext_vector_type(16)));
typedef int intx16 __attribute__((ext_vector_type(16)));

// Row of element r of a 32x32 D tile in lane `lane` (the MFMA output layout).
__device__ inline int d_row(int r, int lane) { return 8 * (r / 4) + 4 * (lane / 32) + r % 4; }

// A and B hold one byte per element (fp8 or i8), row-major. For the K=16 shapes lane l
// holds A[l % 32][k0 + 8 * (l / 32) + e] in byte e of its 64-bit operand (B: column l % 32).
__device__ inline long pack8(const uint8_t* m, int stride, int base) {
  unsigned long v = 0;
  for (int e = 0; e < 8; e++) v |= (unsigned long)m[base + e * stride] << (8 * e);
  return (long)v;
}

__global__ void gemm_fp8(const uint8_t* a, const uint8_t* b, float* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  floatx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 16) {
    int k = k0 + 8 * (lane / 32);
    long av = pack8(a, 1, (ti + lane % 32) * N + k);
    long bv = pack8(b, N, k * N + tj + lane % 32);
    acc = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

__global__ void gemm_i8(const uint8_t* a, const uint8_t* b, int* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  intx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 16) {
    int k = k0 + 8 * (lane / 32);
    long av = pack8(a, 1, (ti + lane % 32) * N + k);
    long bv = pack8(b, N, k * N + tj + lane % 32);
    acc = __builtin_amdgcn_mfma_i32_32x32x16_i8(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

// E4M3 FNUZ: sign, 4 exponent bits with bias 8, 3 mantissa bits; exact for |v| <= 16.
static uint8_t fp8_fnuz(int v) {
  if (v == 0) return 0;
  unsigned mag = v < 0 ? -v : v, p = 0;
  while ((2u << p) <= mag) p++;
  unsigned mant = ((mag << 3) >> p) & 7;  // mag / 2^p = 1.mmm
  if ((((8 + mant) << p) >> 3) != mag) fail("fp8", "%d is not exact in E4M3", v);
  return (uint8_t)((v < 0 ? 0x80 : 0) | ((p + 8) << 3) | mant);
}

template <typename Out>
static void run(const char* what, void (*kernel)(const uint8_t*, const uint8_t*, Out*), uint8_t (*encode)(int)) {
  std::vector<uint8_t> ha(N * N), hb(N * N);
  std::vector<int> ra(N * N), rb(N * N);
  unsigned seed = 4242;
  auto next = [&]() { return seed = seed * 1103515245u + 12345u; };
  for (int i = 0; i < N * N; i++) {
    ra[i] = (int)(next() >> 16 & 15) - 8;
    rb[i] = (int)(next() >> 16 & 15) - 8;
    ha[i] = encode(ra[i]);
    hb[i] = encode(rb[i]);
  }
  uint8_t *da, *db;
  Out* dc;
  HIP_CHECK(hipMalloc(&da, N * N));
  HIP_CHECK(hipMalloc(&db, N * N));
  HIP_CHECK(hipMalloc(&dc, N * N * sizeof(Out)));
  HIP_CHECK(hipMemcpy(da, ha.data(), N * N, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, hb.data(), N * N, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(kernel, dim3(N / 32, N / 32), dim3(64), 0, 0, da, db, dc);
  HIP_CHECK(hipGetLastError());
  std::vector<Out> hc(N * N);
  HIP_CHECK(hipMemcpy(hc.data(), dc, N * N * sizeof(Out), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      long want = 0;
      for (int k = 0; k < N; k++) want += (long)ra[i * N + k] * rb[k * N + j];
      if ((double)hc[i * N + j] != (double)want) fail(what, "C[%d][%d] = %g, want %ld", i, j, (double)hc[i * N + j], want);
    }
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  pass(what);
}

static uint8_t i8(int v) { return (uint8_t)(int8_t)v; }

int main() {
  run("mfma fp8 32x32x16 gemm 256", gemm_fp8, fp8_fnuz);
  run("mfma i8 32x32x16 gemm 256", gemm_i8, i8);
  return 0;
}
