// rocSPARSE and hipSPARSE on the simulated GPU, each result compared with a CPU
// reference computed here: csrmv (with and without the analysis step, and through
// hipSPARSE), coomv, csrmm, csrsv (lower-triangular solve), csr2coo and csr2csc.
#include "check.h"
#include <hipsparse/hipsparse.h>
#include <rocsparse/rocsparse.h>
#include <algorithm>
#include <vector>

#define SP_CHECK(x)                                                              \
  do {                                                                           \
    rocsparse_status st_ = (x);                                                  \
    if (st_ != rocsparse_status_success) fail(#x, "rocsparse status %d", (int)st_); \
  } while (0)
#define HSP_CHECK(x)                                                             \
  do {                                                                           \
    hipsparseStatus_t st_ = (x);                                                 \
    if (st_ != HIPSPARSE_STATUS_SUCCESS) fail(#x, "hipsparse status %d", (int)st_); \
  } while (0)

struct Csr {
  int m, n;
  std::vector<int> ptr, col;
  std::vector<float> val;
  int nnz() const { return (int)val.size(); }
};

static unsigned seed = 2024;
static unsigned next() { return seed = seed * 1664525u + 1013904223u; }
static float value() { return ((int)(next() >> 8 & 0xffff) - 32768) / 8192.0f; }

// A random m x n matrix with about `per_row` entries per row (sorted, distinct columns).
// With `lower`, a lower-triangular matrix with a dominant diagonal.
static Csr random_csr(int m, int n, int per_row, bool lower) {
  Csr a{m, n, {0}, {}, {}};
  for (int i = 0; i < m; i++) {
    std::vector<int> cols;
    int limit = lower ? i : n;
    for (int e = 0; e < per_row && limit > 0; e++) cols.push_back(next() % limit);
    if (lower) cols.push_back(i);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int c : cols) {
      a.col.push_back(c);
      a.val.push_back(lower && c == i ? 4.0f + (next() % 4) : value());
    }
    a.ptr.push_back((int)a.col.size());
  }
  return a;
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

static void compare(const char* what, const std::vector<float>& got, const std::vector<double>& want,
                    const std::vector<double>& mag) {
  for (size_t i = 0; i < want.size(); i++)
    if (fabs(got[i] - want[i]) > 1e-5 * std::max(1.0, mag[i]))
      fail(what, "element %zu: %.9g, want %.9g", i, got[i], want[i]);
  pass(what);
}

int main() {
  rocsparse_handle h;
  SP_CHECK(rocsparse_create_handle(&h));
  rocsparse_mat_descr descr;
  SP_CHECK(rocsparse_create_mat_descr(&descr));
  const float alpha = 1.5f, beta = -0.5f;

  Csr a = random_csr(3000, 2000, 12, false);
  std::vector<float> x(a.n), y0(a.m);
  for (auto& v : x) v = value();
  for (auto& v : y0) v = value();
  int *d_ptr = upload(a.ptr), *d_col = upload(a.col);
  float *d_val = upload(a.val), *d_x = upload(x);

  // y = alpha * A x + beta * y0
  std::vector<double> want(a.m), mag(a.m);
  for (int i = 0; i < a.m; i++) {
    double s = 0, m = 0;
    for (int j = a.ptr[i]; j < a.ptr[i + 1]; j++) s += (double)a.val[j] * x[a.col[j]], m += fabs((double)a.val[j] * x[a.col[j]]);
    want[i] = alpha * s + beta * y0[i];
    mag[i] = fabs(alpha) * m + fabs(beta * y0[i]);
  }
  for (int analysed = 0; analysed < 2; analysed++) {
    rocsparse_mat_info info = nullptr;
    if (analysed) {
      SP_CHECK(rocsparse_create_mat_info(&info));
      SP_CHECK(rocsparse_scsrmv_analysis(h, rocsparse_operation_none, a.m, a.n, a.nnz(), descr, d_val, d_ptr, d_col, info));
    }
    float* d_y = upload(y0);
    SP_CHECK(rocsparse_scsrmv(h, rocsparse_operation_none, a.m, a.n, a.nnz(), &alpha, descr, d_val, d_ptr, d_col, info, d_x,
                              &beta, d_y));
    compare(analysed ? "rocsparse csrmv (analysed)" : "rocsparse csrmv", download(d_y, a.m), want, mag);
    HIP_CHECK(hipFree(d_y));
    if (info) SP_CHECK(rocsparse_destroy_mat_info(info));
  }

  // csr2coo, then coomv on the result.
  int* d_coo_row;
  HIP_CHECK(hipMalloc(&d_coo_row, a.nnz() * sizeof(int)));
  SP_CHECK(rocsparse_csr2coo(h, d_ptr, a.nnz(), a.m, d_coo_row, rocsparse_index_base_zero));
  auto coo_row = download(d_coo_row, a.nnz());
  for (int i = 0; i < a.m; i++)
    for (int j = a.ptr[i]; j < a.ptr[i + 1]; j++)
      if (coo_row[j] != i) fail("rocsparse csr2coo", "entry %d: row %d, want %d", j, coo_row[j], i);
  pass("rocsparse csr2coo");
  {
    float* d_y = upload(y0);
    SP_CHECK(rocsparse_scoomv(h, rocsparse_operation_none, a.m, a.n, a.nnz(), &alpha, descr, d_val, d_coo_row, d_col, d_x, &beta,
                              d_y));
    compare("rocsparse coomv", download(d_y, a.m), want, mag);
    HIP_CHECK(hipFree(d_y));
  }

  // csr2csc: compare with a transpose computed here (stable by row within a column).
  {
    size_t bytes;
    SP_CHECK(rocsparse_csr2csc_buffer_size(h, a.m, a.n, a.nnz(), d_ptr, d_col, rocsparse_action_numeric, &bytes));
    void* buf;
    HIP_CHECK(hipMalloc(&buf, std::max<size_t>(bytes, 4)));
    float* d_csc_val;
    int *d_csc_row, *d_csc_ptr;
    HIP_CHECK(hipMalloc(&d_csc_val, a.nnz() * 4));
    HIP_CHECK(hipMalloc(&d_csc_row, a.nnz() * 4));
    HIP_CHECK(hipMalloc(&d_csc_ptr, (a.n + 1) * 4));
    SP_CHECK(rocsparse_scsr2csc(h, a.m, a.n, a.nnz(), d_val, d_ptr, d_col, d_csc_val, d_csc_row, d_csc_ptr,
                                rocsparse_action_numeric, rocsparse_index_base_zero, buf));
    std::vector<int> cptr(a.n + 1, 0), crow(a.nnz());
    std::vector<float> cval(a.nnz());
    for (int c : a.col) cptr[c + 1]++;
    for (int j = 0; j < a.n; j++) cptr[j + 1] += cptr[j];
    std::vector<int> fill(cptr.begin(), cptr.end() - 1);
    for (int i = 0; i < a.m; i++)
      for (int j = a.ptr[i]; j < a.ptr[i + 1]; j++) crow[fill[a.col[j]]] = i, cval[fill[a.col[j]]++] = a.val[j];
    if (download(d_csc_ptr, a.n + 1) != cptr) fail("rocsparse csr2csc", "column pointers differ");
    if (download(d_csc_row, a.nnz()) != crow) fail("rocsparse csr2csc", "row indices differ");
    if (download(d_csc_val, a.nnz()) != cval) fail("rocsparse csr2csc", "values differ");
    pass("rocsparse csr2csc");
    HIP_CHECK(hipFree(buf));
  }

  // csrmm: C = alpha * A B + beta * C0 with B (n x k) and C (m x k) column-major.
  {
    const int k = 24;
    std::vector<float> b(a.n * k), c0(a.m * k);
    for (auto& v : b) v = value();
    for (auto& v : c0) v = value();
    float *d_b = upload(b), *d_c = upload(c0);
    SP_CHECK(rocsparse_scsrmm(h, rocsparse_operation_none, rocsparse_operation_none, a.m, k, a.n, a.nnz(), &alpha, descr, d_val,
                              d_ptr, d_col, d_b, a.n, &beta, d_c, a.m));
    std::vector<double> w(a.m * k), mg(a.m * k);
    for (int col = 0; col < k; col++)
      for (int i = 0; i < a.m; i++) {
        double s = 0, m = 0;
        for (int j = a.ptr[i]; j < a.ptr[i + 1]; j++) {
          double p = (double)a.val[j] * b[col * a.n + a.col[j]];
          s += p, m += fabs(p);
        }
        w[col * a.m + i] = alpha * s + beta * c0[col * a.m + i];
        mg[col * a.m + i] = fabs(alpha) * m + fabs(beta * c0[col * a.m + i]);
      }
    compare("rocsparse csrmm", download(d_c, a.m * k), w, mg);
  }

  // csrsv: solve L y = alpha x for a lower-triangular L.
  {
    Csr l = random_csr(2000, 2000, 6, true);
    int *dl_ptr = upload(l.ptr), *dl_col = upload(l.col);
    float* dl_val = upload(l.val);
    rocsparse_mat_descr ld;
    SP_CHECK(rocsparse_create_mat_descr(&ld));
    SP_CHECK(rocsparse_set_mat_fill_mode(ld, rocsparse_fill_mode_lower));
    rocsparse_mat_info info;
    SP_CHECK(rocsparse_create_mat_info(&info));
    size_t bytes;
    SP_CHECK(rocsparse_scsrsv_buffer_size(h, rocsparse_operation_none, l.m, l.nnz(), ld, dl_val, dl_ptr, dl_col, info, &bytes));
    void* buf;
    HIP_CHECK(hipMalloc(&buf, bytes));
    SP_CHECK(rocsparse_scsrsv_analysis(h, rocsparse_operation_none, l.m, l.nnz(), ld, dl_val, dl_ptr, dl_col, info,
                                       rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, buf));
    std::vector<float> rhs(l.m);
    for (auto& v : rhs) v = value();
    float *d_rhs = upload(rhs), *d_y;
    HIP_CHECK(hipMalloc(&d_y, l.m * 4));
    SP_CHECK(rocsparse_scsrsv_solve(h, rocsparse_operation_none, l.m, l.nnz(), &alpha, ld, dl_val, dl_ptr, dl_col, info, d_rhs, d_y,
                                    rocsparse_solve_policy_auto, buf));
    rocsparse_int pivot;
    SP_CHECK(rocsparse_csrsv_zero_pivot(h, ld, info, &pivot));
    if (pivot != -1) fail("rocsparse csrsv", "zero pivot %d", (int)pivot);
    std::vector<double> w(l.m), mg(l.m, 1.0);
    for (int i = 0; i < l.m; i++) {
      double s = alpha * rhs[i], diag = 1;
      for (int j = l.ptr[i]; j < l.ptr[i + 1]; j++)
        if (l.col[j] == i) diag = l.val[j];
        else s -= l.val[j] * w[l.col[j]];
      w[i] = s / diag;
    }
    compare("rocsparse csrsv", download(d_y, l.m), w, mg);
  }

  // hipSPARSE on top: csrmv and csr2coo through the portable API.
  {
    hipsparseHandle_t hh;
    HSP_CHECK(hipsparseCreate(&hh));
    hipsparseMatDescr_t hd;
    HSP_CHECK(hipsparseCreateMatDescr(&hd));
    float* d_y = upload(y0);
    HSP_CHECK(hipsparseScsrmv(hh, HIPSPARSE_OPERATION_NON_TRANSPOSE, a.m, a.n, a.nnz(), &alpha, hd, d_val, d_ptr, d_col, d_x, &beta,
                              d_y));
    compare("hipsparse csrmv", download(d_y, a.m), want, mag);
    HSP_CHECK(hipsparseXcsr2coo(hh, d_ptr, a.nnz(), a.m, d_coo_row, HIPSPARSE_INDEX_BASE_ZERO));
    if (download(d_coo_row, a.nnz()) != coo_row) fail("hipsparse csr2coo", "rows differ");
    pass("hipsparse csr2coo");
    HSP_CHECK(hipsparseDestroy(hh));
  }
  SP_CHECK(rocsparse_destroy_handle(h));
  return 0;
}
