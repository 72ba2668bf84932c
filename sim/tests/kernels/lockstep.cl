// The waves of a workgroup leave a barrier together (sim/tests/exec_lockstep.rs).
// clang-15 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -nogpulib

// A barrier with the fences OpenCL's `barrier(CLK_LOCAL_MEM_FENCE)` has (no OpenCL library
// here: `-nogpulib`).
static void workgroup_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// RCCL's kernel loop in miniature: after a barrier every wave reads a word of LDS (RCCL's
// `isLast`) while wave 0 fetches the next value from global memory and stores it over the
// word. On the hardware the global load takes hundreds of cycles and the other waves have
// read the old value long before; each work-item records what it read.
kernel void read_after_barrier(global const int* next, global int* seen) {
  local int word;
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) word = 1;
  workgroup_barrier();
  int mine = *(volatile local int*)&word;
  if (t < 64) *(volatile local int*)&word = next[0];
  seen[__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + t] = mine;
}

// Wave 0 computes for a while on its registers after the barrier, then stores over the
// word; the other waves read it after a few instructions. Each records what it read (wave 0:
// its own store) and wave 0 also what it computed.
kernel void compute_then_store(global const int* next, global int* seen) {
  local int word;
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) word = 1;
  workgroup_barrier();
  int v = next[0];
  if (t < 64) {
    for (int k = 0; k < 12; k++) v = v * 3 + (k ^ v);
    *(volatile local int*)&word = v;
  }
  seen[__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + t] = *(volatile local int*)&word;
}

// The other way round: wave 1 stores right after the barrier, wave 0 reads after computing
// for a while and finds wave 1's value, although wave 0 comes first in every round.
kernel void store_then_compute(global int* seen) {
  local int word;
  uint t = __builtin_amdgcn_workitem_id_x();
  if (t == 0) word = 1;
  workgroup_barrier();
  int v = t;
  if (t == 64) *(volatile local int*)&word = 2;
  if (t < 64) {
    for (int k = 0; k < 12; k++) v = v * 5 + (k ^ v);
  }
  int mine = *(volatile local int*)&word;
  uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + t;
  seen[2 * i] = mine;
  seen[2 * i + 1] = v;
}

// rocRAND's MT19937 jump-ahead in miniature (two waves, a 624-word state in LDS; also the
// `barriers` benchmark of `examples/throughput.rs`): each step one lane advances the state,
// a barrier, then (when a bit of a hash of the step is set) every lane folds its share of a
// second state in, and another barrier.
kernel void barriers(global uint* out, uint steps) {
  local uint temp[624];
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint state[5];
  for (uint i = 0; i < 5; i++) {
    uint j = i * 128 + lid;
    state[i] = j * 2654435761u;
    if (j < 624) temp[j] = j;
  }
  workgroup_barrier();
  uint ptr = 0;
  for (uint s = 0; s < steps; s++) {
    if (lid == 0) {
      uint t0 = temp[ptr], t1 = temp[ptr + 1 < 624 ? ptr + 1 : 0];
      uint tm = temp[ptr + 397 < 624 ? ptr + 397 : ptr + 397 - 624];
      uint y = (t0 & 0x80000000u) | (t1 & 0x7fffffffu);
      temp[ptr] = tm ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0u);
    }
    workgroup_barrier();
    ptr = ptr + 1 < 624 ? ptr + 1 : 0;
    if ((s * 2654435761u) >> 31) {
      for (uint i = 0; i < 5; i++) {
        uint j = i * 128 + lid;
        uint k = ptr + j < 624 ? ptr + j : ptr + j - 624;
        if (j < 624) temp[k] ^= state[i];
      }
      workgroup_barrier();
    }
  }
  for (uint i = 0; i < 5; i++) {
    uint j = i * 128 + lid;
    if (j < 624) out[__builtin_amdgcn_workgroup_id_x() * 624 + j] = temp[j];
  }
}
