// Texture sampling (issue 18): 2D float textures with every address mode, point and linear
// filtering, normalized and unnormalized coordinates; a uchar4 texture read as normalized
// floats; a 3D texture (point); a layered texture; tex1Dfetch on linear memory; a surface written
// then read. Results are compared with a CPU implementation of the documented filter
// (bilinear weights may be of reduced precision on the hardware: a tolerance of 1/256 of
// the texture's value range).
#include "check.h"
#include <cmath>
#include <vector>

enum Mode { WRAP, CLAMP, MIRROR, BORDER };

static int map_index(int i, int n, Mode m, bool* border) {
  *border = false;
  switch (m) {
    case WRAP: return ((i % n) + n) % n;
    case MIRROR: {
      int k = ((i % (2 * n)) + 2 * n) % (2 * n);
      return k >= n ? 2 * n - 1 - k : k;
    }
    case CLAMP: return i < 0 ? 0 : i >= n ? n - 1 : i;
    default:
      *border = i < 0 || i >= n;
      return *border ? 0 : i;
  }
}

// The documented filter over a w x h float image (border color 0).
static float reference_2d(const std::vector<float>& img, int w, int h, float x, float y, Mode m, bool linear,
                          bool normalized) {
  float u = normalized ? x * w : x, v = normalized ? y * h : y;
  auto at = [&](int i, int j) {
    bool bi, bj;
    int a = map_index(i, w, m, &bi), b = map_index(j, h, m, &bj);
    return (bi || bj) ? 0.0f : img[b * w + a];
  };
  if (!linear) return at((int)floorf(u), (int)floorf(v));
  u -= 0.5f;
  v -= 0.5f;
  int i0 = (int)floorf(u), j0 = (int)floorf(v);
  float a = u - i0, b = v - j0;
  return (1 - a) * (1 - b) * at(i0, j0) + a * (1 - b) * at(i0 + 1, j0) + (1 - a) * b * at(i0, j0 + 1) +
         a * b * at(i0 + 1, j0 + 1);
}

__global__ void sample_2d(hipTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample_uchar4(hipTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}

__global__ void sample_3d(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

__global__ void sample_layered(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, (int)at[i].z);
}

__global__ void fetch_1d(hipTextureObject_t t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i);
}

__global__ void surface_roundtrip(hipSurfaceObject_t s, float* out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x >= w || y >= h) return;
  surf2Dwrite(x * 100.0f + y, s, x * (int)sizeof(float), y);
  __syncthreads();
  float v;
  surf2Dread(&v, s, ((x + 1) % w) * (int)sizeof(float), y);
  out[y * w + x] = v;
}

static hipTextureObject_t texture_of(hipArray_t arr, Mode m, bool linear, bool normalized, bool norm_float = false) {
  hipResourceDesc rd = {};
  rd.resType = hipResourceTypeArray;
  rd.res.array.array = arr;
  hipTextureDesc td = {};
  hipTextureAddressMode am = m == WRAP ? hipAddressModeWrap : m == CLAMP ? hipAddressModeClamp
                           : m == MIRROR ? hipAddressModeMirror : hipAddressModeBorder;
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = am;
  td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
  td.readMode = norm_float ? hipReadModeNormalizedFloat : hipReadModeElementType;
  td.normalizedCoords = normalized;
  hipTextureObject_t t;
  HIP_CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
  return t;
}

static void close_enough(const char* what, int i, float got, float want, float range) {
  if (!(fabsf(got - want) <= range / 256 + 1e-4f))
    fail(what, "sample %d: %.6f, expected %.6f", i, got, want);
}

