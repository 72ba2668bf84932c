//! gfx942 (MI300X) kernels compiled by Debian's clang-19 run on the simulated
//! `configs/gfx942_cdna3_kmd.json` machine through the embedding API, and their results
//! match a CPU reference (issue "Real ROCm libraries run: … gfx942 kernels").
//! ROCm 5.2's runtime does not know gfx942, so the embedding API is the way in.

use sim::runner::KernelRunner;
use sim::testing::{kernargs, opencl_kernels};
use sim::Machine;

fn code_object() -> Vec<u8> {
    opencl_kernels("clang-19", "gfx942", "gfx942.cl")
}

fn runner() -> (Machine, KernelRunner) {
    sim::testing::runner("mi300x", None)
}

#[test]
fn vector_add_on_gfx942() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 100_003u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 977) as f32 / 3.0).collect();
    let (da, db) = (s.upload(&a).unwrap(), s.upload(&b).unwrap());
    let dc = s.alloc(u64::from(n) * 4).unwrap();
    let grid = n.div_ceil(256) * 256;
    s.dispatch(co.kernel("vadd").unwrap(), [grid, 1, 1], [256, 1, 1], &kernargs(&[da, db, dc, u64::from(n)])).unwrap();
    let c: Vec<f32> = s.read_vec(dc, n as usize).unwrap();
    for i in 0..n as usize {
        assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "c[{i}]");
    }
}

#[test]
fn reduction_on_gfx942() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 1_000_000u32;
    let input: Vec<i32> = (0..n).map(|i| (i.wrapping_mul(2_654_435_761) % 2001) as i32 - 1000).collect();
    let din = s.upload(&input).unwrap();
    let total = s.upload(&[0i64]).unwrap();
    let grid = n.div_ceil(256) * 256;
    s.dispatch(co.kernel("reduce").unwrap(), [grid, 1, 1], [256, 1, 1], &kernargs(&[din, total, u64::from(n)]))
        .unwrap();
    let got: Vec<i64> = s.read_vec(total, 1).unwrap();
    assert_eq!(got[0], input.iter().map(|&v| i64::from(v)).sum::<i64>());
}

/// FP8 (E4M3 FNUZ: bias 8) of a small integer, built from the format's definition.
fn fp8(v: i32) -> u8 {
    if v == 0 {
        return 0;
    }
    let mag = v.unsigned_abs();
    let exp = 31 - mag.leading_zeros();
    let mant = ((mag - (1 << exp)) << 3) >> exp;
    assert_eq!(((mant + 8) << exp) >> 3, mag, "{v} is exact in fp8");
    (if v < 0 { 0x80 } else { 0 }) | ((exp + 8) << 3) as u8 | mant as u8
}

#[test]
fn fp8_mfma_tile_on_gfx942() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let a: Vec<i32> = (0..16 * 32).map(|i| (i * 7 % 13) - 6).collect(); // A[i][k], 16x32
    let bt: Vec<i32> = (0..16 * 32).map(|i| (i * 5 % 11) - 5).collect(); // B[k][j] as Bt[j][k]
    let enc = |m: &[i32]| m.iter().map(|&v| fp8(v)).collect::<Vec<u8>>();
    let (da, db) = (s.upload(&enc(&a)).unwrap(), s.upload(&enc(&bt)).unwrap());
    let dd = s.alloc(16 * 16 * 4).unwrap();
    s.dispatch(co.kernel("mfma_fp8").unwrap(), [256, 1, 1], [256, 1, 1], &kernargs(&[da, db, dd])).unwrap();
    let d: Vec<f32> = s.read_vec(dd, 256).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            let want: i32 = (0..32).map(|k| a[i * 32 + k] * bt[j * 32 + k]).sum();
            assert_eq!(d[i * 16 + j], want as f32, "D[{i}][{j}]");
        }
    }
}
