//! SMEM semantics: scalar loads/stores from global memory and through
//! buffer resources, atomics, the time counters, cache ops.
//!
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`;
//! expected values follow the MI200 ISA's SMEM pseudo-code.

use sim::gpu::exec::ExecError;
use sim::isa::{Op, Target};
use sim::testing::{Harness, MEM_BASE};

fn harness() -> Harness {
    let mut h = Harness::new();
    h.wave.sgpr[0] = MEM_BASE as u32;
    h.wave.sgpr[1] = (MEM_BASE >> 32) as u32;
    h
}

/// Fills the first `n` dwords of the memory block with `0x1000 + index`.
fn fill(h: &Harness, n: u32) {
    let bytes: Vec<u8> = (0..n).flat_map(|k| (0x1000 + k).to_le_bytes()).collect();
    h.write_mem(MEM_BASE, &bytes);
}

fn put32(h: &Harness, off: u64, v: u32) {
    h.write_mem(MEM_BASE + off, &v.to_le_bytes());
}

fn put64(h: &Harness, off: u64, v: u64) {
    h.write_mem(MEM_BASE + off, &v.to_le_bytes());
}

fn get64(h: &Harness, off: u64) -> u64 {
    let mut b = [0u8; 8];
    h.read_mem(MEM_BASE + off, &mut b);
    u64::from_le_bytes(b)
}

/// A buffer resource at MEM_BASE + `off` in s[8:11].
fn rsrc(h: &mut Harness, off: u64, stride: u32, num_records: u32) {
    let base = MEM_BASE + off;
    h.wave.sgpr[8] = base as u32;
    h.wave.sgpr[9] = (base >> 32) as u32 & 0xffff | stride << 16;
    h.wave.sgpr[10] = num_records;
    h.wave.sgpr[11] = 0x0002_7000;
}

#[test]
fn global_loads_of_every_width() {
    for target in [Target::Gfx90a, Target::Gfx942] {
        let mut h = Harness::for_target(target);
        h.wave.sgpr[0] = MEM_BASE as u32;
        fill(&h, 0x60);
        // s_load_dword s4, s[0:1], 0x0; s_load_dwordx4 s[8:11], s[0:1], 0x10 (same on gfx940)
        h.run(&[0xc002_0100, 0x0000_0000, 0xc00a_0200, 0x0000_0010]).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        assert_eq!(h.wave.sgpr[4], 0x1000);
        assert_eq!(h.wave.sgpr[8..12], [0x1004, 0x1005, 0x1006, 0x1007]);
    }
    let mut h = harness();
    fill(&h, 0x60);
    h.run(&[
        0xc006_0100,
        0x0000_0008, // s_load_dwordx2 s[4:5], s[0:1], 0x8
    ])
    .unwrap();
    assert_eq!(h.wave.sgpr[4..6], [0x1002, 0x1003]);
    h.run(&[0xc00a_0100, 0x0000_0010]).unwrap(); // s_load_dwordx4 s[4:7], s[0:1], 0x10
    assert_eq!(h.wave.sgpr[4..8], [0x1004, 0x1005, 0x1006, 0x1007]);
    h.run(&[0xc00e_0200, 0x0000_0020]).unwrap(); // s_load_dwordx8 s[8:15], s[0:1], 0x20
    assert_eq!(h.wave.sgpr[8..16], std::array::from_fn::<u32, 8, _>(|k| 0x1008 + k as u32));
    h.run(&[0xc012_0400, 0x0000_0040]).unwrap(); // s_load_dwordx16 s[16:31], s[0:1], 0x40
    assert_eq!(h.wave.sgpr[16..32], std::array::from_fn::<u32, 16, _>(|k| 0x1010 + k as u32));
}

#[test]
fn global_load_offsets() {
    let mut h = harness();
    fill(&h, 0x20);
    // SGPR offset alone.
    h.wave.sgpr[2] = 0x14;
    h.run(&[0xc000_0100, 0x0000_0002]).unwrap(); // s_load_dword s4, s[0:1], s2
    assert_eq!(h.wave.sgpr[4], 0x1005);
    // SGPR offset plus immediate.
    h.run(&[0xc002_4100, 0x0400_0008]).unwrap(); // s_load_dword s4, s[0:1], s2 offset:0x8
    assert_eq!(h.wave.sgpr[4], 0x1007);
    // Negative immediate (21-bit signed).
    h.wave.sgpr[0] = MEM_BASE as u32 + 0x10;
    h.run(&[0xc002_0100, 0x001f_fffc]).unwrap(); // s_load_dword s4, s[0:1], -4
    assert_eq!(h.wave.sgpr[4], 0x1003);
    // The two low address bits are ignored.
    h.wave.sgpr[0] = MEM_BASE as u32 + 0x13;
    h.run(&[0xc002_0100, 0x0000_0000]).unwrap(); // s_load_dword s4, s[0:1], 0x0
    assert_eq!(h.wave.sgpr[4], 0x1004);
}

#[test]
fn global_access_outside_memory_faults() {
    let mut h = harness();
    h.wave.sgpr[0] = 0x10;
    h.wave.sgpr[1] = 0;
    let err = h.run(&[0xc00a_0100, 0x0000_0010]).unwrap_err(); // s_load_dwordx4 s[4:7], s[0:1], 0x10
    assert!(matches!(err, ExecError::Fault(f) if !f.write), "{err:?}");
    let err = h.run(&[0xc042_0100, 0x0000_0100]).unwrap_err(); // s_store_dword s4, s[0:1], 0x100
    assert!(matches!(err, ExecError::Fault(f) if f.write), "{err:?}");
}

#[test]
fn global_stores() {
    let mut h = harness();
    h.wave.sgpr[4..8].copy_from_slice(&[11, 22, 33, 44]);
    h.run(&[
        0xc042_0100,
        0x0000_0100, // s_store_dword s4, s[0:1], 0x100
        0xc046_0100,
        0x0000_0108, // s_store_dwordx2 s[4:5], s[0:1], 0x108
        0xc04a_0100,
        0x0000_0110, // s_store_dwordx4 s[4:7], s[0:1], 0x110
    ])
    .unwrap();
    let got: Vec<u32> = (0..8).map(|k| h.read_u32(MEM_BASE + 0x100 + 4 * k)).collect();
    assert_eq!(got, [11, 0, 11, 22, 11, 22, 33, 44]);
}

#[test]
fn buffer_loads_are_bounded_per_dword() {
    let mut h = harness();
    fill(&h, 0x40);
    // 8 bytes of records: dwords 0 and 1 exist, 2 and 3 read 0.
    rsrc(&mut h, 0x20, 0, 8);
    h.wave.sgpr[4..8].fill(0xdead);
    h.run(&[0xc02a_0104, 0x0000_0000]).unwrap(); // s_buffer_load_dwordx4 s[4:7], s[8:11], 0x0
    assert_eq!(h.wave.sgpr[4..8], [0x1008, 0x1009, 0, 0]);
    // A partial dword (6 bytes of records) does not count.
    rsrc(&mut h, 0x20, 0, 6);
    h.run(&[0xc02a_0104, 0x0000_0000]).unwrap();
    assert_eq!(h.wave.sgpr[4..8], [0x1008, 0, 0, 0]);
    // With a stride the range is num_records × stride bytes.
    rsrc(&mut h, 0x20, 4, 3);
    h.run(&[0xc02a_0104, 0x0000_0000]).unwrap();
    assert_eq!(h.wave.sgpr[4..8], [0x1008, 0x1009, 0x100a, 0]);
    // SGPR offset.
    rsrc(&mut h, 0, 0, 0x100);
    h.wave.sgpr[2] = 0xc;
    h.run(&[0xc020_0104, 0x0000_0002]).unwrap(); // s_buffer_load_dword s4, s[8:11], s2
    assert_eq!(h.wave.sgpr[4], 0x1003);
    h.wave.sgpr[2] = 0x100;
    h.run(&[0xc020_0104, 0x0000_0002]).unwrap();
    assert_eq!(h.wave.sgpr[4], 0, "offset == num_records is out of range");
    // An out-of-range buffer far outside mapped memory reads zeros, no fault.
    h.wave.sgpr[8] = 0;
    h.wave.sgpr[9] = 0;
    h.wave.sgpr[10] = 0;
    h.run(&[0xc02a_0104, 0x0000_0000]).unwrap();
    assert_eq!(h.wave.sgpr[4..8], [0; 4]);
}

#[test]
fn buffer_stores_drop_out_of_range_dwords() {
    let mut h = harness();
    rsrc(&mut h, 0x40, 0, 12);
    h.wave.sgpr[4..8].copy_from_slice(&[1, 2, 3, 4]);
    h.run(&[0xc06a_0104, 0x0000_0000]).unwrap(); // s_buffer_store_dwordx4 s[4:7], s[8:11], 0x0
    let got: Vec<u32> = (0..4).map(|k| h.read_u32(MEM_BASE + 0x40 + 4 * k)).collect();
    assert_eq!(got, [1, 2, 3, 0]);
}

#[test]
fn atomics_return_the_old_value_with_glc() {
    let mut h = harness();
    put32(&h, 0, 40);
    h.wave.sgpr[4] = 2;
    h.run(&[0xc20b_0100, 0x0000_0000]).unwrap(); // s_atomic_add s4, s[0:1], 0x0 glc
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (40, 42));
    // Without glc the data register is left alone.
    h.wave.sgpr[4] = 8;
    h.run(&[0xc20a_0100, 0x0000_0000]).unwrap(); // s_atomic_add s4, s[0:1], 0x0
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (8, 50));
    // Wrap-around.
    put32(&h, 0, u32::MAX);
    h.wave.sgpr[4] = 3;
    h.run(&[0xc20b_0100, 0x0000_0000]).unwrap();
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (u32::MAX, 2));
}

#[test]
fn compare_swap() {
    let mut h = harness();
    put32(&h, 0, 7);
    // DATA[0] is the new value, DATA[1] the value compared with.
    h.wave.sgpr[4..6].copy_from_slice(&[100, 7]);
    h.run(&[0xc207_0100, 0x0000_0000]).unwrap(); // s_atomic_cmpswap s[4:5], s[0:1], 0x0 glc
    assert_eq!((h.wave.sgpr[4], h.wave.sgpr[5], h.read_u32(MEM_BASE)), (7, 7, 100));
    h.wave.sgpr[4..6].copy_from_slice(&[200, 7]);
    h.run(&[0xc207_0100, 0x0000_0000]).unwrap();
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (100, 100), "mismatch leaves memory");
    put64(&h, 8, 0x1_0000_0005);
    h.wave.sgpr[4..8].copy_from_slice(&[9, 9, 5, 1]);
    h.run(&[0xc287_0100, 0x0000_0008]).unwrap(); // s_atomic_cmpswap_x2 s[4:7], s[0:1], 0x8 glc
    assert_eq!((h.wave.sgpr[4], h.wave.sgpr[5], get64(&h, 8)), (5, 1, 0x9_0000_0009));
    assert_eq!(h.wave.sgpr[6..8], [5, 1], "only the old value's dwords are written");
}

#[test]
fn inc_dec_min_max() {
    let mut h = harness();
    // inc: old >= data wraps to 0.
    put32(&h, 0, 5);
    h.wave.sgpr[4] = 5;
    h.run(&[0xc22f_0100, 0x0000_0000]).unwrap(); // s_atomic_inc s4, s[0:1], 0x0 glc
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (5, 0));
    h.wave.sgpr[4] = 5;
    h.run(&[0xc22f_0100, 0x0000_0000]).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 1);
    // dec: 0 or above data reloads data.
    put32(&h, 0, 0);
    h.wave.sgpr[4] = 9;
    h.run(&[0xc233_0100, 0x0000_0000]).unwrap(); // s_atomic_dec s4, s[0:1], 0x0 glc
    assert_eq!(h.read_u32(MEM_BASE), 9);
    put32(&h, 0, 20);
    h.wave.sgpr[4] = 9;
    h.run(&[0xc233_0100, 0x0000_0000]).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 9);
    h.wave.sgpr[4] = 9;
    h.run(&[0xc233_0100, 0x0000_0000]).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 8);
    // smin is signed, umax unsigned.
    put32(&h, 0, 3);
    h.wave.sgpr[4] = (-1i32) as u32;
    h.run(&[0xc213_0100, 0x0000_0000]).unwrap(); // s_atomic_smin s4, s[0:1], 0x0 glc
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE)), (3, u32::MAX));
    h.wave.sgpr[4] = 7;
    h.run(&[0xc21f_0100, 0x0000_0000]).unwrap(); // s_atomic_umax s4, s[0:1], 0x0 glc
    assert_eq!(h.read_u32(MEM_BASE), u32::MAX);
}

#[test]
fn wide_atomics() {
    let mut h = harness();
    put64(&h, 8, 0xffff_ffff);
    h.wave.sgpr[4..6].copy_from_slice(&[1, 0]);
    h.run(&[0xc28f_0100, 0x0000_0008]).unwrap(); // s_atomic_sub_x2 s[4:5], s[0:1], 0x8 glc
    assert_eq!((h.wave.sgpr[4], h.wave.sgpr[5], get64(&h, 8)), (0xffff_ffff, 0, 0xffff_fffe));
    h.wave.sgpr[4..6].copy_from_slice(&[0xaaaa, 0xbbbb]);
    h.run(&[0xc283_0100, 0x0000_0008]).unwrap(); // s_atomic_swap_x2 s[4:5], s[0:1], 0x8 glc
    assert_eq!(get64(&h, 8), 0xbbbb_0000_aaaa);
    // A 64-bit atomic at a 4-byte-aligned address faults.
    let err = h.run(&[0xc28b_0100, 0x0000_0004]).unwrap_err(); // s_atomic_add_x2 s[4:5], s[0:1], 0x4 glc
    assert!(matches!(err, ExecError::Fault(_)), "{err:?}");
}

#[test]
fn buffer_atomics() {
    let mut h = harness();
    rsrc(&mut h, 0x80, 0, 16);
    put32(&h, 0x80, 10);
    h.wave.sgpr[4] = 5;
    h.run(&[0xc10b_0104, 0x0000_0000]).unwrap(); // s_buffer_atomic_add s4, s[8:11], 0x0 glc
    assert_eq!((h.wave.sgpr[4], h.read_u32(MEM_BASE + 0x80)), (10, 15));
    put64(&h, 0x88, (-5i64) as u64);
    h.wave.sgpr[4..6].copy_from_slice(&[2, 0]);
    h.run(&[0xc19b_0104, 0x0000_0008]).unwrap(); // s_buffer_atomic_smax_x2 s[4:5], s[8:11], 0x8 glc
    assert_eq!((h.wave.sgpr[4], h.wave.sgpr[5], get64(&h, 0x88)), (-5i32 as u32, u32::MAX, 2));
    // Out of range: nothing happens, 0 comes back.
    rsrc(&mut h, 0x80, 0, 8);
    h.wave.sgpr[4..6].copy_from_slice(&[7, 7]);
    h.run(&[0xc19b_0104, 0x0000_0008]).unwrap();
    assert_eq!((h.wave.sgpr[4], h.wave.sgpr[5], get64(&h, 0x88)), (0, 0, 2));
}

#[test]
fn time_counters() {
    let mut h = harness();
    let before = sim::clock::gpu_ticks();
    h.run(&[
        0xc090_0100,
        0x0000_0000, // s_memtime s[4:5]
        0xc094_0180,
        0x0000_0000, // s_memrealtime s[6:7]
    ])
    .unwrap();
    let after = sim::clock::gpu_ticks();
    let real = h.wave.sgpr[6] as u64 | (h.wave.sgpr[7] as u64) << 32;
    assert!((before..=after).contains(&real), "{before} <= {real} <= {after}");
    // s_memtime counts the GPU's max engine clock: MHz / 100 ticks per
    // 100 MHz tick.
    let mhz = sim::config::default_config().gpus()[0].max_engine_clk_fcompute as u64;
    assert!(mhz >= 100);
    let time = h.wave.sgpr[4] as u64 | (h.wave.sgpr[5] as u64) << 32;
    let as_ticks = time as u128 * 100 / mhz as u128;
    assert!(as_ticks + 1 >= before as u128 && as_ticks <= after as u128 + 1, "{time} vs {before}..{after}");
    std::thread::sleep(std::time::Duration::from_millis(2));
    h.run(&[0xc090_0100, 0x0000_0000]).unwrap();
    let later = h.wave.sgpr[4] as u64 | (h.wave.sgpr[5] as u64) << 32;
    assert!(later >= time + 2 * 1000 * mhz, "2 ms at {mhz} MHz");
}

#[test]
fn cache_ops_do_nothing() {
    let mut h = harness();
    let before = h.wave.clone();
    h.run(&[
        0xc084_0000,
        0x0000_0000, // s_dcache_wb
        0xc080_0000,
        0x0000_0000, // s_dcache_inv
        0xc09a_01c0,
        0x0000_0000, // s_atc_probe 7, s[0:1], 0x0
        0xc0a0_0000,
        0x0000_0002, // s_dcache_discard s[0:1], s2
    ])
    .unwrap();
    assert_eq!(h.wave.sgpr, before.sgpr);
}

#[test]
fn scratch_smem_is_unimplemented() {
    let mut h = harness();
    // s_scratch_load_dword s4, s[0:1], 0x0
    assert_eq!(h.run(&[0xc016_0100, 0x0000_0000]), Err(ExecError::Unimplemented(Op::SScratchLoadDword)));
    // s_scratch_store_dword s4, s[0:1], 0x0
    assert_eq!(h.run(&[0xc056_0100, 0x0000_0000]), Err(ExecError::Unimplemented(Op::SScratchStoreDword)));
}
