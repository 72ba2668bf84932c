// ggml's quantised matrix products on the HIP backend, checked against the arithmetic ggml's
// kernels are written to do.
//
// Usage: ggml_quant_matvec [TYPE…]   (TYPE: q4_0 q4_1 q5_0 q8_0; all four by default)
//
// For each type, a random weight matrix is quantised on the host (ggml_quantize_chunk) and
// multiplied (ggml_mul_mat) on the `ROCm0` backend by 1, 4, 16 and 64 random activation
// columns: up to 8 columns ggml takes its matrix-vector path (`quantize_q8_1`,
// `mul_mat_vec_q`), above it its matrix-matrix path (`quantize_mmq_q8_1`, `mul_mat_q` with
// MFMA tiles and the stream-k fix-up). The result is compared with an emulation, in double
// precision, of what that path computes: the activations quantised to 8 bits per block of 32
// (scale and sum rounded as ggml stores them, the sum added in a warp's butterfly order), the
// integer dot product of the quants, the scales and the weights' offset or minimum applied as
// the path applies them (the matrix-vector path applies q4_0's and q5_0's offset through the
// activations' exact sum; the matrix-matrix path takes it off the weights' quants first).
//
// Prints per type and column count `TYPE n=N max_err E gpu_vs_exact E cpu_vs_exact E scale S`
// and PASS or FAIL: the GPU must match the emulation to float rounding (1e-5 of the largest
// output). `gpu_vs_exact` and `cpu_vs_exact` are the distances of the GPU's and the CPU
// backend's results from the exact product with the dequantised weights: how much each
// backend's arithmetic rounds, for scale.
//
// Host code only (hipcc is the sid root's C++ compiler); the kernels are ggml's.
#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <ggml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static float half_round(float v) { return ggml_fp16_to_fp32(ggml_fp32_to_fp16(v)); }

// One block of 32 activations quantised to 8 bits, as ggml's kernels store it.
struct Q8 {
    float d, sum;
    int q[32];
};

// The sum of a block's 32 values as a warp adds them: each lane adds its partner's value at
// distances 16, 8, 4, 2, 1 (xor shuffles); lane 0's total.
static float butterfly_sum(const float *x, int lanes) {
    float v[32];
    memcpy(v, x, lanes * sizeof(float));
    for (int off = lanes / 2; off > 0; off /= 2) {
        float next[32];
        for (int i = 0; i < lanes; i++) next[i] = v[i] + v[i ^ off];
        memcpy(v, next, lanes * sizeof(float));
    }
    return v[0];
}

// ggml's `quantize_q8_1` (the matrix-vector path): scale amax/127 and values roundf(x / d),
// one lane per value; scale and sum stored as half.
static Q8 quantize_q8_1(const float *x) {
    Q8 b;
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127;
    for (int i = 0; i < 32; i++) b.q[i] = amax == 0.0f ? 0 : (int)(signed char)std::roundf(x[i] / d);
    b.d = half_round(d);
    b.sum = half_round(butterfly_sum(x, 32));
    return b;
}

// ggml's `quantize_mmq_q8_1` (the matrix-matrix path): four values per lane, values
// roundf(x * 127/amax), scale 1/(127/amax); kept as float, or as half with the sum when
// `with_sum` (the layout the 4-bit formats with an offset or minimum use).
static Q8 quantize_mmq_q8_1(const float *x, bool with_sum) {
    Q8 b;
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = std::fmax(amax, std::fabs(x[i]));
    const float d_inv = amax > 0 ? 127.0f / amax : 0.0f;
    for (int i = 0; i < 32; i++) b.q[i] = (int)(signed char)std::roundf(x[i] * d_inv);
    float lane[8];
    for (int l = 0; l < 8; l++) lane[l] = ((x[4 * l] + x[4 * l + 1]) + x[4 * l + 2]) + x[4 * l + 3];
    const float d = d_inv > 0 ? 1.0f / d_inv : 0.0f;
    b.d = with_sum ? half_round(d) : d;
    b.sum = with_sum ? half_round(butterfly_sum(lane, 8)) : 0.0f;
    return b;
}

