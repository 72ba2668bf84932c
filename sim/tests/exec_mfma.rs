//! MFMA: register layouts against AMD's matrix instruction calculator, and results
//! against a CPU matrix product, for every dense `v_mfma_*` op of gfx90a and gfx942.
//!
//! `data/mfma/layouts.txt` was generated offline with AMD's "AMD Matrix Instruction
//! Calculator" (`--matrix-layout --csv`, CDNA2 and CDNA3): for each matrix, the columns
//! (register:bit:width) and for each lane the element (block.row.col) each column holds.
//! The functional tests place inputs and read results through that data, not through the
//! simulator's own layout code, so the two are checked independently.

mod mfma_support;

use mfma_support::{encode, put, Rng};
use sim::gpu::exec::ops::mfma::shape::{Acc, Elem, Shape};
use sim::gpu::exec::ExecError;
use sim::isa::{Op, Target};
use sim::testing::Harness;
use std::collections::HashMap;

/// One matrix's layout: per lane, per column, the (register, bit, width) and the element.
struct MatrixLayout {
    cols: Vec<(usize, usize, usize)>,
    /// `lanes[lane][col] = (block, row, col)`.
    lanes: Vec<Vec<(usize, usize, usize)>>,
}

struct Layouts {
    by_name: HashMap<String, [std::rc::Rc<MatrixLayout>; 3]>,
}

fn layouts() -> Layouts {
    let text = include_str!("data/mfma/layouts.txt");
    let mut by_name = HashMap::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let names: Vec<&str> = head.strip_prefix("layout ").expect("a layout line").split(' ').collect();
        let mut mats = Vec::new();
        for _ in 0..3 {
            let cols_line = lines.next().unwrap();
            let cols = cols_line[2..]
                .split(' ')
                .map(|c| {
                    let v: Vec<usize> = c.split(':').map(|x| x.parse().unwrap()).collect();
                    (v[0], v[1], v[2])
                })
                .collect();
            let lanes = (0..64)
                .map(|_| {
                    lines
                        .next()
                        .unwrap()
                        .split(' ')
                        .map(|e| {
                            let v: Vec<usize> = e.split('.').map(|x| x.parse().unwrap()).collect();
                            (v[0], v[1], v[2])
                        })
                        .collect()
                })
                .collect();
            mats.push(std::rc::Rc::new(MatrixLayout { cols, lanes }));
        }
        for n in names {
            by_name.insert(n.to_string(), [mats[0].clone(), mats[1].clone(), mats[2].clone()]);
        }
    }
    Layouts { by_name }
}

fn op_named(name: &str) -> Op {
    (0..).map_while(Op::from_index).find(|op| op.name() == name).unwrap_or_else(|| panic!("no op {name}"))
}

#[test]
fn layouts_match_the_matrix_instruction_calculator() {
    let data = layouts();
    let mut checked = 0;
    // The calculator knows CDNA2 and CDNA3; gfx950-only ops are checked by `exec_gfx950.rs`
    // and `exec_gfx950_mfma.rs`.
    let older: std::collections::BTreeSet<&str> =
        sim::isa::mnemonics(Target::Gfx90a).chain(sim::isa::mnemonics(Target::Gfx942)).collect();
    for op in (0..).map_while(Op::from_index).filter(|op| op.name().starts_with("v_mfma") && older.contains(op.name()))
    {
        let [a, b, d] = data.by_name.get(op.name()).unwrap_or_else(|| panic!("{} missing from the data", op.name()));
        let s = Shape::of(op).unwrap();
        for (which, m) in [("A", a), ("B", b), ("D", d)] {
            for (lane, entries) in m.lanes.iter().enumerate() {
                for (&(reg, bit, _), &(blk, r, c)) in m.cols.iter().zip(entries) {
                    let p = match which {
                        "A" => s.a_pos(blk, r, c),
                        "B" => s.b_pos(blk, r, c),
                        _ => s.d_pos(blk, r, c),
                    };
                    assert_eq!((p.lane, p.reg, p.bit), (lane, reg, bit), "{} {which}[{blk}][{r}][{c}]", op.name());
                }
            }
        }
        checked += 1;
    }
    // 27 gfx90a spellings + 32 gfx942 ones (the decoder shares opcodes between them).
    assert!(checked >= 50, "only {checked} ops checked");
}

