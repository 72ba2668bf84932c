// 256x256x256 matrix products built from MFMA tiles (the matrix cores), one wave per
// 32x32 (16x16 for f64) output tile, in f32, f16, bf16, i8 and f64, each checked
// element by element against a CPU product. Inputs are small integers, so every sum is
// exact and the comparison is exact whatever order the hardware adds in; a last f32 run
// with fractional inputs checks against a 1e-4 relative tolerance.
#include "check.h"
#include <vector>

constexpr int N = 256;

typedef float floatx16 __attribute__((ext_vector_type(16)));
typedef int intx16 __attribute__((ext_vector_type(16)));
typedef double doublex4 __attribute__((ext_vector_type(4)));
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4v __attribute__((ext_vector_type(4)));

// Row i of a 32x32 D tile held in register r of lane l (the MFMA output layout).
__device__ inline int d_row(int r, int lane) { return 8 * (r / 4) + 4 * (lane / 32) + r % 4; }

// C = A·B for row-major A (NxN) and B (NxN); each wave computes one 32x32 tile.
__global__ void gemm_f32(const float* a, const float* b, float* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  floatx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 2) {
    int k = k0 + lane / 32;
    acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[(ti + lane % 32) * N + k], b[k * N + tj + lane % 32], acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

__global__ void gemm_f16(const _Float16* a, const _Float16* b, float* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  floatx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 8) {
    half4 av, bv;
    for (int e = 0; e < 4; e++) {
      int k = k0 + 4 * (lane / 32) + e;
      av[e] = a[(ti + lane % 32) * N + k];
      bv[e] = b[k * N + tj + lane % 32];
    }
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

__global__ void gemm_bf16(const short* a, const short* b, float* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  floatx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 8) {
    short4v av, bv;
    for (int e = 0; e < 4; e++) {
      int k = k0 + 4 * (lane / 32) + e;
      av[e] = a[(ti + lane % 32) * N + k];
      bv[e] = b[k * N + tj + lane % 32];
    }
    acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

__global__ void gemm_i8(const int8_t* a, const int8_t* b, int* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 32, tj = blockIdx.x * 32;
  intx16 acc = {};
  for (int k0 = 0; k0 < N; k0 += 8) {
    unsigned av = 0, bv = 0;
    for (int e = 0; e < 4; e++) {
      int k = k0 + 4 * (lane / 32) + e;
      av |= (unsigned)(uint8_t)a[(ti + lane % 32) * N + k] << (8 * e);
      bv |= (unsigned)(uint8_t)b[k * N + tj + lane % 32] << (8 * e);
    }
    acc = __builtin_amdgcn_mfma_i32_32x32x8i8((int)av, (int)bv, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; r++) c[(ti + d_row(r, lane)) * N + tj + lane % 32] = acc[r];
}

// f64: 16x16 tiles; D[i][j] is in register pair r = i/4 of lane j + 16*(i%4).
__global__ void gemm_f64(const double* a, const double* b, double* c) {
  int lane = threadIdx.x, ti = blockIdx.y * 16, tj = blockIdx.x * 16;
  doublex4 acc = {};
  for (int k0 = 0; k0 < N; k0 += 4) {
    int k = k0 + lane / 16;
    acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[(ti + lane % 16) * N + k], b[k * N + tj + lane % 16], acc, 0, 0, 0);
  }
  for (int r = 0; r < 4; r++) c[(ti + 4 * r + lane / 16) * N + tj + lane % 16] = acc[r];
}

template <typename In, typename Out, typename Conv>
static void run(const char* what, void (*kernel)(const In*, const In*, Out*), int tile, Conv to_in, double tolerance,
                bool fractional) {
  std::vector<In> ha(N * N), hb(N * N);
  std::vector<double> ra(N * N), rb(N * N);
  unsigned seed = 12345;
  auto next = [&]() { return seed = seed * 1103515245u + 12345u; };
  for (int i = 0; i < N * N; i++) {
    ra[i] = fractional ? (int)(next() >> 16 & 0xffff) / 65536.0 - 0.5 : (int)(next() >> 16 & 15) - 8;
    rb[i] = fractional ? (int)(next() >> 16 & 0xffff) / 65536.0 - 0.5 : (int)(next() >> 16 & 15) - 8;
    ha[i] = to_in(ra[i]);
    hb[i] = to_in(rb[i]);
  }
  In *da, *db;
  Out* dc;
  HIP_CHECK(hipMalloc(&da, N * N * sizeof(In)));
  HIP_CHECK(hipMalloc(&db, N * N * sizeof(In)));
  HIP_CHECK(hipMalloc(&dc, N * N * sizeof(Out)));
  HIP_CHECK(hipMemcpy(da, ha.data(), N * N * sizeof(In), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, hb.data(), N * N * sizeof(In), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(kernel, dim3(N / tile, N / tile), dim3(64), 0, 0, da, db, dc);
  HIP_CHECK(hipGetLastError());
  std::vector<Out> hc(N * N);
  HIP_CHECK(hipMemcpy(hc.data(), dc, N * N * sizeof(Out), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double want = 0;
      for (int k = 0; k < N; k++) want += ra[i * N + k] * rb[k * N + j];
      double got = (double)hc[i * N + j];
      double err = fabs(got - want);
      if (tolerance == 0 ? err != 0 : err > tolerance * fmax(1.0, fabs(want)))
        fail(what, "C[%d][%d] = %.9g, want %.9g", i, j, got, want);
    }
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  pass(what);
}

static short to_bf16(double v) {
  float f = (float)v;
  unsigned u;
  memcpy(&u, &f, 4);
  return (short)(u >> 16);  // exact for the small integers used
}

int main() {
  run<float, float>("mfma f32 32x32x2 gemm 256", gemm_f32, 32, [](double v) { return (float)v; }, 0, false);
  run<_Float16, float>("mfma f16 32x32x8 gemm 256", gemm_f16, 32, [](double v) { return (_Float16)v; }, 0, false);
  run<short, float>("mfma bf16 32x32x8 gemm 256", gemm_bf16, 32, to_bf16, 0, false);
  run<int8_t, int>("mfma i8 32x32x8 gemm 256", gemm_i8, 32, [](double v) { return (int8_t)v; }, 0, false);
  run<double, double>("mfma f64 16x16x4 gemm 256", gemm_f64, 16, [](double v) { return v; }, 0, false);
  run<float, float>("mfma f32 gemm 256 fractional", gemm_f32, 32, [](double v) { return (float)v; }, 1e-4, true);
  return 0;
}