// One weight block as stored: its scale `d`, its minimum `m` (q4_1) and its 32 quants as
// they are stored (0..15 for the 4-bit formats, 0..31 for q5_0, signed for q8_0). Elements
// 0..15 are the low nibbles, 16..31 the high ones; value d*(q - offset) + m.
struct Block {
    double d, m;
    int offset;
    int q[32];
};

static Block decode_block(ggml_type type, const uint8_t *w) {
    auto f16 = [](const uint8_t *p) { ggml_fp16_t h; memcpy(&h, p, 2); return (double)ggml_fp16_to_fp32(h); };
    Block b{f16(w), 0.0, 0, {}};
    switch (type) {
    case GGML_TYPE_Q4_0:  // d, 16 bytes of nibbles
    case GGML_TYPE_Q4_1:  // d, m, 16 bytes of nibbles
    {
        const uint8_t *qs = w + (type == GGML_TYPE_Q4_1 ? 4 : 2);
        if (type == GGML_TYPE_Q4_1) b.m = f16(w + 2);
        b.offset = type == GGML_TYPE_Q4_0 ? 8 : 0;
        for (int j = 0; j < 16; j++) {
            b.q[j] = qs[j] & 15;
            b.q[j + 16] = qs[j] >> 4;
        }
        break;
    }
    case GGML_TYPE_Q5_0: {  // d, 4 bytes of fifth bits, 16 bytes of nibbles
        uint32_t qh;
        memcpy(&qh, w + 2, 4);
        b.offset = 16;
        for (int j = 0; j < 16; j++) {
            b.q[j] = (w[6 + j] & 15) | (((qh >> j) & 1) << 4);
            b.q[j + 16] = (w[6 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
        }
        break;
    }
    case GGML_TYPE_Q8_0:  // d, 32 signed bytes
        for (int j = 0; j < 32; j++) b.q[j] = (signed char)w[2 + j];
        break;
    default:
        abort();
    }
    return b;
}

// The integer dot product of the weights' quants, less `offset`, with the activations'.
static long dot(const Block &b, int offset, const Q8 &a) {
    long sumi = 0;
    for (int j = 0; j < 32; j++) sumi += (long)(b.q[j] - offset) * a.q[j];
    return sumi;
}

// One weight block's contribution, as ggml's vec_dot_<type>_q8_1 computes it (the
// matrix-vector path): the stored quants' dot product, the offset applied through the
// activations' sum. `w` points at the block's bytes.
static double block_dot(ggml_type type, const uint8_t *w, const Q8 &a) {
    const Block b = decode_block(type, w);
    const long sumi = dot(b, 0, a);
    if (type == GGML_TYPE_Q4_1) {
        // Both scale products are taken in half precision (`__hmul2`: AMD GPUs have fast fp16).
        return (double)half_round((float)(b.d * a.d)) * sumi + (double)half_round((float)(b.m * a.sum));
    }
    return b.d * (sumi * (double)a.d - b.offset * (double)a.sum);
}

// One weight block's contribution on the matrix-matrix path (MFMA tiles): the weights'
// quants are first made signed bytes (the offset taken off), so only q4_1's minimum goes
// through the activations' sum; products in float.
static double block_dot_mmq(ggml_type type, const uint8_t *w, const Q8 &a) {
    const Block b = decode_block(type, w);
    return b.d * a.d * dot(b, b.offset, a) + b.m * a.sum;
}

static std::vector<float> run_on(ggml_backend_t backend, ggml_type type, int k, int m, int n,
                                 const std::vector<uint8_t> &wq, const std::vector<float> &x) {
    ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), nullptr, true};
    ggml_context *ctx = ggml_init(params);
    ggml_tensor *w = ggml_new_tensor_2d(ctx, type, k, m);
    ggml_tensor *xt = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n);
    ggml_tensor *y = ggml_mul_mat(ctx, w, xt);
    ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    ggml_backend_tensor_set(w, wq.data(), 0, wq.size());
    ggml_backend_tensor_set(xt, x.data(), 0, x.size() * sizeof(float));
    if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: graph compute\n");
        exit(1);
    }
    std::vector<float> out((size_t)m * n);
    ggml_backend_tensor_get(y, out.data(), 0, out.size() * sizeof(float));
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return out;
}

