// Kernels for sim/tests/exec_vmem_kernels.rs: vector memory, LDS, scratch and
// atomics as Debian's clang-19 compiles them for gfx90a (`clang-19 -x cl
// -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -nogpulib`).
// Only compiler builtins are used, so the code object is self-contained.

static uint lid(void) { return __builtin_amdgcn_workitem_id_x(); }
static uint gid(uint block) { return __builtin_amdgcn_workgroup_id_x() * block + lid(); }
static void sync(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// A private array with data-dependent indices lives in scratch (buffer
// accesses through the private segment buffer s[0:3]). Blocks of 64.
kernel void scratch(global const int* in, global int* out, int k) {
  uint g = gid(64);
  volatile int a[48];
  for (int i = 0; i < 48; i++) a[i] = in[g] * i + k;
  out[g] = a[(uint)(in[g] + k) % 48] - a[(g * 7) % 48];
}

// Tree reduction in LDS with barriers, then one atomic per group. Blocks of 256.
kernel void lds_sum(global const uint* in, global uint* out) {
  local uint tmp[256];
  uint l = lid();
  tmp[l] = in[gid(256)];
  sync();
  for (uint s = 128; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    sync();
  }
  if (l == 0) __atomic_fetch_add(out, tmp[0], __ATOMIC_RELAXED);
}

// Reversal of each 256-element block through LDS (64-bit elements). Blocks of 256.
kernel void reverse(global const ulong* in, global ulong* out) {
  local ulong tile[256];
  uint l = lid();
  tile[l] = in[gid(256)];
  sync();
  out[gid(256)] = tile[255 - l];
}

// Global atomics of several kinds, all lanes contending. Blocks of 64.
kernel void atomics(global const int* in, global int* stats, global float* fsum, global uint* umax) {
  int v = in[gid(64)];
  __atomic_fetch_add(&stats[0], v, __ATOMIC_RELAXED);
  __atomic_fetch_min(&stats[1], v, __ATOMIC_RELAXED);
  __atomic_fetch_max(&stats[2], v, __ATOMIC_RELAXED);
  __atomic_fetch_or(&stats[3], 1 << (v & 31), __ATOMIC_RELAXED);
  __atomic_fetch_xor(&stats[4], v, __ATOMIC_RELAXED);
  __atomic_fetch_max(umax, (uint)v, __ATOMIC_RELAXED);
  // A float add through a compare-exchange loop.
  global int* p = (global int*)fsum;
  int seen = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(p, &seen, as_int(as_float(seen) + 0.5f), false, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}

// Bytes and shorts: sign extension and narrow stores. Blocks of 64.
kernel void narrow(global const char* c, global const short* s, global int* out, global uchar* bytes,
                   global ushort* shorts) {
  uint i = gid(64);
  out[i] = c[i] * 1000 + s[i];
  bytes[i] = (uchar)(c[i] + s[i]);
  shorts[i] = (ushort)(s[i] * 3);
}

// 64-bit loads/stores and a 16-byte vector copy. Blocks of 64.
kernel void wide(global const ulong* a, global ulong* b, global const uint4* v, global uint4* w) {
  uint i = gid(64);
  b[i] = a[i] * 3 + (a[i] >> 40);
  uint4 x = v[i];
  w[i] = x.wzyx + (uint4)(i);
}
