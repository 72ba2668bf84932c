// Kernels for the gfx942 (MI300X) execution tests, compiled by the test with Debian's
// clang-19: `clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx942 -O2
// -nogpulib`. Only compiler builtins are used (no device library), so the code object is
// self-contained. Every kernel runs with 256-work-item workgroups.

typedef float float4v __attribute__((ext_vector_type(4)));

static uint global_id(void) { return __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x(); }

kernel void vadd(global const float* a, global const float* b, global float* c, uint n) {
  uint i = global_id();
  if (i < n) c[i] = a[i] + b[i];
}

// Per-workgroup tree reduction in LDS, then one 64-bit atomic add per workgroup.
kernel void reduce(global const int* in, global long* total, uint n) {
  local long part[256];
  uint t = __builtin_amdgcn_workitem_id_x();
  uint i = global_id();
  part[t] = i < n ? in[i] : 0;
  for (uint s = 128; s > 0; s >>= 1) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (t < s) part[t] += part[t + s];
  }
  if (t == 0) __atomic_fetch_add(total, part[0], __ATOMIC_RELAXED);
}

// One 16x16x32 fp8 MFMA tile per wave: A row-major (16x32 bytes), B given transposed
// (Bt[j][k], 16x32 bytes), D row-major f32. Lane l holds A[l%16][8*(l/16) .. +8] and
// Bt[l%16][8*(l/16) .. +8]; D[4*(l/16) + r][l%16] comes back in register r.
kernel void mfma_fp8(global const long* a, global const long* bt, global float* d) {
  uint l = __builtin_amdgcn_workitem_id_x();
  if (l >= 64) return;
  long av = a[(l % 16) * 4 + l / 16];
  long bv = bt[(l % 16) * 4 + l / 16];
  float4v acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(av, bv, acc, 0, 0, 0);
  for (int r = 0; r < 4; r++) d[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}
