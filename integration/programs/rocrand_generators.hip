// rocRAND and hipRAND on the simulated GPU, compared element by element with the same
// library code run on the host.
//
// ROCm 5.2/5.3's rocRAND has no host generator (hiprandCreateGeneratorHost is declared
// but rocRAND's backend cannot create one), so the reference is the library's device
// API (rocrand_kernel.h) compiled for the host as well: FQUALIFIERS, which the headers
// let a program define, adds __host__ to every device function.
//
// Part 1, device API: XORWOW, MRG32K3A, Philox4x32-10 and Sobol32 states, one per
//   thread, draw uint, uniform (float, double), normal (float, double), log-normal and
//   Poisson (lambda 4 and 500) numbers on the GPU and on the host.
// Part 2, the library's host API through hipRAND (hiprandGenerate*): XORWOW, MRG32K3A,
//   Philox4x32-10 and Sobol32 outputs are recomputed on the host from the library's own
//   engine order (engines per thread and stride for XORWOW/MRG32K3A, one sequence for
//   Philox and Sobol32) and compared element by element; MTGP32 has no host-side
//   engine, so its output is checked for reproducibility and for its moments.
// Integers must be identical; floats identical for uniform and within a small relative
// tolerance where the device math library (log, sin, cos, exp) rounds differently from
// the host's libm (normal, log-normal: 2e-6 for float, 1e-9 for double). Sobol's normals
// go through erfcinv, which rocRAND computes with ROCm's device library on the GPU and
// with its own, less accurate fallback on the host, so its float tolerance is 1e-3.
#define FQUALIFIERS __forceinline__ __host__ __device__
#include "check.h"
#include <hiprand/hiprand.h>
#include <rocrand/rocrand_kernel.h>
#include <rocrand/rocrand_sobol32_precomputed.h>
#include <rocrand/rocrand_version.h>
#include <vector>

// The rocRANDs after ROCm 5.2's 2.10.9 (trixie's 2.10.17, sid's 3.3) renamed the
// direction-vector table and made the MRG distribution helpers templates over the engine.
#if ROCRAND_VERSION > 201009
#define SOBOL32_DIRECTIONS rocrand_h_sobol32_direction_vectors
#define MRG32K3A_UNIFORM(v) mrg_uniform_distribution<rocrand_state_mrg32k3a>(v)
#define MRG32K3A_NORMAL2(x, y) mrg_normal_distribution2<rocrand_state_mrg32k3a>(x, y)
#else
#define SOBOL32_DIRECTIONS h_sobol32_direction_vectors
#define MRG32K3A_UNIFORM(v) mrg_uniform_distribution(v)
#define MRG32K3A_NORMAL2(x, y) mrg_normal_distribution2(x, y)
#endif

#define RAND_CHECK(x)                                                              \
  do {                                                                             \
    hiprandStatus_t st_ = (x);                                                     \
    if (st_ != HIPRAND_STATUS_SUCCESS) fail(#x, "status %d", (int)st_);            \
  } while (0)

constexpr int THREADS = 2048, PER = 6;
constexpr unsigned long long SEED = 0x1234abcd5678ull;

struct Draws {
  unsigned u[PER], p4[PER], p500[PER];
  float uf[PER], nf[PER], ln[PER];
  double ud[PER], nd[PER];
};

__host__ __device__ inline void init(rocrand_state_xorwow* s, int t, const unsigned*) { rocrand_init(SEED, t, 0, s); }
__host__ __device__ inline void init(rocrand_state_mrg32k3a* s, int t, const unsigned*) { rocrand_init(SEED, t, 0, s); }
__host__ __device__ inline void init(rocrand_state_philox4x32_10* s, int t, const unsigned*) { rocrand_init(SEED, t, 0, s); }
// Sobol32: thread t walks dimension t % 64 from point 16 * t.
__host__ __device__ inline void init(rocrand_state_sobol32* s, int t, const unsigned* dirs) {
  rocrand_init(dirs + 32 * (t % 64), 16 * t, s);
}

template <class S>
__host__ __device__ void draw(int t, const unsigned* dirs, Draws* out) {
  S s;
  init(&s, t, dirs);
  Draws& d = out[t];
  for (int i = 0; i < PER; i++) {
    d.u[i] = rocrand(&s);
    d.uf[i] = rocrand_uniform(&s);
    d.ud[i] = rocrand_uniform_double(&s);
    d.nf[i] = rocrand_normal(&s);
    d.nd[i] = rocrand_normal_double(&s);
    d.ln[i] = rocrand_log_normal(&s, 0.5f, 0.25f);
    d.p4[i] = rocrand_poisson(&s, 4.0);
    d.p500[i] = rocrand_poisson(&s, 500.0);
  }
}

template <class S>
__global__ void draw_kernel(const unsigned* dirs, Draws* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < THREADS) draw<S>(t, dirs, out);
}

