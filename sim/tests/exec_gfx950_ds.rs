//! gfx950 (CDNA4) LDS additions on one wave: the transpose loads (`ds_read_b64_tr_b4/b8/b16`,
//! `ds_read_b96_tr_b6`), the FFT and rotate modes of `ds_swizzle_b32`, and the 16-byte
//! per-lane slots of the `dwordx3/x4` loads to LDS.
//!
//! Encodings come from `tests/data/isa/gfx950` (LLVM 22's disassembler), with register and
//! offset fields rewritten where noted. Expected values are worked out in the tests from the
//! CDNA4 ISA guide's text: the transpose loads from §11.4 ("MFMA Transpose Load from LDS"),
//! read as a matrix held by 16 lanes; the swizzle from the guide's example tables; the
//! LDS-direct loads from §9.1.9 and §10.3.

use sim::gpu::exec::{ExecError, LANES};
use sim::isa::Target;
use sim::testing::{splitmix, Harness, MEM_BASE};

/// `ds_read_b64_tr_b4 v[16:17], v32` and friends: address v32, destination v16.
const TR_B4: [u32; 2] = [0xd9c00000, 0x10000020];
const TR_B6: [u32; 2] = [0xd9c20000, 0x10000020];
const TR_B8: [u32; 2] = [0xd9c40000, 0x10000020];
const TR_B16: [u32; 2] = [0xd9c60000, 0x10000020];
const ADDR: usize = 32;
const DST: usize = 16;

/// The encoding with the instruction offset and the destination register replaced.
fn with(w: [u32; 2], offset: u16, vdst: usize) -> [u32; 2] {
    [w[0] & !0xffff | offset as u32, w[1] & 0x00ff_ffff | (vdst as u32) << 24]
}

fn harness() -> Harness {
    let mut h = Harness::for_target(Target::Gfx950);
    for (i, b) in h.lds.iter_mut().enumerate() {
        *b = splitmix(i as u64) as u8;
    }
    h
}

/// (element bits, bytes per lane, elements per lane) of each transpose load.
fn shape(bits: u32) -> (usize, usize) {
    match bits {
        4 => (8, 16),
        6 => (12, 16),
        8 => (8, 8),
        16 => (8, 4),
        _ => unreachable!(),
    }
}

/// Element `e` of a little-endian bit string.
fn elem(bytes: &[u8], bits: u32, e: usize) -> u32 {
    (0..bits as usize)
        .map(|b| (bytes[(e * bits as usize + b) / 8] as u32 >> ((e * bits as usize + b) % 8) & 1) << b)
        .sum()
}

/// Packs elements into `dwords` registers, element `k` at bit `k * bits`.
fn pack(elems: &[u32], bits: u32, dwords: usize) -> Vec<u32> {
    let mut out = vec![0u32; dwords];
    for (k, &v) in elems.iter().enumerate() {
        for b in 0..bits as usize {
            let at = k * bits as usize + b;
            out[at / 32] |= (v >> b & 1) << (at % 32);
        }
    }
    out
}

/// The guide's reading of a transpose load, per 16-lane group: the lanes' loads form a matrix
/// of `n` rows by 16 columns (a row is `16 / n` lanes' worth of consecutive elements), and
/// lane `j` of the group receives column `j`, top to bottom.
fn model(lds: &[u8], addr: impl Fn(usize) -> usize, bits: u32) -> Vec<Vec<u32>> {
    let (bytes, n) = shape(bits);
    let load = |l: usize| -> Vec<u8> {
        let a = addr(l);
        // A load reaching beyond the LDS reads zeros (the simulator's rule for every DS read).
        lds.get(a..a + bytes).map_or(vec![0; bytes], |s| s.to_vec())
    };
    let lanes_per_row = 16 / n;
    (0..LANES)
        .map(|l| {
            let group = l / 16 * 16;
            let mut matrix = vec![vec![0u32; 16]; n];
            for t in 0..16 {
                let data = load(group + t);
                let (row, col0) = (t / lanes_per_row, t % lanes_per_row * n);
                for e in 0..n {
                    matrix[row][col0 + e] = elem(&data, bits, e);
                }
            }
            let column: Vec<u32> = (0..n).map(|k| matrix[k][l % 16]).collect();
            pack(&column, bits, bytes / 4)
        })
        .collect()
}

fn regs(h: &Harness, base: usize, n: usize, l: usize) -> Vec<u32> {
    (0..n).map(|r| h.wave.vgpr[base + r][l]).collect()
}

