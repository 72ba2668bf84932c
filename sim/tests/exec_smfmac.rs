//! Sparse MFMA (`v_smfmac_*`, gfx942): inputs placed and results read through the
//! register layouts of AMD's matrix instruction calculator (`data/mfma/sparse_layouts.txt`,
//! generated offline with `--matrix-layout --csv` for A, B, the compression indices K at
//! ABID 0 and 1, and D), compared with a CPU product of the expanded 4:2-sparse A.

mod mfma_support;

use mfma_support::{encode, put, Rng};
use sim::gpu::exec::ops::mfma::shape::{Acc, Elem, Shape};
use sim::isa::{Op, Target};
use sim::testing::Harness;
use std::collections::HashMap;

struct Matrix {
    cols: Vec<(usize, usize, usize)>,
    /// `lanes[lane][col] = (row, col)` of the (first) element the column holds.
    lanes: Vec<Vec<(usize, usize)>>,
}

fn layouts() -> HashMap<String, HashMap<String, Matrix>> {
    let mut all = HashMap::new();
    let mut lines = include_str!("data/mfma/sparse_layouts.txt").lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(head) = lines.next() {
        let name = head.strip_prefix("layout ").unwrap().to_string();
        let mut mats = HashMap::new();
        for _ in 0..5 {
            let cols_line = lines.next().unwrap();
            let (tag, cols) = cols_line.split_once(' ').unwrap();
            let cols = cols
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
                            let (r, c) = e.split_once('.').unwrap();
                            (r.parse().unwrap(), c.parse().unwrap())
                        })
                        .collect()
                })
                .collect();
            mats.insert(tag.to_string(), Matrix { cols, lanes });
        }
        all.insert(name, mats);
    }
    all
}

/// Each op assembled by llvm-mc-19 -mcpu=gfx942: D (also C) at v32, A at v0, B at v2,
/// indices in v10; with and without `abid:1`.
const ENCODINGS: &[(&str, u8, [u32; 2])] = &[
    // v_smfmac_f32_16x16x32_f16 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x32_f16", 0, [0xd3e20020, 0x042a0500]),
    // v_smfmac_f32_16x16x32_f16 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x32_f16", 1, [0xd3e20820, 0x042a0500]),
    // v_smfmac_f32_32x32x16_f16 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x16_f16", 0, [0xd3e40020, 0x042a0500]),
    // v_smfmac_f32_32x32x16_f16 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x16_f16", 1, [0xd3e40820, 0x042a0500]),
    // v_smfmac_f32_16x16x32_bf16 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x32_bf16", 0, [0xd3e60020, 0x042a0500]),
    // v_smfmac_f32_16x16x32_bf16 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x32_bf16", 1, [0xd3e60820, 0x042a0500]),
    // v_smfmac_f32_32x32x16_bf16 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x16_bf16", 0, [0xd3e80020, 0x042a0500]),
    // v_smfmac_f32_32x32x16_bf16 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x16_bf16", 1, [0xd3e80820, 0x042a0500]),
    // v_smfmac_i32_16x16x64_i8 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_i32_16x16x64_i8", 0, [0xd3ea0020, 0x042a0500]),
    // v_smfmac_i32_16x16x64_i8 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_i32_16x16x64_i8", 1, [0xd3ea0820, 0x042a0500]),
    // v_smfmac_i32_32x32x32_i8 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_i32_32x32x32_i8", 0, [0xd3ec0020, 0x042a0500]),
    // v_smfmac_i32_32x32x32_i8 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_i32_32x32x32_i8", 1, [0xd3ec0820, 0x042a0500]),
    // v_smfmac_f32_16x16x64_bf8_bf8 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x64_bf8_bf8", 0, [0xd3f80020, 0x042a0500]),
    // v_smfmac_f32_16x16x64_bf8_bf8 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x64_bf8_bf8", 1, [0xd3f80820, 0x042a0500]),
    // v_smfmac_f32_16x16x64_bf8_fp8 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x64_bf8_fp8", 0, [0xd3f90020, 0x042a0500]),
    // v_smfmac_f32_16x16x64_bf8_fp8 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x64_bf8_fp8", 1, [0xd3f90820, 0x042a0500]),
    // v_smfmac_f32_16x16x64_fp8_bf8 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x64_fp8_bf8", 0, [0xd3fa0020, 0x042a0500]),
    // v_smfmac_f32_16x16x64_fp8_bf8 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x64_fp8_bf8", 1, [0xd3fa0820, 0x042a0500]),
    // v_smfmac_f32_16x16x64_fp8_fp8 v[32:35], v[0:1], v[2:5], v10
    ("v_smfmac_f32_16x16x64_fp8_fp8", 0, [0xd3fb0020, 0x042a0500]),
    // v_smfmac_f32_16x16x64_fp8_fp8 v[32:35], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_16x16x64_fp8_fp8", 1, [0xd3fb0820, 0x042a0500]),
    // v_smfmac_f32_32x32x32_bf8_bf8 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x32_bf8_bf8", 0, [0xd3fc0020, 0x042a0500]),
    // v_smfmac_f32_32x32x32_bf8_bf8 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x32_bf8_bf8", 1, [0xd3fc0820, 0x042a0500]),
    // v_smfmac_f32_32x32x32_bf8_fp8 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x32_bf8_fp8", 0, [0xd3fd0020, 0x042a0500]),
    // v_smfmac_f32_32x32x32_bf8_fp8 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x32_bf8_fp8", 1, [0xd3fd0820, 0x042a0500]),
    // v_smfmac_f32_32x32x32_fp8_bf8 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x32_fp8_bf8", 0, [0xd3fe0020, 0x042a0500]),
    // v_smfmac_f32_32x32x32_fp8_bf8 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x32_fp8_bf8", 1, [0xd3fe0820, 0x042a0500]),
    // v_smfmac_f32_32x32x32_fp8_fp8 v[32:47], v[0:1], v[2:5], v10
    ("v_smfmac_f32_32x32x32_fp8_fp8", 0, [0xd3ff0020, 0x042a0500]),
    // v_smfmac_f32_32x32x32_fp8_fp8 v[32:47], v[0:1], v[2:5], v10 abid:1
    ("v_smfmac_f32_32x32x32_fp8_fp8", 1, [0xd3ff0820, 0x042a0500]),
];