/// Each op assembled with llvm-mc (gfx90a: llvm-mc-15, gfx942: llvm-mc-19) with A in
/// v[0:1], B in v[2:3], and C = D at v32.
const ENCODINGS: &[(Target, &str, [u32; 2])] = &[
    // v_mfma_f32_32x32x1f32 v[32:63], v0, v2, v[32:63]
    (Target::Gfx90a, "v_mfma_f32_32x32x1f32", [0xd3c00020, 0x04820500]),
    // v_mfma_f32_16x16x1f32 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_f32_16x16x1f32", [0xd3c10020, 0x04820500]),
    // v_mfma_f32_4x4x1f32 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_f32_4x4x1f32", [0xd3c20020, 0x04820500]),
    // v_mfma_f32_32x32x2f32 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_f32_32x32x2f32", [0xd3c40020, 0x04820500]),
    // v_mfma_f32_16x16x4f32 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_f32_16x16x4f32", [0xd3c50020, 0x04820500]),
    // v_mfma_f32_32x32x4f16 v[32:63], v[0:1], v[2:3], v[32:63]
    (Target::Gfx90a, "v_mfma_f32_32x32x4f16", [0xd3c80020, 0x04820500]),
    // v_mfma_f32_16x16x4f16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx90a, "v_mfma_f32_16x16x4f16", [0xd3c90020, 0x04820500]),
    // v_mfma_f32_4x4x4f16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx90a, "v_mfma_f32_4x4x4f16", [0xd3ca0020, 0x04820500]),
    // v_mfma_f32_32x32x8f16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx90a, "v_mfma_f32_32x32x8f16", [0xd3cc0020, 0x04820500]),
    // v_mfma_f32_16x16x16f16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx90a, "v_mfma_f32_16x16x16f16", [0xd3cd0020, 0x04820500]),
    // v_mfma_i32_32x32x4i8 v[32:63], v0, v2, v[32:63]
    (Target::Gfx90a, "v_mfma_i32_32x32x4i8", [0xd3d00020, 0x04820500]),
    // v_mfma_i32_16x16x4i8 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_i32_16x16x4i8", [0xd3d10020, 0x04820500]),
    // v_mfma_i32_4x4x4i8 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_i32_4x4x4i8", [0xd3d20020, 0x04820500]),
    // v_mfma_i32_32x32x8i8 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_i32_32x32x8i8", [0xd3d40020, 0x04820500]),
    // v_mfma_i32_16x16x16i8 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_i32_16x16x16i8", [0xd3d50020, 0x04820500]),
    // v_mfma_f32_32x32x4bf16_1k v[32:63], v[0:1], v[2:3], v[32:63]
    (Target::Gfx90a, "v_mfma_f32_32x32x4bf16_1k", [0xd3e30020, 0x04820500]),
    // v_mfma_f32_16x16x4bf16_1k v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx90a, "v_mfma_f32_16x16x4bf16_1k", [0xd3e40020, 0x04820500]),
    // v_mfma_f32_4x4x4bf16_1k v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx90a, "v_mfma_f32_4x4x4bf16_1k", [0xd3e50020, 0x04820500]),
    // v_mfma_f32_32x32x8bf16_1k v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx90a, "v_mfma_f32_32x32x8bf16_1k", [0xd3e60020, 0x04820500]),
    // v_mfma_f32_16x16x16bf16_1k v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx90a, "v_mfma_f32_16x16x16bf16_1k", [0xd3e70020, 0x04820500]),
    // v_mfma_f32_32x32x2bf16 v[32:63], v0, v2, v[32:63]
    (Target::Gfx90a, "v_mfma_f32_32x32x2bf16", [0xd3e80020, 0x04820500]),
    // v_mfma_f32_16x16x2bf16 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_f32_16x16x2bf16", [0xd3e90020, 0x04820500]),
    // v_mfma_f32_4x4x2bf16 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_f32_4x4x2bf16", [0xd3eb0020, 0x04820500]),
    // v_mfma_f32_32x32x4bf16 v[32:47], v0, v2, v[32:47]
    (Target::Gfx90a, "v_mfma_f32_32x32x4bf16", [0xd3ec0020, 0x04820500]),
    // v_mfma_f32_16x16x8bf16 v[32:35], v0, v2, v[32:35]
    (Target::Gfx90a, "v_mfma_f32_16x16x8bf16", [0xd3ed0020, 0x04820500]),
    // v_mfma_f64_16x16x4f64 v[32:39], v[0:1], v[2:3], v[32:39]
    (Target::Gfx90a, "v_mfma_f64_16x16x4f64", [0xd3ee0020, 0x04820500]),
    // v_mfma_f64_4x4x4f64 v[32:33], v[0:1], v[2:3], v[32:33]
    (Target::Gfx90a, "v_mfma_f64_4x4x4f64", [0xd3ef0020, 0x04820500]),
    // v_mfma_f32_16x16x8_xf32 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x8_xf32", [0xd3be0020, 0x04820500]),
    // v_mfma_f32_32x32x4_xf32 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x4_xf32", [0xd3bf0020, 0x04820500]),
    // v_mfma_f32_32x32x1_2b_f32 v[32:63], v0, v2, v[32:63]
    (Target::Gfx942, "v_mfma_f32_32x32x1_2b_f32", [0xd3c00020, 0x04820500]),
    // v_mfma_f32_16x16x1_4b_f32 v[32:47], v0, v2, v[32:47]
    (Target::Gfx942, "v_mfma_f32_16x16x1_4b_f32", [0xd3c10020, 0x04820500]),
    // v_mfma_f32_4x4x1_16b_f32 v[32:35], v0, v2, v[32:35]
    (Target::Gfx942, "v_mfma_f32_4x4x1_16b_f32", [0xd3c20020, 0x04820500]),
    // v_mfma_f32_32x32x2_f32 v[32:47], v0, v2, v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x2_f32", [0xd3c40020, 0x04820500]),
    // v_mfma_f32_16x16x4_f32 v[32:35], v0, v2, v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x4_f32", [0xd3c50020, 0x04820500]),
    // v_mfma_f32_32x32x4_2b_f16 v[32:63], v[0:1], v[2:3], v[32:63]
    (Target::Gfx942, "v_mfma_f32_32x32x4_2b_f16", [0xd3c80020, 0x04820500]),
    // v_mfma_f32_16x16x4_4b_f16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_16x16x4_4b_f16", [0xd3c90020, 0x04820500]),
    // v_mfma_f32_4x4x4_16b_f16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_4x4x4_16b_f16", [0xd3ca0020, 0x04820500]),
    // v_mfma_f32_32x32x8_f16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x8_f16", [0xd3cc0020, 0x04820500]),
    // v_mfma_f32_16x16x16_f16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x16_f16", [0xd3cd0020, 0x04820500]),
    // v_mfma_i32_32x32x4_2b_i8 v[32:63], v0, v2, v[32:63]
    (Target::Gfx942, "v_mfma_i32_32x32x4_2b_i8", [0xd3d00020, 0x04820500]),
    // v_mfma_i32_16x16x4_4b_i8 v[32:47], v0, v2, v[32:47]
    (Target::Gfx942, "v_mfma_i32_16x16x4_4b_i8", [0xd3d10020, 0x04820500]),
    // v_mfma_i32_4x4x4_16b_i8 v[32:35], v0, v2, v[32:35]
    (Target::Gfx942, "v_mfma_i32_4x4x4_16b_i8", [0xd3d20020, 0x04820500]),
    // v_mfma_i32_32x32x16_i8 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_i32_32x32x16_i8", [0xd3d60020, 0x04820500]),
    // v_mfma_i32_16x16x32_i8 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_i32_16x16x32_i8", [0xd3d70020, 0x04820500]),
    // v_mfma_f32_32x32x4_2b_bf16 v[32:63], v[0:1], v[2:3], v[32:63]
    (Target::Gfx942, "v_mfma_f32_32x32x4_2b_bf16", [0xd3dd0020, 0x04820500]),
    // v_mfma_f32_16x16x4_4b_bf16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_16x16x4_4b_bf16", [0xd3de0020, 0x04820500]),
    // v_mfma_f32_4x4x4_16b_bf16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_4x4x4_16b_bf16", [0xd3df0020, 0x04820500]),
    // v_mfma_f32_32x32x8_bf16 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x8_bf16", [0xd3e00020, 0x04820500]),
    // v_mfma_f32_16x16x16_bf16 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x16_bf16", [0xd3e10020, 0x04820500]),
    // v_mfma_f64_16x16x4_f64 v[32:39], v[0:1], v[2:3], v[32:39]
    (Target::Gfx942, "v_mfma_f64_16x16x4_f64", [0xd3ee0020, 0x04820500]),
    // v_mfma_f64_4x4x4_4b_f64 v[32:33], v[0:1], v[2:3], v[32:33]
    (Target::Gfx942, "v_mfma_f64_4x4x4_4b_f64", [0xd3ef0020, 0x04820500]),
    // v_mfma_f32_16x16x32_bf8_bf8 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x32_bf8_bf8", [0xd3f00020, 0x04820500]),
    // v_mfma_f32_16x16x32_bf8_fp8 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x32_bf8_fp8", [0xd3f10020, 0x04820500]),
    // v_mfma_f32_16x16x32_fp8_bf8 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x32_fp8_bf8", [0xd3f20020, 0x04820500]),
    // v_mfma_f32_16x16x32_fp8_fp8 v[32:35], v[0:1], v[2:3], v[32:35]
    (Target::Gfx942, "v_mfma_f32_16x16x32_fp8_fp8", [0xd3f30020, 0x04820500]),
    // v_mfma_f32_32x32x16_bf8_bf8 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x16_bf8_bf8", [0xd3f40020, 0x04820500]),
    // v_mfma_f32_32x32x16_bf8_fp8 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x16_bf8_fp8", [0xd3f50020, 0x04820500]),
    // v_mfma_f32_32x32x16_fp8_bf8 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x16_fp8_bf8", [0xd3f60020, 0x04820500]),
    // v_mfma_f32_32x32x16_fp8_fp8 v[32:47], v[0:1], v[2:3], v[32:47]
    (Target::Gfx942, "v_mfma_f32_32x32x16_fp8_fp8", [0xd3f70020, 0x04820500]),
];

