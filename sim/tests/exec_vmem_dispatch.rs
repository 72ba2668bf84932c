//! Vector memory and LDS through whole dispatches (`KernelRunner::dispatch` →
//! `exec::Executor`, several worker threads): hand-made kernels of vector
//! memory, DS and program-control instructions only.
//!
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
//! Scalar loads are not used: the kernels read their arguments with
//! `global_load_* vN, vM, s[kernarg:+1]` and get a zero VGPR from an
//! out-of-range LDS read (which returns 0).

use sim::config::default_config;
use sim::Machine;

const S_ENDPGM: u32 = 0xbf81_0000;

/// A 64-byte kernel descriptor followed by `code` (entry at byte 64).
fn kernel(code: &[u32], lds: u32, private: u32, rsrc2: u32, props: u16) -> Vec<u8> {
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&lds.to_le_bytes());
    kd[4..8].copy_from_slice(&private.to_le_bytes());
    kd[16..24].copy_from_slice(&64i64.to_le_bytes());
    // RSRC1: 24 VGPRs (granule 8: value 2).
    kd[48..52].copy_from_slice(&2u32.to_le_bytes());
    kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    kd[56..58].copy_from_slice(&props.to_le_bytes());
    let mut bytes = kd.to_vec();
    for w in code {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes
}

const PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
const KERNARG_SEGMENT_PTR: u16 = 1 << 3;

/// Spills each lane's value to scratch through the private segment buffer
/// s[0:3] (with and without a VGPR offset), clobbers the register, reloads
/// and adds the reloaded values to two global counters.
///
/// Kernargs: counter pointer at 0, a byte table `T[x] = 4x` at 16, `in[64]`
/// dwords at 80.
const SPILL: &[u32] = &[
    0xd86c0400, 0x09000000, // ds_read_b32 v9, v0 offset:1024      (no LDS: v9 = 0)
    0xdc408010, 0x0e040000, // global_load_ubyte v14, v0, s[4:5] offset:16   (v14 = 4x)
    0xdc508050, 0x0f04000e, // global_load_dword v15, v14, s[4:5] offset:80  (v15 = in[x])
    0xdc548000, 0x0c040009, // global_load_dwordx2 v[12:13], v9, s[4:5]      (counter pointer)
    0xe0700008, 0x06000f00, // buffer_store_dword v15, off, s[0:3], s6 offset:8
    0xe070100c, 0x06000e0e, // buffer_store_dword v14, v14, s[0:3], s6 offen offset:12
    0xd86c0400, 0x0f000000, // ds_read_b32 v15, v0 offset:1024      (clobber: v15 = 0)
    0xe0500008, 0x06001000, // buffer_load_dword v16, off, s[0:3], s6 offset:8
    0xe050100c, 0x0600110e, // buffer_load_dword v17, v14, s[0:3], s6 offen offset:12
    0xdd088000, 0x007f100c, // global_atomic_add v[12:13], v16, off
    0xdd088004, 0x007f110c, // global_atomic_add v[12:13], v17, off offset:4
    S_ENDPGM,
];

#[test]
fn scratch_spills_are_per_lane_and_atomics_coherent_across_workers() {
    let m = Machine::new(default_config());
    let s = m.kernel_runner_with_workers(2).unwrap();
    // USER_SGPR_COUNT 6 (s[0:3] private segment buffer, s[4:5] kernargs),
    // ENABLE_PRIVATE_SEGMENT: the wave offset in s6.
    let k =
        s.load_raw_kernel(&kernel(SPILL, 0, 512, 6 << 1 | 1, PRIVATE_SEGMENT_BUFFER | KERNARG_SEGMENT_PTR)).unwrap();
    let counters = s.upload(&[0u32; 2]).unwrap();
    let input: Vec<u32> = (0..64u32).map(|x| x * x + 3).collect();
    let mut args = vec![0u8; 80];
    args[0..8].copy_from_slice(&counters.to_le_bytes());
    for x in 0..64 {
        args[16 + x] = 4 * x as u8;
    }
    args.extend(input.iter().flat_map(|v| v.to_le_bytes()));
    let groups = 300u32;
    s.dispatch(&k, [64 * groups, 1, 1], [64, 1, 1], &args).unwrap();
    let got = s.read_vec::<u32>(counters, 2).unwrap();
    let per_group: u32 = input.iter().sum();
    assert_eq!(got[0], groups * per_group, "each lane reloads its own spill");
    assert_eq!(got[1], groups * (0..64).map(|x| 4 * x).sum::<u32>());
}

/// Each work-item writes byte `B[x]` to LDS[x]; after a barrier it reads
/// LDS[255 - x] (written by another wave) and adds it to a global counter.
///
/// Kernargs: counter pointer at 0, `B[256]` at 16, `R[x] = 255 - x` at 272.
const LDS_EXCHANGE: &[u32] = &[
    0xdc408010, 0x0f000000, // global_load_ubyte v15, v0, s[0:1] offset:16   (B[x])
    0xd83c0000, 0x00000f00, // ds_write_b8 v0, v15
    0xbf8a0000, //             s_barrier
    0xdc408110, 0x0e000000, // global_load_ubyte v14, v0, s[0:1] offset:272  (255 - x)
    0xd8740000, 0x1000000e, // ds_read_u8 v16, v14
    0xd86c0400, 0x09000000, // ds_read_b32 v9, v0 offset:1024      (beyond LDS: v9 = 0)
    0xdc548000, 0x0c000009, // global_load_dwordx2 v[12:13], v9, s[0:1]
    0xdd088000, 0x007f100c, // global_atomic_add v[12:13], v16, off
    S_ENDPGM,
];

#[test]
fn lds_is_shared_by_the_waves_of_a_group_across_a_barrier() {
    let m = Machine::new(default_config());
    let s = m.kernel_runner_with_workers(2).unwrap();
    let k = s.load_raw_kernel(&kernel(LDS_EXCHANGE, 256, 0, 2 << 1, KERNARG_SEGMENT_PTR)).unwrap();
    let counter = s.upload(&[0u32; 1]).unwrap();
    let bytes: Vec<u8> = (0..256u32).map(|x| (x * 37 % 251) as u8 + 1).collect();
    let mut args = vec![0u8; 16];
    args[0..8].copy_from_slice(&counter.to_le_bytes());
    args.extend(&bytes);
    args.extend((0..256u32).map(|x| (255 - x) as u8));
    let groups = 50u32;
    s.dispatch(&k, [256 * groups, 1, 1], [256, 1, 1], &args).unwrap();
    let sum: u32 = bytes.iter().map(|&b| b as u32).sum();
    assert_eq!(s.read_vec::<u32>(counter, 1).unwrap()[0], groups * sum);
}

#[test]
fn a_store_outside_the_gpu_vm_is_a_page_fault() {
    use sim::gpu::cp::dispatch::DispatchError;
    use sim::runner::RunnerError;
    let m = Machine::new(default_config());
    let s = m.kernel_runner_with_workers(2).unwrap();
    let code = [
        0xd8ec0400, 0x08000000, // ds_read_b64 v[8:9], v0 offset:1024   (no LDS: v[8:9] = 0)
        0xdc700000, 0x00000008, // flat_store_dword v[8:9], v0           (address 0)
        S_ENDPGM,
    ];
    let k = s.load_raw_kernel(&kernel(&code, 0, 0, 0, 0)).unwrap();
    let e = s.dispatch(&k, [128, 1, 1], [64, 1, 1], &[]).unwrap_err();
    assert!(matches!(e, RunnerError::Dispatch(DispatchError::Fault(f)) if f.va == 0 && f.write), "{e}");
}
