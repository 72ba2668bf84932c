// GWS kernels for sim/tests/exec_gws.rs (clang-15 -x cl -cl-std=CL2.0 -target
// amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -nogpulib). The barrier is initialised with the
// number of waves minus one, as ROCm's device library does for grid sync.
kernel void gws_init(uint waves) { __builtin_amdgcn_ds_gws_init(waves - 1, 0); }
kernel void gws_barrier(global int* counter, global int* seen) {
  uint t = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if ((t & 63) == 0) __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
  __builtin_amdgcn_ds_gws_barrier(0, 0);
  if ((t & 63) == 0) seen[t / 64] = __atomic_load_n(counter, __ATOMIC_RELAXED);
}