static bool close(double got, double want, double rel) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  return fabs(got - want) <= rel * fmax(1.0, fabs(want));
}

// `normal_tol`: relative tolerance of float normal and log-normal draws.
template <class S>
static void device_api(const char* what, const unsigned* d_dirs, double normal_tol = 2e-6) {
  Draws* d;
  HIP_CHECK(hipMalloc(&d, THREADS * sizeof(Draws)));
  hipLaunchKernelGGL(draw_kernel<S>, dim3(THREADS / 128), dim3(128), 0, 0, d_dirs, d);
  HIP_CHECK(hipGetLastError());
  std::vector<Draws> got(THREADS), want(THREADS);
  HIP_CHECK(hipMemcpy(got.data(), d, THREADS * sizeof(Draws), hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(d));
  for (int t = 0; t < THREADS; t++) draw<S>(t, SOBOL32_DIRECTIONS, want.data());
  for (int t = 0; t < THREADS; t++)
    for (int i = 0; i < PER; i++) {
      const Draws &g = got[t], &w = want[t];
      if (g.u[i] != w.u[i]) fail(what, "thread %d draw %d: uint %u, host %u", t, i, g.u[i], w.u[i]);
      if (g.uf[i] != w.uf[i]) fail(what, "thread %d draw %d: uniform %.9g, host %.9g", t, i, g.uf[i], w.uf[i]);
      if (g.ud[i] != w.ud[i]) fail(what, "thread %d draw %d: uniform double %.17g, host %.17g", t, i, g.ud[i], w.ud[i]);
      if (!close(g.nf[i], w.nf[i], normal_tol)) fail(what, "thread %d draw %d: normal %.9g, host %.9g", t, i, g.nf[i], w.nf[i]);
      if (!close(g.nd[i], w.nd[i], 1e-9)) fail(what, "thread %d draw %d: normal double %.17g, host %.17g", t, i, g.nd[i], w.nd[i]);
      if (!close(g.ln[i], w.ln[i], normal_tol)) fail(what, "thread %d draw %d: log-normal %.9g, host %.9g", t, i, g.ln[i], w.ln[i]);
      if (g.p4[i] != w.p4[i] || g.p500[i] != w.p500[i])
        fail(what, "thread %d draw %d: poisson %u/%u, host %u/%u", t, i, g.p4[i], g.p500[i], w.p4[i], w.p500[i]);
    }
  pass(what);
}

// ---- Part 2: the library's generators --------------------------------------------

constexpr size_t N = 1 << 18;

template <class T>
static std::vector<T> generate(hiprandRngType_t type, int kind) {
  hiprandGenerator_t g;
  RAND_CHECK(hiprandCreateGenerator(&g, type));
  if (type != HIPRAND_RNG_QUASI_SOBOL32) RAND_CHECK(hiprandSetPseudoRandomGeneratorSeed(g, SEED));
  T* d;
  HIP_CHECK(hipMalloc(&d, N * sizeof(T)));
  switch (kind) {
    case 0: RAND_CHECK(hiprandGenerate(g, (unsigned*)d, N)); break;
    case 1: RAND_CHECK(hiprandGenerateUniform(g, (float*)d, N)); break;
    case 2: RAND_CHECK(hiprandGenerateNormal(g, (float*)d, N, 0.0f, 1.0f)); break;
    case 3: RAND_CHECK(hiprandGenerateLogNormal(g, (float*)d, N, 0.0f, 1.0f)); break;
    case 4: RAND_CHECK(hiprandGeneratePoisson(g, (unsigned*)d, N, 5.0)); break;
  }
  std::vector<T> h(N);
  HIP_CHECK(hipMemcpy(h.data(), d, N * sizeof(T), hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(d));
  RAND_CHECK(hiprandDestroyGenerator(g));
  return h;
}

// The library's XORWOW and MRG32K3A generators run 512 x 256 engines, engine e being
// subsequence e; output group v (of `width` values) is drawn by engine v % 131072 as its
// (v / 131072)-th group. The host replays engines 0..63 and a spread of others.
template <class S, class T, class Dist>
static void check_engines(const char* what, const std::vector<T>& got, int width, Dist dist) {
  const unsigned engines = 512 * 256;
  for (unsigned e = 0; e < engines; e += (e < 64 ? 1 : 4099)) {
    S s;
    rocrand_init(SEED, e, 0, &s);
    for (size_t v = e; v * width < N; v += engines) {
      T out[2];
      dist(&s, out);
      for (int o = 0; o < width; o++) {
        double g = got[v * width + o], w = out[o];
        bool same = std::is_integral<T>::value || width == 1 ? got[v * width + o] == out[o] : close(g, w, 2e-6);
        if (!same) fail(what, "element %zu: %.9g, host %.9g", v * width + o, g, w);
      }
    }
  }
  pass(what);
}

static void moments(const char* what, const std::vector<float>& v, double mean, double var, double tol) {
  double s = 0, s2 = 0;
  for (float x : v) s += x, s2 += (double)x * x;
  double m = s / v.size(), vv = s2 / v.size() - m * m;
  if (fabs(m - mean) > tol || fabs(vv - var) > tol * 4 * fmax(1.0, var))
    fail(what, "mean %.5f (want %.5f), variance %.5f (want %.5f)", m, mean, vv, var);
}

static void library_generators() {
  using namespace rocrand_device::detail;
  // Philox: one sequence (subsequence 0) consumed in order.
  {
    auto u = generate<unsigned>(HIPRAND_RNG_PSEUDO_PHILOX4_32_10, 0);
    auto f = generate<float>(HIPRAND_RNG_PSEUDO_PHILOX4_32_10, 1);
    auto n = generate<float>(HIPRAND_RNG_PSEUDO_PHILOX4_32_10, 2);
    rocrand_state_philox4x32_10 s;
    rocrand_init(SEED, 0, 0, &s);
    for (size_t i = 0; i < N; i++) {
      unsigned want = rocrand(&s);
      if (u[i] != want) fail("hiprand philox uint", "element %zu: %u, host %u", i, u[i], want);
      if (f[i] != uniform_distribution(want)) fail("hiprand philox uniform", "element %zu", i);
    }
    rocrand_init(SEED, 0, 0, &s);
    for (size_t i = 0; i < N; i += 2) {
      unsigned x = rocrand(&s), y = rocrand(&s);
      float2 w = normal_distribution2(x, y);
      if (!close(n[i], w.x, 2e-6) || !close(n[i + 1], w.y, 2e-6))
        fail("hiprand philox normal", "element %zu: %.9g %.9g, host %.9g %.9g", i, n[i], n[i + 1], w.x, w.y);
    }
    pass("hiprand philox4x32_10 uint/uniform/normal");
  }
  // Sobol32, one dimension: the points in order.
  {
    auto u = generate<unsigned>(HIPRAND_RNG_QUASI_SOBOL32, 0);
    auto f = generate<float>(HIPRAND_RNG_QUASI_SOBOL32, 1);
    rocrand_state_sobol32 s;
    rocrand_init(SOBOL32_DIRECTIONS, 0, &s);
    for (size_t i = 0; i < N; i++) {
      unsigned want = rocrand(&s);
      if (u[i] != want) fail("hiprand sobol32 uint", "element %zu: %u, host %u", i, u[i], want);
      if (f[i] != uniform_distribution(want)) fail("hiprand sobol32 uniform", "element %zu", i);
    }
    pass("hiprand sobol32 uint/uniform");
  }
  {
    check_engines<rocrand_state_xorwow>("hiprand xorwow uint", generate<unsigned>(HIPRAND_RNG_PSEUDO_XORWOW, 0), 1,
                                        [](rocrand_state_xorwow* s, unsigned* o) { o[0] = rocrand(s); });
    check_engines<rocrand_state_xorwow>("hiprand xorwow uniform", generate<float>(HIPRAND_RNG_PSEUDO_XORWOW, 1), 1,
                                        [](rocrand_state_xorwow* s, float* o) { o[0] = uniform_distribution(rocrand(s)); });
    check_engines<rocrand_state_xorwow>("hiprand xorwow normal", generate<float>(HIPRAND_RNG_PSEUDO_XORWOW, 2), 2,
                                        [](rocrand_state_xorwow* s, float* o) {
                                          unsigned x = rocrand(s), y = rocrand(s);
                                          float2 v = normal_distribution2(x, y);
                                          o[0] = v.x, o[1] = v.y;
                                        });
  }
  {
    check_engines<rocrand_state_mrg32k3a>("hiprand mrg32k3a uniform", generate<float>(HIPRAND_RNG_PSEUDO_MRG32K3A, 1), 1,
                                          [](rocrand_state_mrg32k3a* s, float* o) { o[0] = MRG32K3A_UNIFORM(s->next()); });
    check_engines<rocrand_state_mrg32k3a>("hiprand mrg32k3a normal", generate<float>(HIPRAND_RNG_PSEUDO_MRG32K3A, 2), 2,
                                          [](rocrand_state_mrg32k3a* s, float* o) {
                                            unsigned x = s->next(), y = s->next();
                                            float2 v = MRG32K3A_NORMAL2(x, y);
                                            o[0] = v.x, o[1] = v.y;
                                          });
  }
  // MTGP32 (no host engine) and the Poisson / log-normal outputs of every generator:
  // reproducible, and with the distribution's moments.
  for (auto type : {HIPRAND_RNG_PSEUDO_MTGP32, HIPRAND_RNG_PSEUDO_XORWOW, HIPRAND_RNG_PSEUDO_MRG32K3A,
                    HIPRAND_RNG_PSEUDO_PHILOX4_32_10}) {
    auto a = generate<float>(type, 1), b = generate<float>(type, 1);
    if (memcmp(a.data(), b.data(), N * 4) != 0) fail("hiprand reproducible", "generator %d", (int)type);
    moments("hiprand uniform moments", a, 0.5, 1.0 / 12, 0.005);
    moments("hiprand normal moments", generate<float>(type, 2), 0.0, 1.0, 0.01);
    double e = exp(0.5), ln_var = (exp(1.0) - 1) * exp(1.0);
    moments("hiprand log-normal moments", generate<float>(type, 3), e, ln_var, 0.05);
    auto p = generate<unsigned>(type, 4);
    std::vector<float> pf(p.begin(), p.end());
    moments("hiprand poisson moments", pf, 5.0, 5.0, 0.05);
  }
  pass("hiprand mtgp32/xorwow/mrg32k3a/philox reproducible with the right moments");
}

int main() {
  unsigned* d_dirs;
  HIP_CHECK(hipMalloc(&d_dirs, 64 * 32 * 4));
  HIP_CHECK(hipMemcpy(d_dirs, SOBOL32_DIRECTIONS, 64 * 32 * 4, hipMemcpyHostToDevice));
  device_api<rocrand_state_xorwow>("rocrand device api xorwow", d_dirs);
  device_api<rocrand_state_mrg32k3a>("rocrand device api mrg32k3a", d_dirs);
  device_api<rocrand_state_philox4x32_10>("rocrand device api philox4x32_10", d_dirs);
  // Sobol's normals invert the normal CDF (erfcinv). ROCm's device erfcinvf matches a
  // series evaluation to float precision, but rocRAND's host fallback is off by up to
  // ~4e-4 near erfcinv(1) = 0, hence the wider tolerance for this generator only.
  device_api<rocrand_state_sobol32>("rocrand device api sobol32", d_dirs, 1e-3);
  library_generators();
  return 0;
}
