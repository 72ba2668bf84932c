// Device math: sinf/cosf/expf/logf/sqrtf/rsqrtf/powf/fmaf and their double
// versions, half-precision arithmetic, 64-bit integer multiply/divide —
// each compared with a host reference within the HIP math library's
// documented ulp bounds.
#include "check.h"
#include <hip/hip_fp16.h>

#define N 4096

__global__ void fmath(const float* x, const float* y, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i], b = y[i];
  out[i * 8 + 0] = sinf(a);
  out[i * 8 + 1] = cosf(a);
  out[i * 8 + 2] = expf(b);
  out[i * 8 + 3] = logf(fabsf(a) + 0.001f);
  out[i * 8 + 4] = sqrtf(fabsf(a));
  out[i * 8 + 5] = rsqrtf(fabsf(a) + 0.5f);
  out[i * 8 + 6] = powf(fabsf(a) + 0.25f, b);
  out[i * 8 + 7] = fmaf(a, b, a / (b + 10.0f));
}

__global__ void dmath(const double* x, const double* y, double* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double a = x[i], b = y[i];
  out[i * 8 + 0] = sin(a);
  out[i * 8 + 1] = cos(a);
  out[i * 8 + 2] = exp(b);
  out[i * 8 + 3] = log(fabs(a) + 0.001);
  out[i * 8 + 4] = sqrt(fabs(a));
  out[i * 8 + 5] = rsqrt(fabs(a) + 0.5);
  out[i * 8 + 6] = pow(fabs(a) + 0.25, b);
  out[i * 8 + 7] = fma(a, b, a / (b + 10.0));
}

__global__ void hmath(const float* x, const float* y, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __half a = __float2half(x[i] * 0.01f), b = __float2half(y[i] * 0.1f);
  out[i * 3 + 0] = __half2float(__hadd(a, b));
  out[i * 3 + 1] = __half2float(__hmul(a, b));
  out[i * 3 + 2] = __half2float(__hfma(a, b, a));
}

__global__ void imath(const long long* x, const long long* y, long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long a = x[i], b = y[i];
  unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b | 1;
  out[i * 4 + 0] = a * b;
  out[i * 4 + 1] = a / (b == 0 ? 1 : b);
  out[i * 4 + 2] = a % (b == 0 ? 1 : b);
  out[i * 4 + 3] = (long long)(ua / ub);
}

// Bounds (ulp) from the HIP math library documentation, except logf: LLVM 21 (ROCm 6.4)
// contracts the last step of its log2(x)*ln2 expansion (r = y*C; e = fma(y,C,-r) +
// y*C_lo; r + e) into fma(y, C, e), which counts the rounding error of y*C twice. The
// instructions it emits give 2 ulp for e.g. logf(49.7967186) with a correctly rounded
// v_log_f32 (checked bit by bit on the CPU), so the compiled code, not the GPU, sets
// the bound; LLVM 15 (ROCm 5.2) stays within 1.
static const int f_ulp[8] = {2, 2, 2, 2, 1, 2, 8, 1};
static const char* names[8] = {"sin", "cos", "exp", "log", "sqrt", "rsqrt", "pow", "fma"};
static const int d_ulp[8] = {2, 2, 2, 1, 1, 2, 2, 1};

