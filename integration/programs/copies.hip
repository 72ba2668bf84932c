// hipMemcpy between pageable host buffers and the device, many rounds with a fresh
// host buffer each time: ROCR pins each pageable buffer at a GPU address the previous
// pin just freed, so a copy engine that kept a stale translation would copy the
// previous buffer's contents (a bug this program caught). Also a 2-D hipMemcpy2D, and
// 96 MiB copies between pinned host memory and the device: ROCR 6.x sends each as one SDMA
// packet with a count wider than 22 bits (a 22-bit decoder copied only the first 4 MiB).
#include "check.h"
#include <cstring>
#include <vector>

int main() {
  const int n = 1 << 20;
  float* d;
  HIP_CHECK(hipMalloc(&d, n * 4));
  for (int round = 0; round < 16; round++) {
    float* h = (float*)malloc(n * 4);
    float* back = (float*)malloc(n * 4);
    for (int i = 0; i < n; i++) h[i] = round * 1000.0f + (float)(i % 977);
    HIP_CHECK(hipMemcpy(d, h, n * 4, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(back, d, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      if (back[i] != h[i]) fail("pageable_round_trips", "round %d: element %d = %g, want %g", round, i, back[i], h[i]);
    free(h);
    free(back);
  }
  pass("pageable_round_trips");

  const int w = 1000, rows = 300, pitch_h = 1024 * 4;
  std::vector<int> src(rows * 1024), dst(rows * 1024, -1);
  for (int i = 0; i < rows * 1024; i++) src[i] = i * 7;
  int* d2;
  size_t dpitch;
  HIP_CHECK(hipMallocPitch((void**)&d2, &dpitch, w * 4, rows));
  HIP_CHECK(hipMemcpy2D(d2, dpitch, src.data(), pitch_h, w * 4, rows, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy2D(dst.data(), pitch_h, d2, dpitch, w * 4, rows, hipMemcpyDeviceToHost));
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < 1024; c++) {
      int want = c < w ? src[r * 1024 + c] : -1;
      if (dst[r * 1024 + c] != want) fail("memcpy_2d", "[%d][%d] = %d, want %d", r, c, dst[r * 1024 + c], want);
    }
  pass("memcpy_2d");

  const size_t big = 96u << 20, words = big / 4;
  unsigned *pinned, *pinned_back, *dbig;
  HIP_CHECK(hipHostMalloc((void**)&pinned, big));
  HIP_CHECK(hipHostMalloc((void**)&pinned_back, big));
  HIP_CHECK(hipMalloc((void**)&dbig, big));
  for (size_t i = 0; i < words; i++) pinned[i] = (unsigned)(i * 2654435761u) ^ 0x5a5a5a5au;
  memset(pinned_back, 0, big);
  HIP_CHECK(hipMemcpy(dbig, pinned, big, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(pinned_back, dbig, big, hipMemcpyDeviceToHost));
  size_t wrong = 0, first = words;
  for (size_t i = 0; i < words; i++)
    if (pinned_back[i] != ((unsigned)(i * 2654435761u) ^ 0x5a5a5a5au)) {
      if (first == words) first = i;
      wrong++;
    }
  if (wrong) fail("pinned_large_copies", "%zu of %zu words wrong, the first at byte %zu", wrong, words, first * 4);
  HIP_CHECK(hipFree(dbig));
  HIP_CHECK(hipHostFree(pinned));
  HIP_CHECK(hipHostFree(pinned_back));
  pass("pinned_large_copies");
  return 0;
}