#[test]
fn transpose_loads_exchange_columns_of_each_16_lane_group() {
    for (words, bits) in [(TR_B4, 4), (TR_B6, 6), (TR_B8, 8), (TR_B16, 16)] {
        let mut h = harness();
        // Scattered, aligned addresses (plus the instruction offset); lane 37 reads past the
        // end of the 64 KiB LDS.
        let align = if bits == 6 { 16 } else { 8 };
        let offset = 0x48;
        let vaddr =
            |l: usize| if l == 37 { 0xfffc } else { (16 + splitmix(1000 + l as u64) as usize % 3000) * align - offset };
        for l in 0..LANES {
            h.wave.vgpr[ADDR][l] = vaddr(l) as u32;
        }
        let want = model(&h.lds, |l| vaddr(l) + offset, bits);
        h.run(&with(words, offset as u16, DST)).unwrap();
        let n = shape(bits).0 / 4;
        for (l, want) in want.iter().enumerate() {
            assert_eq!(&regs(&h, DST, n, l), want, "b{bits} lane {l}");
        }
        // Register above the destination untouched.
        assert_eq!(h.wave.vgpr[DST + n], [0; LANES], "b{bits}");
    }
}

/// The guide's use: matrix A (16 rows M by K columns) stored M-contiguous in LDS ("column
/// major matrix A"), two transpose loads give each lane the K values of its row that the
/// double-rate MFMA operand layout wants (lane `l`: M = l % 16, consecutive K from
/// `l / 16 * 2n`). "The first loads K=0..3 and K=8..11 into two VGPRs, and the next loads
/// K=4..7 and 12..15" (16-bit); "K values (0..7, 16..23, 32..39 and 48..55)" (8-bit);
/// "(0..15, 32..47)" (4- and 6-bit).
#[test]
fn two_transpose_loads_build_the_mfma_operand_from_an_m_contiguous_matrix() {
    for (words, bits) in [(TR_B4, 4), (TR_B6, 6), (TR_B8, 8), (TR_B16, 16)] {
        let (bytes, n) = shape(bits);
        let k_size = 2 * n * 4;
        let a = |m: usize, k: usize| splitmix((m * 1000 + k) as u64) & ((1u32 << bits) - 1);
        // One K-row holds 16 M values; rows are `pitch` bytes apart (16 for the 12-byte rows of
        // 6-bit data, which want 128-bit alignment).
        let row_bytes = 16 * bits as usize / 8;
        let pitch = if bits == 6 { 32 } else { row_bytes };
        let base = 0x400;
        let mut h = harness();
        for k in 0..k_size {
            let row: Vec<u32> = (0..16).map(|m| a(m, k)).collect();
            let packed: Vec<u8> =
                pack(&row, bits, row_bytes.div_ceil(4)).iter().flat_map(|d| d.to_le_bytes()).collect();
            h.lds[base + k * pitch..base + k * pitch + row_bytes].copy_from_slice(&packed[..row_bytes]);
        }
        // Lane t of group g reads K-row `2n*g + t / (16/n)` (+ n for the second load), M values
        // from `(t % (16/n)) * n`.
        let lanes_per_row = 16 / n;
        let set_addr = |h: &mut Harness, second: usize| {
            for l in 0..LANES {
                let (g, t) = (l / 16, l % 16);
                let k = 2 * n * g + second * n + t / lanes_per_row;
                let m0 = t % lanes_per_row * n;
                h.wave.vgpr[ADDR][l] = (base + k * pitch + m0 * bits as usize / 8) as u32;
            }
        };
        let dwords = bytes / 4;
        set_addr(&mut h, 0);
        h.run(&with(words, 0, DST)).unwrap();
        set_addr(&mut h, 1);
        h.run(&with(words, 0, DST + dwords)).unwrap();
        for l in 0..LANES {
            let (m, k0) = (l % 16, l / 16 * 2 * n);
            let row: Vec<u32> = (0..2 * n).map(|i| a(m, k0 + i)).collect();
            assert_eq!(regs(&h, DST, 2 * dwords, l), pack(&row, bits, 2 * dwords), "b{bits} lane {l}");
        }
    }
}

#[test]
fn transpose_loads_need_the_whole_wave() {
    let mut h = harness();
    h.wave.exec = 0xffff_ffff_ffff_fffe;
    let err = h.run(&TR_B16).unwrap_err();
    assert!(matches!(err, ExecError::Invalid(ref m) if m.contains("EXEC")), "{err}");
    // No lanes: nothing happens.
    h.wave.exec = 0;
    h.wave.vgpr[DST] = [7; LANES];
    h.run(&TR_B8).unwrap();
    assert_eq!(h.wave.vgpr[DST], [7; LANES]);
}