int main(int argc, char **argv) {
    std::vector<std::string> names;
    for (int i = 1; i < argc; i++) names.push_back(argv[i]);
    if (names.empty()) names = {"q4_0", "q4_1", "q5_0", "q8_0"};

    ggml_backend_load_all();
    ggml_backend_t gpu = ggml_backend_init_by_name("ROCm0", nullptr);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
    if (!gpu || !cpu) {
        fprintf(stderr, "FAIL: no %s backend\n", gpu ? "CPU" : "ROCm0");
        return 1;
    }
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    bool ok = true;
    for (const std::string &name : names) {
        ggml_type type = name == "q4_0" ? GGML_TYPE_Q4_0
                         : name == "q4_1" ? GGML_TYPE_Q4_1
                         : name == "q5_0" ? GGML_TYPE_Q5_0
                         : name == "q8_0" ? GGML_TYPE_Q8_0
                                          : GGML_TYPE_COUNT;
        if (type == GGML_TYPE_COUNT) {
            fprintf(stderr, "FAIL: unknown type %s\n", name.c_str());
            return 2;
        }
        for (int n : {1, 4, 16, 64}) {
            const int k = 256, m = 64;
            std::vector<float> wf((size_t)k * m), x((size_t)k * n);
            for (float &v : wf) v = 0.25f * normal(rng);
            for (float &v : x) v = normal(rng);
            const size_t row = ggml_row_size(type, k);
            std::vector<uint8_t> wq(row * m);
            ggml_quantize_chunk(type, wf.data(), wq.data(), 0, m, k, nullptr);
            std::vector<float> wd((size_t)k * m);
            ggml_get_type_traits(type)->to_float(wq.data(), wd.data(), (int64_t)k * m);

            std::vector<float> got = run_on(gpu, type, k, m, n, wq, x);
            std::vector<float> on_cpu = run_on(cpu, type, k, m, n, wq, x);
            const int blocks = k / 32;
            const size_t block_bytes = row / blocks;
            double max_err = 0, scale = 0, gpu_vs_exact = 0, cpu_vs_exact = 0;
            for (int c = 0; c < n; c++) {
                const bool mmq = n > 8;
                const bool with_sum = type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q4_1;
                std::vector<Q8> a;
                for (int b = 0; b < blocks; b++) {
                    const float *xb = &x[(size_t)c * k + b * 32];
                    a.push_back(mmq ? quantize_mmq_q8_1(xb, with_sum) : quantize_q8_1(xb));
                }
                for (int r = 0; r < m; r++) {
                    double emul = 0, exact = 0;
                    for (int b = 0; b < blocks; b++) {
                        const uint8_t *wb = &wq[r * row + b * block_bytes];
                        emul += mmq ? block_dot_mmq(type, wb, a[b]) : block_dot(type, wb, a[b]);
                    }
                    for (int i = 0; i < k; i++) exact += (double)wd[(size_t)r * k + i] * x[(size_t)c * k + i];
                    const double g = got[(size_t)c * m + r];
                    max_err = std::fmax(max_err, std::fabs(g - emul));
                    gpu_vs_exact = std::fmax(gpu_vs_exact, std::fabs(g - exact));
                    cpu_vs_exact = std::fmax(cpu_vs_exact, std::fabs(on_cpu[(size_t)c * m + r] - exact));
                    scale = std::fmax(scale, std::fabs(exact));
                }
            }
            const bool pass = max_err <= 1e-5 * scale;
            ok &= pass;
            printf("%s n=%d max_err %.3g gpu_vs_exact %.3g cpu_vs_exact %.3g scale %.3g %s\n", name.c_str(), n,
                   max_err, gpu_vs_exact, cpu_vs_exact, scale, pass ? "PASS" : "FAIL");
        }
    }
    ggml_backend_free(cpu);
    ggml_backend_free(gpu);
    return ok ? 0 : 1;
}