fn check(name: &str, abid: u8, words: [u32; 2], seed: u64) {
    let data = layouts();
    let m = &data[name];
    let op = (0..).map_while(Op::from_index).find(|o| o.name() == name).unwrap();
    let s = Shape::of(op).unwrap();
    assert!(s.sparse);
    let range = if matches!(s.a, Elem::Fp8 | Elem::Bf8) { 4 } else { 20 };
    let mut rng = Rng(seed);
    // Dense A with exactly two nonzeros in every aligned group of four along k.
    let mut a = vec![0i64; s.m * s.k];
    let mut kept = vec![(0usize, 0usize); s.m * s.k / 4];
    for (g, kp) in kept.iter_mut().enumerate() {
        let first = (rng.next() % 3) as usize;
        let second = first + 1 + (rng.next() % (3 - first as u64)) as usize;
        *kp = (first, second);
        let (row, k0) = (g / (s.k / 4), 4 * (g % (s.k / 4)));
        a[row * s.k + k0 + first] = rng.small(range);
        a[row * s.k + k0 + second] = rng.small(range);
    }
    let b: Vec<i64> = (0..s.k * s.n).map(|_| rng.small(range)).collect();
    let c: Vec<i64> = (0..s.m * s.n).map(|_| rng.small(1000)).collect();
    let mut h = Harness::for_target(Target::Gfx942);
    let bits = s.a.bits();
    let (la, lk) = (&m["A"], &m[if abid == 1 { "K1" } else { "K" }]);
    for lane in 0..64 {
        for (&(reg, bit, width), &(row, k0)) in la.cols.iter().zip(&la.lanes[lane]) {
            let (first, second) = kept[row * (s.k / 4) + k0 / 4];
            let pair = encode(s.a, a[row * s.k + k0 + first]) | encode(s.a, a[row * s.k + k0 + second]) << bits;
            put(&mut h, 0, (reg, bit, width), lane, pair);
        }
        for (&col, &(row, k0)) in lk.cols.iter().zip(&lk.lanes[lane]) {
            let (first, second) = kept[row * (s.k / 4) + k0 / 4];
            put(&mut h, 10, col, lane, (first | second << 2) as u64);
        }
        for (&col, &(k, j)) in m["B"].cols.iter().zip(&m["B"].lanes[lane]) {
            put(&mut h, 2, col, lane, encode(s.b, b[k * s.n + j]));
        }
        for (&col, &(i, j)) in m["D"].cols.iter().zip(&m["D"].lanes[lane]) {
            let raw = if s.acc == Acc::I32 { c[i * s.n + j] as i32 as u32 } else { (c[i * s.n + j] as f32).to_bits() };
            put(&mut h, 32, col, lane, u64::from(raw));
        }
    }
    h.run(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
    for lane in 0..64 {
        for (&(reg, _, _), &(i, j)) in m["D"].cols.iter().zip(&m["D"].lanes[lane]) {
            let want = c[i * s.n + j] + (0..s.k).map(|k| a[i * s.k + k] * b[k * s.n + j]).sum::<i64>();
            let raw = if s.acc == Acc::I32 { want as i32 as u32 } else { (want as f32).to_bits() };
            assert_eq!(h.wave.vgpr[32 + reg][lane], raw, "{name} abid {abid}: D[{i}][{j}]");
        }
    }
}

#[test]
fn every_gfx942_sparse_mfma_expands_a_and_multiplies() {
    for (n, &(name, abid, words)) in ENCODINGS.iter().enumerate() {
        check(name, abid, words, 0x51ed_270b + n as u64);
    }
}