/// `ds_swizzle_b32 v16, v32 offset:...`.
fn swizzle(target: Target, offset: u16, exec: u64, input: impl Fn(usize) -> u32) -> [u32; LANES] {
    let mut h = Harness::for_target(target);
    h.wave.vgpr[32] = std::array::from_fn(input);
    h.wave.vgpr[16] = [0xdead; LANES];
    h.wave.exec = exec;
    h.run(&[0xd87a0000 | offset as u32, 0x10000020]).unwrap();
    h.wave.vgpr[16]
}

/// The guide's example swizzles use the input {1, 2, ... 0x20} (lane `i` of 32 holds `i + 1`).
/// Here the upper 32 lanes hold 0x100 more, to show they keep to their own half.
fn check_example(offset: u16, want32: &[u32; 32]) {
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let out = swizzle(target, offset, u64::MAX, |l| (l % 32) as u32 + 1 + (l / 32 * 0x100) as u32);
        for l in 0..LANES {
            assert_eq!(out[l], want32[l % 32] + (l / 32 * 0x100) as u32, "{target:?} offset {offset:#x} lane {l}");
        }
    }
}

#[test]
fn swizzle_fft_mode_follows_the_guide_examples() {
    check_example(
        0xe000,
        &[
            0x1, 0x11, 0x9, 0x19, 0x5, 0x15, 0xd, 0x1d, 0x3, 0x13, 0xb, 0x1b, 0x7, 0x17, 0xf, 0x1f, 0x2, 0x12, 0xa,
            0x1a, 0x6, 0x16, 0xe, 0x1e, 0x4, 0x14, 0xc, 0x1c, 0x8, 0x18, 0x10, 0x20,
        ],
    );
    check_example(
        0xe010,
        &[
            0x1, 0x9, 0x5, 0xd, 0x3, 0xb, 0x7, 0xf, 0x2, 0xa, 0x6, 0xe, 0x4, 0xc, 0x8, 0x10, 0x11, 0x19, 0x15, 0x1d,
            0x13, 0x1b, 0x17, 0x1f, 0x12, 0x1a, 0x16, 0x1e, 0x14, 0x1c, 0x18, 0x20,
        ],
    );
    // 0x1f: no swizzle.
    check_example(0xe01f, &std::array::from_fn(|i| i as u32 + 1));
}

#[test]
fn swizzle_rotate_mode_follows_the_guide_examples() {
    // offset[9:5] = 1 (rotate by one), offset[10] = direction (1 = right), offset[4:0] = mask.
    check_example(0xc020, &std::array::from_fn(|i| (i as u32 + 1) % 32 + 1));
    check_example(0xc420, &std::array::from_fn(|i| (i as u32 + 31) % 32 + 1));
    check_example(
        0xc021,
        &[
            0x1, 0x4, 0x3, 0x6, 0x5, 0x8, 0x7, 0xa, 0x9, 0xc, 0xb, 0xe, 0xd, 0x10, 0xf, 0x12, 0x11, 0x14, 0x13, 0x16,
            0x15, 0x18, 0x17, 0x1a, 0x19, 0x1c, 0x1b, 0x1e, 0x1d, 0x20, 0x1f, 0x2,
        ],
    );
    check_example(
        0xc421,
        &[
            0x1f, 0x2, 0x1, 0x4, 0x3, 0x6, 0x5, 0x8, 0x7, 0xa, 0x9, 0xc, 0xb, 0xe, 0xd, 0x10, 0xf, 0x12, 0x11, 0x14,
            0x13, 0x16, 0x15, 0x18, 0x17, 0x1a, 0x19, 0x1c, 0x1b, 0x1e, 0x1d, 0x20,
        ],
    );
    // Rotate left by 5: lane i reads lane (i + 5) mod 32 of its half.
    check_example(0xc0a0, &std::array::from_fn(|i| (i as u32 + 5) % 32 + 1));
}

#[test]
fn swizzle_modes_read_zero_from_inactive_lanes_and_keep_inactive_destinations() {
    // Lane 1 and lanes 32..47 off. Rotate left by one: lane 0 reads lane 1 (off), lane 31
    // reads lane 0.
    let exec = 0xffff_0000_ffff_fffd;
    let out = swizzle(Target::Gfx950, 0xc020, exec, |l| 100 + l as u32);
    for (l, &got) in out.iter().enumerate() {
        let src = l / 32 * 32 + (l % 32 + 1) % 32;
        let want = if exec >> l & 1 == 0 {
            0xdead
        } else if exec >> src & 1 == 0 {
            0
        } else {
            100 + src as u32
        };
        assert_eq!(got, want, "lane {l}");
    }
    // The bit-mask and quad-permute modes below 0xc000 are unchanged: 0xbfff is quad
    // permute (offset[15]) with every selector 3.
    let out = swizzle(Target::Gfx950, 0xbfff, u64::MAX, |l| l as u32);
    assert_eq!(out, std::array::from_fn(|l| (l | 3) as u32));
}