int main() {
  float hx[N], hy[N];
  double dx[N], dy[N];
  for (int i = 0; i < N; i++) {
    hx[i] = (float)((i * 7919) % 20000 - 10000) * 0.00731f;
    hy[i] = (float)((i * 104729) % 4000 - 2000) * 0.00917f;
    dx[i] = hx[i];
    dy[i] = hy[i];
  }
  float *gx, *gy, *gout;
  HIP_CHECK(hipMalloc(&gx, N * 4));
  HIP_CHECK(hipMalloc(&gy, N * 4));
  HIP_CHECK(hipMalloc(&gout, N * 8 * 4));
  HIP_CHECK(hipMemcpy(gx, hx, N * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(gy, hy, N * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(fmath, dim3(N / 256), dim3(256), 0, 0, gx, gy, gout);
  static float fo[N * 8];
  HIP_CHECK(hipMemcpy(fo, gout, N * 8 * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    double a = hx[i], b = hy[i];
    // The device computes these sums in float: so does the reference.
    float l = fabsf(hx[i]) + 0.001f, r = fabsf(hx[i]) + 0.5f, p = fabsf(hx[i]) + 0.25f;
    double ref[8] = {sin(a), cos(a), exp(b), log((double)l), sqrt(fabs(a)), 1.0 / sqrt((double)r),
                     pow((double)p, b), 0};
    ref[7] = fmaf(hx[i], hy[i], hx[i] / (hy[i] + 10.0f));
    for (int k = 0; k < 8; k++) {
      float r = (float)ref[k];
      int64_t d = ulp_diff_f32(fo[i * 8 + k], r);
      // Results that round to 0 or denormals compare absolutely.
      if (d > f_ulp[k] && fabs(fo[i * 8 + k] - ref[k]) > 1e-30)
        fail("math_float", "%sf(%.9g, %.9g) = %.9g, want %.9g (%lld ulp)", names[k], a, b, fo[i * 8 + k], ref[k], (long long)d);
    }
  }
  pass("math_float");

  double *ga, *gb, *gd;
  HIP_CHECK(hipMalloc(&ga, N * 8));
  HIP_CHECK(hipMalloc(&gb, N * 8));
  HIP_CHECK(hipMalloc(&gd, N * 8 * 8));
  HIP_CHECK(hipMemcpy(ga, dx, N * 8, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(gb, dy, N * 8, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(dmath, dim3(N / 256), dim3(256), 0, 0, ga, gb, gd);
  static double dout[N * 8];
  HIP_CHECK(hipMemcpy(dout, gd, N * 8 * 8, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    double a = dx[i], b = dy[i];
    long double la = a, lb = b;
    // The device computes these sums in double: so does the reference.
    long double l = fabs(a) + 0.001, r = fabs(a) + 0.5, p = fabs(a) + 0.25;
    double ref[8] = {(double)sinl(la), (double)cosl(la), (double)expl(lb), (double)logl(l),
                     sqrt(fabs(a)), (double)(1.0L / sqrtl(r)), (double)powl(p, lb), fma(a, b, a / (b + 10.0))};
    for (int k = 0; k < 8; k++) {
      int64_t d = ulp_diff_f64(dout[i * 8 + k], ref[k]);
      if (d > d_ulp[k]) fail("math_double", "%s(%.17g, %.17g) = %.17g, want %.17g (%lld ulp)", names[k], a, b, dout[i * 8 + k], ref[k], (long long)d);
    }
  }
  pass("math_double");

  hipLaunchKernelGGL(hmath, dim3(N / 256), dim3(256), 0, 0, gx, gy, gout);
  HIP_CHECK(hipMemcpy(fo, gout, N * 3 * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    __half a = __float2half(hx[i] * 0.01f), b = __float2half(hy[i] * 0.1f);
    float fa = __half2float(a), fb = __half2float(b);
    float ref[3] = {__half2float(__float2half(fa + fb)), __half2float(__float2half(fa * fb)),
                    __half2float(__float2half(fmaf(fa, fb, fa)))};
    for (int k = 0; k < 3; k++)
      if (fo[i * 3 + k] != ref[k]) fail("math_half", "op %d at %d: %g, want %g", k, i, fo[i * 3 + k], ref[k]);
  }
  pass("math_half");

  long long ix[N], iy[N];
  for (int i = 0; i < N; i++) {
    ix[i] = (long long)(i * 2654435761ull) * 977 - (1ll << 40);
    iy[i] = (long long)((i % 500) - 250) * 123457;
  }
  long long *gix, *giy, *gio;
  HIP_CHECK(hipMalloc(&gix, N * 8));
  HIP_CHECK(hipMalloc(&giy, N * 8));
  HIP_CHECK(hipMalloc(&gio, N * 4 * 8));
  HIP_CHECK(hipMemcpy(gix, ix, N * 8, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(giy, iy, N * 8, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(imath, dim3(N / 256), dim3(256), 0, 0, gix, giy, gio);
  static long long io[N * 4];
  HIP_CHECK(hipMemcpy(io, gio, N * 4 * 8, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    long long a = ix[i], b = iy[i];
    unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b | 1;
    long long ref[4] = {(long long)((unsigned long long)a * (unsigned long long)b), a / (b == 0 ? 1 : b),
                        a % (b == 0 ? 1 : b), (long long)(ua / ub)};
    for (int k = 0; k < 4; k++)
      if (io[i * 4 + k] != ref[k]) fail("math_int64", "op %d at %d: %lld, want %lld", k, i, io[i * 4 + k], ref[k]);
  }
  pass("math_int64");
  return 0;
}