fn get(h: &Harness, base: usize, (reg, _, bits): (usize, usize, usize), lane: usize) -> u64 {
    let lo = u64::from(h.wave.vgpr[base + reg][lane]);
    if bits == 64 {
        lo | u64::from(h.wave.vgpr[base + reg + 1][lane]) << 32
    } else {
        lo
    }
}

/// Runs `name` on random small-integer matrices (every partial sum is exact in every
/// accumulator type, so any summation order gives the same bits) and compares every
/// element of D with `A·B + C` computed here.
fn check_product(target: Target, name: &str, words: [u32; 2], seed: u64) {
    let data = layouts();
    let [la, lb, ld] = &data.by_name[name];
    let s = Shape::of(op_named(name)).unwrap();
    let range = match s.a {
        Elem::I8 => 100,
        Elem::Fp8 | Elem::Bf8 => 4,
        _ => 16,
    };
    let mut rng = Rng(seed);
    let mut h = Harness::for_target(target);
    let mut a = vec![0i64; s.blocks * s.m * s.k];
    let mut b = vec![0i64; s.blocks * s.k * s.n];
    let mut c = vec![0i64; s.blocks * s.m * s.n];
    a.iter_mut().chain(b.iter_mut()).for_each(|v| *v = rng.small(range));
    c.iter_mut().for_each(|v| *v = rng.small(1000));
    for (lane, entries) in la.lanes.iter().enumerate() {
        for (&col, &(blk, i, k)) in la.cols.iter().zip(entries) {
            put(&mut h, 0, col, lane, encode(s.a, a[(blk * s.m + i) * s.k + k]));
        }
    }
    for (lane, entries) in lb.lanes.iter().enumerate() {
        for (&col, &(blk, k, j)) in lb.cols.iter().zip(entries) {
            put(&mut h, 2, col, lane, encode(s.b, b[(blk * s.k + k) * s.n + j]));
        }
    }
    let acc_raw = |v: i64| match s.acc {
        Acc::F32 => u64::from((v as f32).to_bits()),
        Acc::I32 => u64::from(v as i32 as u32),
        Acc::F64 => (v as f64).to_bits(),
    };
    for (lane, entries) in ld.lanes.iter().enumerate() {
        for (&col, &(blk, i, j)) in ld.cols.iter().zip(entries) {
            put(&mut h, 32, col, lane, acc_raw(c[(blk * s.m + i) * s.n + j]));
        }
    }
    h.wave.exec = 0x0f0f_0000_ffff_0001; // EXEC does not mask an MFMA.
    h.run(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (lane, entries) in ld.lanes.iter().enumerate() {
        for (&col, &(blk, i, j)) in ld.cols.iter().zip(entries) {
            let want = c[(blk * s.m + i) * s.n + j]
                + (0..s.k).map(|k| a[(blk * s.m + i) * s.k + k] * b[(blk * s.k + k) * s.n + j]).sum::<i64>();
            assert_eq!(get(&h, 32, col, lane), acc_raw(want), "{name}: D[{blk}][{i}][{j}] (lane {lane})");
        }
    }
}

#[test]
fn every_gfx90a_mfma_computes_a_times_b_plus_c() {
    for (i, &(target, name, words)) in ENCODINGS.iter().enumerate().filter(|(_, e)| e.0 == Target::Gfx90a) {
        check_product(target, name, words, 0x9e37_79b9 + i as u64);
    }
}

#[test]
fn every_gfx942_mfma_computes_a_times_b_plus_c() {
    for (i, &(target, name, words)) in ENCODINGS.iter().enumerate().filter(|(_, e)| e.0 == Target::Gfx942) {
        check_product(target, name, words, 0x7f4a_7c15 + i as u64);
    }
}

fn encoding(name: &str) -> [u32; 2] {
    ENCODINGS.iter().find(|e| e.1 == name).unwrap().2
}

fn encoding_for(target: Target, name: &str) -> [u32; 2] {
    ENCODINGS.iter().find(|e| e.0 == target && e.1 == name).unwrap_or_else(|| panic!("{name}")).2
}

#[test]
fn nan_and_infinity_propagate_through_the_product() {
    // v_mfma_f32_4x4x1f32 (16 blocks of 4×4×1): A[b][i][0] is lane i + 4b of v0,
    // B[b][0][j] lane j + 4b of v2, D[b][i][j] register i, lane j + 4b.
    let mut h = Harness::new();
    h.wave.vgpr[0] = [1.0f32.to_bits(); 64];
    h.wave.vgpr[2] = [2.0f32.to_bits(); 64];
    h.wave.vgpr[0][1] = f32::NAN.to_bits(); // block 0, row 1
    h.wave.vgpr[0][4] = f32::INFINITY.to_bits(); // block 1, row 0
    h.wave.vgpr[2][5] = 0f32.to_bits(); // block 1, column 1: inf * 0 = NaN
    h.run(&encoding("v_mfma_f32_4x4x1f32")).unwrap();
    let d = |reg: usize, lane: usize| f32::from_bits(h.wave.vgpr[32 + reg][lane]);
    assert_eq!(d(0, 0), 2.0);
    assert!((0..4).all(|j| d(1, j).is_nan()), "a NaN row stays NaN");
    assert_eq!(d(0, 4), f32::INFINITY);
    assert!(d(0, 5).is_nan(), "inf * 0 is NaN");
    assert_eq!(d(1, 5), 0.0);
}

#[test]
fn integer_accumulation_wraps() {
    // v_mfma_i32_4x4x4i8: block b, row i: lane i + 4b; four i8 per lane (k = byte).
    let mut h = Harness::new();
    h.wave.vgpr[0] = [0x8080_8080; 64]; // A = -128 everywhere
    h.wave.vgpr[2] = [0x8080_8080; 64]; // B = -128
    h.wave.vgpr[32..36].iter_mut().for_each(|r| *r = [i32::MAX as u32; 64]);
    h.run(&encoding("v_mfma_i32_4x4x4i8")).unwrap();
    let want = (i64::from(i32::MAX) + 4 * 128 * 128) as i32 as u32;
    assert!(h.wave.vgpr[32..36].iter().all(|r| r.iter().all(|&v| v == want)));
}

#[test]
fn broadcast_controls_select_blocks_and_lanes() {
    // v_mfma_f32_4x4x1f32 cbsz:2 abid:3 blgp:4 (llvm-mc-15: v_mfma_f32_4x4x1f32 v[32:35], v0, v2, v[32:35] cbsz:2 abid:3 blgp:4)
    let words = [0xd3c2_1a20, 0x8482_0500];
    let mut h = Harness::new();
    for l in 0..64 {
        h.wave.vgpr[0][l] = (l as f32).to_bits(); // A[b][i] = i + 4b
        h.wave.vgpr[2][l] = ((100 + l) as f32).to_bits(); // B[b][j] = 100 + j + 4b
    }
    h.run(&words).unwrap();
    for blk in 0..16 {
        // cbsz 2: groups of 4 blocks share the A of block (b & !3) | 3.
        let a_block = (blk & !3) | 3;
        for i in 0..4 {
            for j in 0..4 {
                // blgp 4: every lane reads B from lanes 0..15 (lane group 0).
                let b_lane = (j + 4 * blk) % 16;
                let want = ((i + 4 * a_block) * (100 + b_lane)) as f32;
                assert_eq!(f32::from_bits(h.wave.vgpr[32 + i][j + 4 * blk]), want, "block {blk} D[{i}][{j}]");
            }
        }
    }
}

#[test]
fn unsupported_controls_are_refused_with_the_reason() {
    // v_mfma_f32_32x32x2f32 (one block) with cbsz:1 — llvm-mc-15 accepts the field.
    // v_mfma_f32_32x32x2f32 v[32:47], v0, v2, v[32:47] cbsz:1
    let mut h = Harness::new();
    let err = h.run(&[0xd3c4_0120, 0x0482_0500]).unwrap_err();
    assert!(matches!(&err, ExecError::Invalid(m) if m.contains("cbsz")), "{err}");
}

#[test]
fn gfx942_f64_blgp_negates_the_sources() {
    // v_mfma_f64_4x4x4_4b_f64 v[32:33], v[0:1], v[2:3], v[32:33] neg:[1,0,1] (llvm-mc-19)
    let words = [0xd3ef_0020, 0xa482_0500];
    let mut h = Harness::for_target(Target::Gfx942);
    let set = |h: &mut Harness, reg: usize, v: f64| {
        h.wave.vgpr[reg] = [v.to_bits() as u32; 64];
        h.wave.vgpr[reg + 1] = [(v.to_bits() >> 32) as u32; 64];
    };
    set(&mut h, 0, 2.0);
    set(&mut h, 2, 3.0);
    set(&mut h, 32, 1.0);
    h.run(&words).unwrap();
    let d = f64::from_bits(u64::from(h.wave.vgpr[32][0]) | u64::from(h.wave.vgpr[33][0]) << 32);
    // -C + (-A)·B over k = 4: -1 + 4 * (-6).
    assert_eq!(d, -25.0);
}

#[test]
fn the_accumulator_may_be_other_registers_or_a_constant() {
    // v_mfma_f32_4x4x1f32 v[40:43], v0, v2, {v[32:35] | 0 | 1.0} (llvm-mc-15)
    for (words, c) in [
        ([0xd3c2_0028u32, 0x0482_0500u32], 5.0f32),
        ([0xd3c2_0028, 0x0202_0500], 0.0),
        ([0xd3c2_0028, 0x03ca_0500], 1.0),
    ] {
        let mut h = Harness::new();
        h.wave.vgpr[0] = [3.0f32.to_bits(); 64];
        h.wave.vgpr[2] = [2.0f32.to_bits(); 64];
        h.wave.vgpr[32..36].iter_mut().for_each(|r| *r = [5.0f32.to_bits(); 64]);
        h.run(&words).unwrap();
        assert!(h.wave.vgpr[40..44].iter().all(|r| r.iter().all(|&v| f32::from_bits(v) == 6.0 + c)), "C = {c}");
        assert!(h.wave.vgpr[32..36].iter().all(|r| r.iter().all(|&v| f32::from_bits(v) == 5.0)), "C is left alone");
    }
}

#[test]
fn an_f64_accumulator_may_be_other_registers_or_a_constant() {
    // v_mfma_f64_16x16x4f64 v[40:47], v[0:1], v[2:3], {v[32:39] | 1.0 | 0} (llvm-mc-15)
    let f64_of = |h: &Harness, reg: usize, lane: usize| {
        f64::from_bits(u64::from(h.wave.vgpr[reg][lane]) | u64::from(h.wave.vgpr[reg + 1][lane]) << 32)
    };
    for (words, c) in [
        ([0xd3ee_0028u32, 0x0482_0500u32], 5.0f64),
        ([0xd3ee_0028, 0x03ca_0500], 1.0),
        ([0xd3ee_0028, 0x0202_0500], 0.0),
    ] {
        let mut h = Harness::new();
        for (reg, v) in [(0usize, 3.0f64), (2, 2.0)].into_iter().chain((32..40).step_by(2).map(|r| (r, 5.0))) {
            h.wave.vgpr[reg] = [v.to_bits() as u32; 64];
            h.wave.vgpr[reg + 1] = [(v.to_bits() >> 32) as u32; 64];
        }
        h.run(&words).unwrap();
        // k = 4 products of 3 · 2 on top of C, in every element of D.
        for reg in (40..48).step_by(2) {
            assert!((0..64).all(|lane| f64_of(&h, reg, lane) == 24.0 + c), "C = {c}, v{reg}: {}", f64_of(&h, reg, 0));
            assert!((0..64).all(|lane| f64_of(&h, reg - 8, lane) == 5.0), "C = {c}: C is left alone");
        }
    }
}

/// Each product is rounded to f32 before it is added where it is not exact (f32 and bf16
/// inputs): a fused multiply-add would give other bits. Every lane and element holds the
/// same values, so every D element is the same k-ordered sum.
/// f32 MFMAs add each product by one fused multiply-add, as MMA-Sim measured on CDNA
/// (`fmaf(a, b, sum)` in k order), on gfx90a and gfx942 alike: k = 2, (1 + 2^-12)^2 is
/// 1 + 2^-11 + 2^-24 exactly, and -1 + p + p = 1 + 2^-10 + 2^-23 (both sums exact). A
/// product rounded first (a tie, to even: 1 + 2^-11) would give 1 + 2^-10.
#[test]
fn f32_products_are_fused_into_the_sum() {
    let a = 1.0f32 + 2f32.powi(-12);
    let want = 1.0f32 + 2f32.powi(-10) + 2f32.powi(-23);
    for (target, name) in [(Target::Gfx90a, "v_mfma_f32_32x32x2f32"), (Target::Gfx942, "v_mfma_f32_32x32x1_2b_f32")] {
        let mut h = Harness::for_target(target);
        h.wave.vgpr[0] = [a.to_bits(); 64];
        h.wave.vgpr[2] = [a.to_bits(); 64];
        h.wave.vgpr[32..64].iter_mut().for_each(|r| *r = [(-1.0f32).to_bits(); 64]);
        h.run(&encoding_for(target, name)).unwrap();
        // 32x32x1_2b (two blocks, k = 1) adds one product: 2^-11 + 2^-24, also exact.
        let want = if target == Target::Gfx942 { 2f32.powi(-11) + 2f32.powi(-24) } else { want };
        assert!(
            h.wave.vgpr[32..48].iter().all(|r| r.iter().all(|&v| v == want.to_bits())),
            "{name}: {:e}",
            f32::from_bits(h.wave.vgpr[32][0])
        );
    }
}

/// gfx90a (CDNA2) f16 MFMAs sum groups of four products pairwise and add each group's sum to
/// the accumulator (MMA-Sim's model of CDNA2): with C = 2^24 (the sum's unit is 2) and
/// eight products p just over 1, each group 4p (exact) adds 4 after rounding, so D = 2^24 +
/// 8; in k order each p rounds up to a unit, 2^24 + 16, which gfx942 keeps (its own
/// grouping is not modelled).
#[test]
fn gfx90a_f16_products_are_summed_in_groups_of_four() {
    let a = half::f16::from_f32(1.0 + 2f32.powi(-10));
    let pair = u32::from(a.to_bits()) * 0x1_0001;
    let p = a.to_f32() * a.to_f32();
    for (target, name, want) in [
        (Target::Gfx90a, "v_mfma_f32_32x32x8f16", 2f32.powi(24) + 8.0),
        (Target::Gfx942, "v_mfma_f32_32x32x8_f16", (0..8).fold(2f32.powi(24), |acc, _| acc + p)),
    ] {
        let mut h = Harness::for_target(target);
        h.wave.vgpr[0..4].iter_mut().for_each(|r| *r = [pair; 64]);
        h.wave.vgpr[32..48].iter_mut().for_each(|r| *r = [2f32.powi(24).to_bits(); 64]);
        h.run(&encoding_for(target, name)).unwrap();
        assert!(
            h.wave.vgpr[32..48].iter().all(|r| r.iter().all(|&v| v == want.to_bits())),
            "{name}: {} (want {want})",
            f32::from_bits(h.wave.vgpr[32][0])
        );
    }
    assert_eq!((0..8).fold(2f32.powi(24), |acc, _| acc + p), 2f32.powi(24) + 16.0);
}

/// gfx90a f16 and bf16 MFMAs flush denormal inputs, products, sums and C to zero (MI200's
/// known behaviour, why rocBLAS and PyTorch have `fp16_alt_impl`); gfx942 keeps them.
/// f16: 2^-24 (the smallest denormal) · 1 into C = 0 gives 0 on gfx90a, 2^-24 on gfx942.
/// bf16: products 2^-75 · 2^-75 = 2^-150 and C = 2^-149 give +0 on gfx90a.
#[test]
fn gfx90a_f16_and_bf16_flush_denormals() {
    let one = u32::from(half::f16::ONE.to_bits());
    for (target, name, want) in [
        (Target::Gfx90a, "v_mfma_f32_32x32x8f16", 0.0f32),
        (Target::Gfx942, "v_mfma_f32_32x32x8_f16", 2f32.powi(-24) * 8.0),
    ] {
        let mut h = Harness::for_target(target);
        h.wave.vgpr[0..2].iter_mut().for_each(|r| *r = [0x0001_0001; 64]);
        h.wave.vgpr[2..4].iter_mut().for_each(|r| *r = [one * 0x1_0001; 64]);
        h.wave.vgpr[32..48].iter_mut().for_each(|r| *r = [0; 64]);
        h.run(&encoding_for(target, name)).unwrap();
        assert!(
            h.wave.vgpr[32..48].iter().all(|r| r.iter().all(|&v| v == want.to_bits())),
            "{name}: {:e} (want {want:e})",
            f32::from_bits(h.wave.vgpr[32][0])
        );
    }
    let mut h = Harness::for_target(Target::Gfx90a);
    h.wave.vgpr[0..4].iter_mut().for_each(|r| *r = [0x1a00_1a00; 64]);
    h.wave.vgpr[32..64].iter_mut().for_each(|r| *r = [1; 64]);
    h.run(&encoding("v_mfma_f32_32x32x4bf16_1k")).unwrap();
    assert!(h.wave.vgpr[32..64].iter().all(|r| r.iter().all(|&v| v == 0)), "bf16: {:#x}", h.wave.vgpr[32][0]);
}