/// `global_load_lds_dwordx3 v[32:33], off offset:16` and the x4 form.
const GLOBAL_LOAD_LDS_DWORDX3: [u32; 2] = [0xddf88010, 0x107f3020];
const GLOBAL_LOAD_LDS_DWORDX4: [u32; 2] = [0xddf48010, 0x107f3020];
/// `buffer_load_dwordx3 v2, s[8:11], 0 offen lds` and the x4 form with `offset:4`.
const BUFFER_LOAD_DWORDX3_LDS: [u32; 2] = [0xe0591000, 0x80020002];
const BUFFER_LOAD_DWORDX4_LDS: [u32; 2] = [0xe05d1004, 0x80020002];

fn mem_word(i: u64) -> u32 {
    0x5000_0000 | i as u32
}

fn lds_u32(h: &Harness, at: usize) -> u32 {
    u32::from_le_bytes(h.lds[at..at + 4].try_into().unwrap())
}

/// A gfx950 wave with 160 KiB of LDS filled with 0xee, and words `mem_word(i)` at MEM_BASE.
fn lds_direct_harness() -> Harness {
    let mut h = Harness::for_target(Target::Gfx950);
    h.lds = vec![0xee; 160 * 1024];
    let bytes: Vec<u8> = (0..2048).flat_map(|i| mem_word(i).to_le_bytes()).collect();
    h.write_mem(MEM_BASE, &bytes);
    h
}

const HOLES: u64 = 0xf0f0_0000_ffff_0ff5;

#[test]
fn global_loads_to_lds_give_each_lane_16_bytes() {
    for (words, dwords) in [(GLOBAL_LOAD_LDS_DWORDX3, 3), (GLOBAL_LOAD_LDS_DWORDX4, 4)] {
        let mut h = lds_direct_harness();
        h.wave.exec = HOLES;
        // "LDSoffset(M0[17:2] * 4)": bits 17:16 count on gfx950, bits 1:0 and 31:18 do not.
        h.wave.m0 = 0xfffc_0000 | 0x2_0203;
        let lds_base = 0x2_0200 + 16; // + the instruction offset
        let src = |l: usize| MEM_BASE + 16 * ((l as u64 * 7) % 64); // 16-byte records, scattered
        for l in 0..LANES {
            h.wave.vgpr[32][l] = src(l) as u32;
            h.wave.vgpr[33][l] = (src(l) >> 32) as u32;
        }
        h.run(&words).unwrap();
        for l in 0..LANES {
            for d in 0..4 {
                let at = lds_base + 16 * l + 4 * d;
                let on = HOLES >> l & 1 != 0 && d < dwords;
                let word = (src(l) - MEM_BASE + 16) / 4 + d as u64; // + the instruction offset
                let want = if on { mem_word(word) } else { 0xeeee_eeee };
                assert_eq!(lds_u32(&h, at), want, "x{dwords} lane {l} dword {d}");
            }
        }
        assert_eq!(lds_u32(&h, lds_base - 4), 0xeeee_eeee);
        assert_eq!(lds_u32(&h, lds_base + 16 * 64), 0xeeee_eeee);
    }
}

#[test]
fn buffer_loads_to_lds_give_each_lane_16_bytes() {
    for (words, dwords, inst_offset) in [(BUFFER_LOAD_DWORDX3_LDS, 3, 0), (BUFFER_LOAD_DWORDX4_LDS, 4, 4)] {
        let mut h = lds_direct_harness();
        // V# in s[8:11]: raw buffer at MEM_BASE, 8 KiB.
        h.wave.sgpr[8] = MEM_BASE as u32;
        h.wave.sgpr[9] = (MEM_BASE >> 32) as u32;
        h.wave.sgpr[10] = 8192;
        h.wave.sgpr[11] = 4 | 5 << 3 | 6 << 6 | 7 << 9;
        h.wave.exec = HOLES;
        // "LDS_offset = 18-bit unsigned byte offset from M0[17:0]".
        h.wave.m0 = 0xfffc_0000 | 0x1_8010;
        let lds_base = 0x1_8010 + inst_offset;
        let off = |l: usize| 16 * ((l as u32 * 5) % 64);
        for l in 0..LANES {
            h.wave.vgpr[2][l] = off(l);
        }
        h.run(&words).unwrap();
        for l in 0..LANES {
            for d in 0..4 {
                let at = lds_base + 16 * l + 4 * d;
                let on = HOLES >> l & 1 != 0 && d < dwords;
                let word = (off(l) as u64 + inst_offset as u64) / 4 + d as u64;
                let want = if on { mem_word(word) } else { 0xeeee_eeee };
                assert_eq!(lds_u32(&h, at), want, "x{dwords} lane {l} dword {d}");
            }
        }
    }
}