int main() {
  const int w = 13, h = 7;
  std::vector<float> img(w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) img[y * w + x] = x * 1.5f + y * 10 - 3;
  const float range = 12 * 1.5f + 60;
  hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
  hipArray_t arr;
  HIP_CHECK(hipMallocArray(&arr, &fd, w, h));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, img.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));

  // Coordinates from before the first texel to past the last one, off the texel centres.
  std::vector<float2> coords;
  for (float y = -2.3f; y < h + 2.5f; y += 0.61f)
    for (float x = -3.1f; x < w + 3.2f; x += 0.37f) coords.push_back(make_float2(x, y));
  const int n = (int)coords.size();
  float2* d_at;
  float2* d_norm;
  float* d_out;
  HIP_CHECK(hipMalloc(&d_at, n * sizeof(float2)));
  HIP_CHECK(hipMalloc(&d_norm, n * sizeof(float2)));
  HIP_CHECK(hipMalloc(&d_out, n * sizeof(float)));
  std::vector<float2> norm(n);
  for (int i = 0; i < n; i++) norm[i] = make_float2(coords[i].x / w, coords[i].y / h);
  HIP_CHECK(hipMemcpy(d_at, coords.data(), n * sizeof(float2), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_norm, norm.data(), n * sizeof(float2), hipMemcpyHostToDevice));
  std::vector<float> out(n);
  const char* names[] = {"wrap", "clamp", "mirror", "border"};
  for (int m = WRAP; m <= BORDER; m++)
    for (int linear = 0; linear < 2; linear++)
      for (int normalized = 0; normalized < 2; normalized++) {
        if (!normalized && (m == WRAP || m == MIRROR)) continue;  // needs normalized coordinates
        hipTextureObject_t t = texture_of(arr, (Mode)m, linear, normalized);
        hipLaunchKernelGGL(sample_2d, dim3((n + 255) / 256), dim3(256), 0, 0, t, normalized ? d_norm : d_at, d_out, n);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
        char what[96];
        snprintf(what, sizeof what, "2D float, %s, %s, %s", names[m], linear ? "linear" : "point",
                 normalized ? "normalized" : "unnormalized");
        for (int i = 0; i < n; i++) {
          float x = normalized ? norm[i].x : coords[i].x, y = normalized ? norm[i].y : coords[i].y;
          close_enough(what, i, out[i], reference_2d(img, w, h, x, y, (Mode)m, linear, normalized), range);
        }
        HIP_CHECK(hipDestroyTextureObject(t));
      }
  pass("2D float textures: every address mode, point and linear, normalized and not");

  // uchar4 read as normalized floats, in every mode.
  std::vector<uchar4> rgba(w * h);
  for (int i = 0; i < w * h; i++) rgba[i] = make_uchar4(i * 2, 255 - i, (i * 37) & 255, 128);
  hipChannelFormatDesc cd4 = hipCreateChannelDesc<uchar4>();
  hipArray_t arr4;
  HIP_CHECK(hipMallocArray(&arr4, &cd4, w, h));
  HIP_CHECK(hipMemcpy2DToArray(arr4, 0, 0, rgba.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
  float4* d_out4;
  HIP_CHECK(hipMalloc(&d_out4, n * sizeof(float4)));
  std::vector<float4> out4(n);
  // HIP 5.2 creates a uchar4 texture read as normalized floats with an SNORM8 descriptor
  // (its T# says number format 1), so the hardware reads the bytes as signed; HIP 6 says
  // UNORM8. The reference follows the descriptor the runtime wrote.
  const bool snorm = HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR <= 2;
  auto normalized_byte = [&](unsigned char b) {
    return snorm ? fmaxf((signed char)b / 127.0f, -1.0f) : b / 255.0f;
  };
  std::vector<float> chans[4];
  for (int c = 0; c < 4; c++) {
    chans[c].resize(w * h);
    for (int i = 0; i < w * h; i++)
      chans[c][i] = normalized_byte(c == 0 ? rgba[i].x : c == 1 ? rgba[i].y : c == 2 ? rgba[i].z : rgba[i].w);
  }
  for (int m = WRAP; m <= BORDER; m++)
    for (int linear = 0; linear < 2; linear++)
      for (int normalized = 0; normalized < 2; normalized++) {
        if (!normalized && (m == WRAP || m == MIRROR)) continue;
        hipTextureObject_t t4 = texture_of(arr4, (Mode)m, linear, normalized, true);
        hipLaunchKernelGGL(sample_uchar4, dim3((n + 255) / 256), dim3(256), 0, 0, t4, normalized ? d_norm : d_at, d_out4, n);
        HIP_CHECK(hipGetLastError());
        HIP_CHECK(hipMemcpy(out4.data(), d_out4, n * sizeof(float4), hipMemcpyDeviceToHost));
        char what[96];
        snprintf(what, sizeof what, "uchar4 as normalized float, %s, %s, %s", names[m], linear ? "linear" : "point",
                 normalized ? "normalized" : "unnormalized");
        for (int c = 0; c < 4; c++)
          for (int i = 0; i < n; i++) {
            float got = c == 0 ? out4[i].x : c == 1 ? out4[i].y : c == 2 ? out4[i].z : out4[i].w;
            float x = normalized ? norm[i].x : coords[i].x, y = normalized ? norm[i].y : coords[i].y;
            close_enough(what, i, got, reference_2d(chans[c], w, h, x, y, (Mode)m, linear, normalized), 2.0f);
          }
        HIP_CHECK(hipDestroyTextureObject(t4));
      }
  pass("uchar4 textures read as normalized floats: every address mode, point and linear, normalized and not");

  // 3D: point sampling, normalized, clamped (HIP 6 refuses linear filtering of 3D images
  // on gfx90a: "doesn't support 3D linear filter").
  const int X = 5, Y = 4, Z = 3;
  std::vector<float> vol(X * Y * Z);
  for (int i = 0; i < X * Y * Z; i++) vol[i] = (float)(i * 7 % 23);
  hipArray_t arr3;
  HIP_CHECK(hipMalloc3DArray(&arr3, &fd, make_hipExtent(X, Y, Z), 0));
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(vol.data(), X * sizeof(float), X, Y);
  p.dstArray = arr3;
  p.extent = make_hipExtent(X, Y, Z);
  p.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&p));
  hipTextureObject_t t3 = texture_of(arr3, CLAMP, false, true);
  std::vector<float4> c3;
  for (float z = -0.2f; z < 1.2f; z += 0.13f)
    for (float y = -0.1f; y < 1.1f; y += 0.21f)
      for (float x = -0.1f; x < 1.1f; x += 0.17f) c3.push_back(make_float4(x, y, z, 0));
  const int n3 = (int)c3.size();
  float4* d_c3;
  HIP_CHECK(hipMalloc(&d_c3, n3 * sizeof(float4)));
  HIP_CHECK(hipMemcpy(d_c3, c3.data(), n3 * sizeof(float4), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(sample_3d, dim3((n3 + 255) / 256), dim3(256), 0, 0, t3, d_c3, d_out, n3);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), d_out, n3 * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n3; i++) {
    bool unused;
    int xi = map_index((int)floorf(c3[i].x * X), X, CLAMP, &unused);
    int yi = map_index((int)floorf(c3[i].y * Y), Y, CLAMP, &unused);
    int zi = map_index((int)floorf(c3[i].z * Z), Z, CLAMP, &unused);
    float want = vol[(zi * Y + yi) * X + xi];
    if (out[i] != want) fail("3D texture", "sample %d: %f, expected %f", i, out[i], want);
  }
  pass("3D texture, point sampling");

  // Layered 2D: point sampling of each layer.
  const int L = 3;
  std::vector<float> layers(w * h * L);
  for (int i = 0; i < w * h * L; i++) layers[i] = i * 0.5f;
  hipArray_t arrl;
  HIP_CHECK(hipMalloc3DArray(&arrl, &fd, make_hipExtent(w, h, L), hipArrayLayered));
  hipMemcpy3DParms pl = {};
  pl.srcPtr = make_hipPitchedPtr(layers.data(), w * sizeof(float), w, h);
  pl.dstArray = arrl;
  pl.extent = make_hipExtent(w, h, L);
  pl.kind = hipMemcpyHostToDevice;
  HIP_CHECK(hipMemcpy3D(&pl));
  hipTextureObject_t tl = texture_of(arrl, CLAMP, false, false);
  std::vector<float4> cl;
  for (int l = 0; l < L; l++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) cl.push_back(make_float4(x + 0.5f, y + 0.5f, (float)l, 0));
  const int nl = (int)cl.size();
  float4* d_cl;
  HIP_CHECK(hipMalloc(&d_cl, nl * sizeof(float4)));
  HIP_CHECK(hipMemcpy(d_cl, cl.data(), nl * sizeof(float4), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(sample_layered, dim3((nl + 255) / 256), dim3(256), 0, 0, tl, d_cl, d_out, nl);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), d_out, nl * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < nl; i++)
    if (out[i] != layers[i]) fail("layered texture", "texel %d: %f, expected %f", i, out[i], layers[i]);
  pass("layered 2D texture");

  // tex1Dfetch on linear device memory.
  const int m1 = 1000;
  std::vector<int> lin(m1);
  for (int i = 0; i < m1; i++) lin[i] = i * i - 7;
  int *d_lin, *d_fetched;
  HIP_CHECK(hipMalloc(&d_lin, m1 * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_fetched, m1 * sizeof(int)));
  HIP_CHECK(hipMemcpy(d_lin, lin.data(), m1 * sizeof(int), hipMemcpyHostToDevice));
  hipResourceDesc rl = {};
  rl.resType = hipResourceTypeLinear;
  rl.res.linear.devPtr = d_lin;
  rl.res.linear.desc = hipCreateChannelDesc<int>();
  rl.res.linear.sizeInBytes = m1 * sizeof(int);
  hipTextureDesc tdl = {};
  tdl.readMode = hipReadModeElementType;
  hipTextureObject_t t1;
  HIP_CHECK(hipCreateTextureObject(&t1, &rl, &tdl, nullptr));
  hipLaunchKernelGGL(fetch_1d, dim3((m1 + 255) / 256), dim3(256), 0, 0, t1, d_fetched, m1);
  HIP_CHECK(hipGetLastError());
  std::vector<int> fetched(m1);
  HIP_CHECK(hipMemcpy(fetched.data(), d_fetched, m1 * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < m1; i++)
    if (fetched[i] != lin[i]) fail("tex1Dfetch", "element %d: %d, expected %d", i, fetched[i], lin[i]);
  pass("tex1Dfetch on linear memory");

  // Surface: each thread writes its texel, then reads its right neighbour's.
  hipArray_t arrs;
  HIP_CHECK(hipMallocArray(&arrs, &fd, 32, 8));
  hipResourceDesc rs = {};
  rs.resType = hipResourceTypeArray;
  rs.res.array.array = arrs;
  hipSurfaceObject_t so;
  HIP_CHECK(hipCreateSurfaceObject(&so, &rs));
  hipLaunchKernelGGL(surface_roundtrip, dim3(8), dim3(32), 0, 0, so, d_out, 32, 8);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(out.data(), d_out, 32 * 8 * sizeof(float), hipMemcpyDeviceToHost));
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < 32; x++) {
      float want = ((x + 1) % 32) * 100.0f + y;
      if (out[y * 32 + x] != want) fail("surface", "(%d, %d): %f, expected %f", x, y, out[y * 32 + x], want);
    }
  pass("surface written then read");
  return 0;
}
