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

// Memory-heavy: a streaming scale-and-copy over `n` floats, grid-strided.
kernel void stream(global const float* in, global float* out, uint n, uint stride) {
  for (uint i = gid(); i < n; i += stride) out[i] = in[i] * 2.0f + 1.0f;
}
