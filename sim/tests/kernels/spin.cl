// Kernels that wait, through memory, for other workgroups of their dispatch
// (sim/tests/exec_residency.rs). Every wait gives up after `bound` polls and
// records that, so a simulator that does not keep every resident workgroup
// moving fails in bounded time instead of hanging.
// clang-15 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -nogpulib

// Every workgroup waits for the flag that only the last one sets.
kernel void wait_for_last(global int* flag, global int* out, uint groups, uint bound) {
  uint g = __builtin_amdgcn_workgroup_id_x();
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) {
    if (g == groups - 1) __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    uint polls = 0;
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0 && ++polls < bound) {
    }
    out[g] = __atomic_load_n(flag, __ATOMIC_ACQUIRE) ? 1 : -1;
  }
}

// A grid barrier made of an atomic counter: every workgroup arrives, then waits for all
// (what cooperative groups' grid sync does), optionally sleeping between polls.
kernel void counter_barrier(global int* arrived, global int* out, uint groups, uint bound, int sleep) {
  uint g = __builtin_amdgcn_workgroup_id_x();
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) {
    __atomic_fetch_add(arrived, 1, __ATOMIC_ACQ_REL);
    uint polls = 0;
    while (__atomic_load_n(arrived, __ATOMIC_ACQUIRE) < (int)groups && ++polls < bound) {
      if (sleep) __builtin_amdgcn_s_sleep(1);
    }
    out[g] = __atomic_load_n(arrived, __ATOMIC_ACQUIRE);
  }
}

// Counts the runs of each workgroup in `runs`; every `every`th workgroup (none if 0) then
// waits for the flag that the last one sets. Workers run many short workgroups one after
// another in one turn (a batch) and give back the rest when one of them has to wait.
kernel void count_runs(global int* runs, global int* flag, global int* out, uint groups, uint bound, uint every) {
  uint g = __builtin_amdgcn_workgroup_id_x();
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) {
    __atomic_fetch_add(&runs[g], 1, __ATOMIC_RELAXED);
    if (g == groups - 1) __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    int waited = 1;
    if (every != 0 && g % every == every - 1) {
      uint polls = 0;
      while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0 && ++polls < bound) {
      }
      waited = __atomic_load_n(flag, __ATOMIC_ACQUIRE) ? 1 : -1;
    }
    out[g] = waited;
  }
}
