// Kernels for `cargo run --release -p sim --example throughput` (compiled at run time
// with `clang-15 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2
// -nogpulib`). 256-work-item workgroups.

static uint gid(void) { return __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x(); }

// VALU-heavy: a chain of dependent f32 multiply-adds and integer ops per iteration.
kernel void valu(global float* out, uint iters) {
  uint i = gid();
  float a = (float)i * 1e-6f, b = 1.0001f, c = 0.5f;
  uint h = i;
  for (uint k = 0; k < iters; k++) {
    a = a * b + c;
    b = b * 0.99999f + a * 1e-7f;
    c = c * 0.5f + b;
    h = (h ^ (h << 13)) + k;
  }
  out[i] = a + b + c + (float)(h & 1);
}

// FMA-bound: eight independent multiply-add chains per work-item (the compiler makes them
// four v_pk_fma_f32 per iteration), the shape of a register-blocked inner product.
kernel void fma_chains(global float* out, uint iters) {
  uint i = gid();
  float x = 0.999f + (float)(i & 7) * 1e-6f, y = 1e-3f * (float)(i & 3);
  float a0 = (float)i * 1e-7f, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
  float a4 = a0 + 4.0f, a5 = a0 + 5.0f, a6 = a0 + 6.0f, a7 = a0 + 7.0f;
  for (uint k = 0; k < iters; k++) {
    a0 = a0 * x + y; a1 = a1 * x + y; a2 = a2 * x + y; a3 = a3 * x + y;
    a4 = a4 * x + y; a5 = a5 * x + y; a6 = a6 * x + y; a7 = a7 * x + y;
  }
  out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// Memory-heavy: a streaming scale-and-copy over `n` floats, grid-strided.
kernel void stream(global const float* in, global float* out, uint n, uint stride) {
  for (uint i = gid(); i < n; i += stride) out[i] = in[i] * 2.0f + 1.0f;
}

// One pass per wave: the vector add of a HIP hello-world, a wave's whole life in 25
// instructions (the per-wave set-up is what it measures).
kernel void vadd(global const float* a, global const float* b, global float* c, uint n) {
  uint i = gid();
  if (i < n) c[i] = a[i] + b[i];
}

// f64 division in a loop whose trip count differs from lane to lane: the inversion loop of
// rocRAND's Poisson sampler (x grows while the cumulative probability is below u; its
// scrambled-Sobol tests are the slowest of CI's rocRAND subset). λ = 10, so p starts at
// exp(-10).
kernel void poisson(global uint* out, uint samples) {
  uint i = gid();
  uint total = 0;
  for (uint k = 0; k < samples; k++) {
    double u = (double)(((i + k) * 2654435761u) >> 8) * 0x1p-24;
    double p = 4.539992976248485e-05, s = p;
    uint x = 0;
    while (u > s && x < 1000) {
      x++;
      p = p * 10.0 / (double)x;
      s += p;
    }
    total += x;
  }
  out[i] = total;
}

// f32 division as HIP compiles `/` (correctly rounded: v_div_scale, v_rcp, FMAs with
// negated sources, v_div_fmas, v_div_fixup), in the shape of ggml's q8_1 quantization:
// a scale from |x|'s maximum, then each value divided by it. Every other work-item's
// value is zero (as in a padded column), which takes the zero-numerator paths.
static float div_ieee(float n, float d) {
  bool scaled_n, scaled_d;
  float dd = __builtin_amdgcn_div_scalef(n, d, false, &scaled_d);
  float nn = __builtin_amdgcn_div_scalef(n, d, true, &scaled_n);
  float r = __builtin_amdgcn_rcpf(dd);
  r = __builtin_fmaf(__builtin_fmaf(-dd, r, 1.0f), r, r);
  float q = nn * r;
  q = __builtin_fmaf(__builtin_fmaf(-dd, q, nn), r, q);
  float rem = __builtin_fmaf(-dd, q, nn);
  return __builtin_amdgcn_div_fixupf(__builtin_amdgcn_div_fmasf(rem, r, q, scaled_n), d, n);
}

kernel void quantize(global float* out, uint iters) {
  uint i = gid();
  float x = (i & 1) ? (float)(i & 255) * 0.37f - 40.0f : 0.0f;
  float acc = 0.0f;
  for (uint k = 0; k < iters; k++) {
    float amax = __builtin_fmaxf(__builtin_fabsf(x), __builtin_fabsf(acc) * 1e-3f);
    float d = div_ieee(amax, 127.0f);
    acc += __builtin_rintf(div_ieee(x, d == 0.0f ? 1.0f : d));
    x = -x;
  }
  out[i] = acc;
}
