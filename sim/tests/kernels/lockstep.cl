// The waves of a workgroup leave a barrier together (sim/tests/exec_lockstep.rs).
// clang-15 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -nogpulib

// RCCL's kernel loop in miniature: after a barrier every wave reads a word of LDS (RCCL's
// `isLast`) while wave 0 fetches the next value from global memory and stores it over the
// word. On the hardware the global load takes hundreds of cycles and the other waves have
// read the old value long before; each work-item records what it read.
kernel void read_after_barrier(global const int* next, global int* seen) {
  local int word;
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) word = 1;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  int mine = *(volatile local int*)&word;
  if (t < 64) *(volatile local int*)&word = next[0];
  seen[__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + t] = mine;
}
