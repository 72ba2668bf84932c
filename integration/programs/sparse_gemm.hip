// rocSPARSE's sparse x sparse product (csrgemm: C = alpha * A * B) on the simulated GPU,
// the row pointers, the column indices and the values of C compared with a CPU product
// computed here, for shapes and densities that take each of rocSPARSE's paths (rows binned
// by their number of intermediate products: a wavefront per row, a block per row, global
// hash tables).
#include "check.h"
#include <rocsparse/rocsparse.h>
#include <algorithm>
#include <map>
#include <vector>

#define SP_CHECK(x)                                                              \
  do {                                                                           \
    rocsparse_status st_ = (x);                                                  \
    if (st_ != rocsparse_status_success) fail(#x, "rocsparse status %d", (int)st_); \
  } while (0)

struct Csr {
  int m, n;
  std::vector<int> ptr, col;
  std::vector<float> val;
  int nnz() const { return (int)val.size(); }
};

static unsigned seed = 77;
static unsigned next() { return seed = seed * 1664525u + 1013904223u; }
static float value() { return (int)(next() >> 8 & 0xff) / 32.0f - 4.0f; }

// A random m x n matrix with about `per_row` entries per row (sorted, distinct columns).
static Csr random_csr(int m, int n, int per_row) {
  Csr a{m, n, {0}, {}, {}};
  for (int i = 0; i < m; i++) {
    std::vector<int> cols;
    for (int e = 0; e < per_row; e++) cols.push_back(next() % n);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int c : cols) {
      a.col.push_back(c);
      a.val.push_back(value());
    }
    a.ptr.push_back((int)a.col.size());
  }
  return a;
}

// C = alpha * A * B on the CPU (values in double; the inputs are exact in float and small).
static Csr product(const Csr& a, const Csr& b, float alpha, std::vector<double>& exact) {
  Csr c{a.m, b.n, {0}, {}, {}};
  exact.clear();
  for (int i = 0; i < a.m; i++) {
    std::map<int, double> row;
    for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++)
      for (int q = b.ptr[a.col[p]]; q < b.ptr[a.col[p] + 1]; q++) row[b.col[q]] += (double)a.val[p] * b.val[q];
    for (const auto& entry : row) {
      c.col.push_back(entry.first);
      exact.push_back(alpha * entry.second);
      c.val.push_back((float)(alpha * entry.second));
    }
    c.ptr.push_back((int)c.col.size());
  }
  return c;
}

template <class T>
static T* upload(const std::vector<T>& h) {
  T* d;
  HIP_CHECK(hipMalloc(&d, std::max<size_t>(1, h.size()) * sizeof(T)));
  HIP_CHECK(hipMemcpy(d, h.data(), h.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}
template <class T>
static std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return h;
}

static void check_gemm(rocsparse_handle h, int m, int k, int n, int a_per_row, int b_per_row) {
  char what[96];
  snprintf(what, sizeof what, "rocsparse csrgemm %dx%d * %dx%d (%d, %d per row)", m, k, k, n, a_per_row, b_per_row);
  Csr a = random_csr(m, k, a_per_row), b = random_csr(k, n, b_per_row);
  std::vector<double> exact;
  Csr want = product(a, b, 1.0f, exact);
  rocsparse_mat_descr descr;
  SP_CHECK(rocsparse_create_mat_descr(&descr));
  rocsparse_mat_info info;
  SP_CHECK(rocsparse_create_mat_info(&info));
  int *a_ptr = upload(a.ptr), *a_col = upload(a.col), *b_ptr = upload(b.ptr), *b_col = upload(b.col);
  float *a_val = upload(a.val), *b_val = upload(b.val);
  const float alpha = 1.0f;
  const auto none = rocsparse_operation_none;
  size_t bytes = 0;
  SP_CHECK(rocsparse_scsrgemm_buffer_size(h, none, none, m, n, k, &alpha, descr, a.nnz(), a_ptr, a_col, descr, b.nnz(),
                                          b_ptr, b_col, nullptr, nullptr, 0, nullptr, nullptr, info, &bytes));
  void* buffer;
  HIP_CHECK(hipMalloc(&buffer, std::max<size_t>(bytes, 4)));
  int* c_ptr;
  HIP_CHECK(hipMalloc(&c_ptr, (m + 1) * sizeof(int)));
  rocsparse_int c_nnz = -1;
  SP_CHECK(rocsparse_csrgemm_nnz(h, none, none, m, n, k, descr, a.nnz(), a_ptr, a_col, descr, b.nnz(), b_ptr, b_col,
                                 nullptr, 0, nullptr, nullptr, descr, c_ptr, &c_nnz, info, buffer));
  if (c_nnz != want.nnz()) fail(what, "nnz %d, want %d", (int)c_nnz, want.nnz());
  std::vector<int> got_ptr = download(c_ptr, m + 1);
  for (int i = 0; i <= m; i++)
    if (got_ptr[i] != want.ptr[i]) fail(what, "row pointer %d: %d, want %d", i, got_ptr[i], want.ptr[i]);
  int* c_col;
  float* c_val;
  HIP_CHECK(hipMalloc(&c_col, std::max(1, c_nnz) * sizeof(int)));
  HIP_CHECK(hipMalloc(&c_val, std::max(1, c_nnz) * sizeof(float)));
  SP_CHECK(rocsparse_scsrgemm(h, none, none, m, n, k, &alpha, descr, a.nnz(), a_val, a_ptr, a_col, descr, b.nnz(), b_val,
                              b_ptr, b_col, nullptr, nullptr, 0, nullptr, nullptr, nullptr, descr, c_val, c_ptr, c_col,
                              info, buffer));
  std::vector<int> got_col = download(c_col, c_nnz);
  std::vector<float> got_val = download(c_val, c_nnz);
  for (int i = 0; i < c_nnz; i++) {
    if (got_col[i] != want.col[i]) fail(what, "column index %d: %d, want %d", i, got_col[i], want.col[i]);
    if (fabs(got_val[i] - exact[i]) > 1e-4 * std::max(1.0, fabs(exact[i])))
      fail(what, "value %d: %.9g, want %.9g", i, got_val[i], exact[i]);
  }
  for (void* p : {(void*)a_ptr, (void*)a_col, (void*)b_ptr, (void*)b_col, (void*)a_val, (void*)b_val, buffer,
                  (void*)c_ptr, (void*)c_col, (void*)c_val})
    HIP_CHECK(hipFree(p));
  SP_CHECK(rocsparse_destroy_mat_info(info));
  SP_CHECK(rocsparse_destroy_mat_descr(descr));
  pass(what);
}

int main() {
  rocsparse_handle h;
  SP_CHECK(rocsparse_create_handle(&h));
  // Few products per row (a wavefront's hash table), the shape of rocSPARSE's own failing
  // test (50 x 50 times 50 x 13), then denser rows (a block's table), then rows with
  // thousands of products (global memory).
  check_gemm(h, 50, 50, 13, 3, 2);
  // Empty operands: nothing to multiply, C has no entries.
  check_gemm(h, 50, 50, 13, 0, 2);
  check_gemm(h, 50, 50, 13, 3, 0);
  check_gemm(h, 50, 50, 13, 12, 6);
  check_gemm(h, 200, 300, 150, 20, 30);
  check_gemm(h, 64, 512, 4096, 64, 64);
  SP_CHECK(rocsparse_destroy_handle(h));
  return 0;
}
