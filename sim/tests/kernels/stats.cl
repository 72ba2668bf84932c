// Straight-line kernels for sim/tests/stats.rs (run statistics): every wave runs every
// instruction once, so the counts follow from the disassembly and the grid. Compiler
// builtins only; the block size is passed in, as the tests launch blocks of 64.

static uint gid(uint block) { return __builtin_amdgcn_workgroup_id_x() * block + __builtin_amdgcn_workitem_id_x(); }

kernel void axpy(global const float* x, global float* y, float a) {
    uint i = gid(64);
    y[i] = a * x[i] + y[i];
}

kernel void triple4(global const float4* x, global float4* y) {
    uint i = gid(64);
    y[i] = x[i] * 3.0f;
}

// Run by one test only: the translator's cache is process-wide (by code), so the test that
// charges translation time to the kernel whose code was translated needs code that no other
// test of the process has run.
kernel void halve(global const float* x, global float* y) {
    uint i = gid(64);
    y[i] = x[i] * 0.5f;
}

// A loop of `n` passes, one load each (not unrolled), then one store; work-items from `items`
// on are off (the last wave partly). Thousands of passes: its runs are translated at any
// threshold, so the statistics count translated runs, with whole waves and with lanes off.
kernel void strided_sum(global const float* x, global float* y, uint n, uint items) {
    uint i = gid(64);
    if (i >= items) return;
    float acc = 0.0f;
#pragma unroll 1
    for (uint k = 0; k < n; k++) acc += x[k * items + i];
    y[i] = acc;
}
