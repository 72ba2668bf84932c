//! gfx950 (MI350X, CDNA4) kernels compiled by LLVM 22 (`llc -mcpu=gfx950` of Rust's llvm-tools
//! component) run on the simulated `configs/gfx950_cdna4_kmd.json` machine through the
//! embedding API, and their results match CPU references. The kernels (`tests/kernels/gfx950.ll`)
//! use instructions gfx950 adds: a K-doubled MFMA, a permlane swap, packed bf16 conversion,
//! bitop3 and minimum3. The code object `tests/kernels/gfx950.co` is compiled from that source
//! by `cargo xtask gfx950-kernels` and checked in, so the tests need no LLVM 22; when llvm-tools
//! is installed, `checked_in_code_object_is_current` recompiles and compares.

use sim::runner::KernelRunner;
use sim::testing::{compile_llvm_ir, kernargs, rust_llvm_bin};
use sim::Machine;
use std::path::Path;

fn code_object() -> Vec<u8> {
    include_bytes!("kernels/gfx950.co").to_vec()
}

#[test]
fn checked_in_code_object_is_current() {
    if !rust_llvm_bin().join("llc").exists() {
        eprintln!("llvm-tools not installed: the checked-in gfx950.co is used as it is");
        return;
    }
    let fresh = compile_llvm_ir("gfx950", &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/gfx950.ll"));
    assert!(fresh == code_object(), "tests/kernels/gfx950.co is stale: run `cargo xtask gfx950-kernels`");
}

fn runner() -> (Machine, KernelRunner) {
    sim::testing::runner("mi350x", None)
}

/// `v_mfma_f32_16x16x32_f16`: each lane passes its 8 halves of A and B and 4 floats of C in
/// register order. CDNA4 guide layout: A[i][k] in lane i + 16*(k/8), element k%8; B[k][j] in
/// lane j + 16*(k/8), element k%8; C/D[i][j] in lane j + 16*(i/4), element i%4.
#[test]
fn mfma_16x16x32_f16_tile_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let a = |i: usize, k: usize| ((i * 5 + k * 7) % 13) as f32 - 6.0;
    let b = |k: usize, j: usize| ((k * 3 + j * 11) % 9) as f32 * 0.25 - 1.0;
    let c = |i: usize, j: usize| (i as f32) - (j as f32) * 0.5;
    let hf = |x: f32| half::f16::from_f32(x).to_bits();
    let (mut va, mut vb, mut vc) = (vec![0u16; 64 * 8], vec![0u16; 64 * 8], vec![0f32; 64 * 4]);
    for lane in 0..64 {
        for e in 0..8 {
            let k = (lane / 16) * 8 + e;
            va[lane * 8 + e] = hf(a(lane % 16, k));
            vb[lane * 8 + e] = hf(b(k, lane % 16));
        }
        for r in 0..4 {
            vc[lane * 4 + r] = c((lane / 16) * 4 + r, lane % 16);
        }
    }
    let (da, db, dc) = (s.upload(&va).unwrap(), s.upload(&vb).unwrap(), s.upload(&vc).unwrap());
    let dd = s.alloc(64 * 4 * 4).unwrap();
    s.dispatch(co.kernel("mfma_f16_tile").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[da, db, dc, dd])).unwrap();
    let d: Vec<f32> = s.read_vec(dd, 64 * 4).unwrap();
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = ((lane / 16) * 4 + r, lane % 16);
            let want: f32 = c(i, j) + (0..32).map(|k| a(i, k) * b(k, j)).sum::<f32>();
            assert_eq!(d[lane * 4 + r], want, "D[{i}][{j}]");
        }
    }
}

/// `v_permlane32_swap_b32` through `llvm.amdgcn.permlane32.swap`: the intrinsic returns the
/// swapped pair, so x's upper 32 lanes and y's lower 32 lanes trade places.
#[test]
fn permlane32_swap_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let x: Vec<u32> = (0..64).map(|l| 1000 + l).collect();
    let y: Vec<u32> = (0..64).map(|l| 2000 + l).collect();
    let (dx, dy) = (s.upload(&x).unwrap(), s.upload(&y).unwrap());
    s.dispatch(co.kernel("swap_halves").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[dx, dy])).unwrap();
    let (gx, gy): (Vec<u32>, Vec<u32>) = (s.read_vec(dx, 64).unwrap(), s.read_vec(dy, 64).unwrap());
    for l in 0..64usize {
        let (wx, wy) = if l < 32 { (x[l], x[l + 32]) } else { (y[l - 32], y[l]) };
        assert_eq!((gx[l], gy[l]), (wx, wy), "lane {l}");
    }
}

/// Packed f32 -> bf16 (round to nearest even: `v_cvt_pk_bf16_f32`) over several workgroups
/// with a partial last one, and a three-input bit function the compiler builds from and/or/xor.
#[test]
fn bf16_packing_and_bit_logic_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 1000u32;
    let specials = [0.0f32, -0.0, 1.0, f32::INFINITY, f32::MIN_POSITIVE / 4.0, 65504.0, 1.0 + 2f32.powi(-8)];
    let f: Vec<f32> = (0..2 * n as usize)
        .map(|i| if i % 50 < specials.len() { specials[i % 50] } else { (i as f32 * 0.37).sin() * 1e3 })
        .collect();
    let u: Vec<u32> = (0..3 * n).map(|i| i.wrapping_mul(2_654_435_761) ^ (i << 7)).collect();
    let (df, du) = (s.upload(&f).unwrap(), s.upload(&u).unwrap());
    let (dbf, dsel) = (s.alloc(u64::from(n) * 4).unwrap(), s.alloc(u64::from(n) * 4).unwrap());
    let grid = n.div_ceil(256) * 256;
    s.dispatch(
        co.kernel("to_bf16_and_select").unwrap(),
        [grid, 1, 1],
        [256, 1, 1],
        &kernargs(&[df, du, dbf, dsel, u64::from(n)]),
    )
    .unwrap();
    let (bf, sel): (Vec<u16>, Vec<u32>) =
        (s.read_vec(dbf, 2 * n as usize).unwrap(), s.read_vec(dsel, n as usize).unwrap());
    for i in 0..2 * n as usize {
        assert_eq!(bf[i], half::bf16::from_f32(f[i]).to_bits(), "bf16[{i}] of {}", f[i]);
    }
    for i in 0..n as usize {
        let (a, b, c) = (u[3 * i], u[3 * i + 1], u[3 * i + 2]);
        let want = (((a & b) | (!a & c)) ^ c) | b;
        assert_eq!(sel[i], want, "sel[{i}]");
    }
}

/// `v_bitop3_b32` (majority table 0xe8 through `llvm.amdgcn.bitop3`) and `v_minimum3_f32`
/// (IEEE 754-2019 minimum: NaN wins, -0 < +0).
#[test]
fn bitop3_and_minimum3_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let u: Vec<u32> = (0..256u32).map(|i| i.wrapping_mul(0x9e37_79b9).rotate_left(i % 32)).collect();
    let vals = [1.5f32, -0.0, 0.0, f32::NAN, -7.0, f32::INFINITY, f32::NEG_INFINITY, 3.25];
    let f: Vec<f32> = (0..256usize).map(|i| vals[(i * 3 + i / 8) % 8]).collect();
    let (du, df) = (s.upload(&u).unwrap(), s.upload(&f).unwrap());
    let (dou, dof) = (s.alloc(64 * 4).unwrap(), s.alloc(64 * 4).unwrap());
    s.dispatch(co.kernel("bitop3_minimum3").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[du, df, dou, dof])).unwrap();
    let (ou, of): (Vec<u32>, Vec<f32>) = (s.read_vec(dou, 64).unwrap(), s.read_vec(dof, 64).unwrap());
    let minimum = |x: f32, y: f32| {
        if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x == y {
            if x.is_sign_negative() {
                x
            } else {
                y
            }
        } else {
            x.min(y)
        }
    };
    for l in 0..64 {
        let (a, b, c) = (u[4 * l], u[4 * l + 1], u[4 * l + 2]);
        assert_eq!(ou[l], (a & b) | (a & c) | (b & c), "majority lane {l}");
        let want = minimum(minimum(f[4 * l], f[4 * l + 1]), f[4 * l + 2]);
        if want.is_nan() {
            assert!(of[l].is_nan(), "lane {l}: {}", of[l]);
        } else {
            assert_eq!(of[l].to_bits(), want.to_bits(), "minimum lane {l}");
        }
    }
}

/// The CDNA4 guide's f8f6f4 operand layout (section 7.1.5.1) for 16x16x128: lane and bit
/// offset of A[i][k] (or B[k][j], with j for i) within the lane's registers. fp8: lane group g
/// (16 lanes) holds k = 16g..16g+15 in bytes 0..15 and k = 64+16g.. in bytes 16..31; fp4: group
/// g holds k = 32g..32g+31 as nibbles.
fn f8f6f4_position(fmt: &str, i: usize, k: usize) -> (usize, usize) {
    match fmt {
        "fp8" => (i + 16 * ((k % 64) / 16), 8 * ((k / 64) * 16 + k % 16)),
        "fp4" => (i + 16 * (k / 32), 4 * (k % 32)),
        _ => unreachable!(),
    }
}

/// Packs per-lane values of `bits` bits at the given bit offsets into `regs` dwords per lane.
fn pack(regs: usize, place: impl Fn(usize, usize) -> (usize, usize, u32), rows: usize, ks: usize) -> Vec<u32> {
    let mut out = vec![0u32; 64 * regs];
    for r in 0..rows {
        for k in 0..ks {
            let (lane, bit, code) = place(r, k);
            out[lane * regs + bit / 32] |= code << (bit % 32);
        }
    }
    out
}

/// OCP E4M3 code of small integers and halves (exact): `sign | exp << 3 | mantissa`.
fn e4m3(x: f32) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let sign = if x < 0.0 { 0x80 } else { 0 };
    let a = x.abs();
    let e = a.log2().floor() as i32;
    let m = ((a / 2f32.powi(e) - 1.0) * 8.0) as u32;
    sign | (((e + 7) as u32) << 3) | m
}

/// FP4 E2M1 codes: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
fn e2m1(x: f32) -> u32 {
    let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let code = table.iter().position(|&v| v == x.abs()).expect("an fp4 value") as u32;
    if x < 0.0 {
        code | 8
    } else {
        code
    }
}

/// `v_mfma_scale_f32_16x16x128_f8f6f4` with fp8 A and B and per-(row, 32-k block) E8M0
/// scales: scale of A row i, block kb in lane i + 16*kb (byte 0), likewise for B columns.
#[test]
fn block_scaled_fp8_mfma_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let vals = [0.0f32, 1.0, -1.5, 2.0, 0.5, -3.0, 0.25, 4.0];
    let a = |i: usize, k: usize| vals[(i * 3 + k * 5) % 8];
    let b = |k: usize, j: usize| vals[(k * 7 + j) % 8];
    let sa = |i: usize, kb: usize| 127 + (i % 3) as i32 - kb as i32; // 2^-3 .. 2^2
    let sb = |j: usize, kb: usize| 127 - (j % 2) as i32 + (kb % 2) as i32;
    let va = pack(
        8,
        |i, k| {
            let (l, bit) = f8f6f4_position("fp8", i, k);
            (l, bit, e4m3(a(i, k)))
        },
        16,
        128,
    );
    let vb = pack(
        8,
        |j, k| {
            let (l, bit) = f8f6f4_position("fp8", j, k);
            (l, bit, e4m3(b(k, j)))
        },
        16,
        128,
    );
    let mut scales = vec![0u32; 128];
    for lane in 0..64 {
        scales[2 * lane] = sa(lane % 16, lane / 16) as u32;
        scales[2 * lane + 1] = sb(lane % 16, lane / 16) as u32;
    }
    let (da, db, ds) = (s.upload(&va).unwrap(), s.upload(&vb).unwrap(), s.upload(&scales).unwrap());
    let dd = s.alloc(64 * 16).unwrap();
    s.dispatch(co.kernel("mfma_scale_fp8").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[da, db, ds, dd])).unwrap();
    let d: Vec<f32> = s.read_vec(dd, 64 * 4).unwrap();
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = ((lane / 16) * 4 + r, lane % 16);
            let want: f64 = (0..128)
                .map(|k| {
                    let scale = 2f64.powi(sa(i, k / 32) - 127 + sb(j, k / 32) - 127);
                    f64::from(a(i, k)) * f64::from(b(k, j)) * scale
                })
                .sum();
            assert_eq!(f64::from(d[lane * 4 + r]), want, "D[{i}][{j}]");
        }
    }
}

/// `v_mfma_f32_16x16x128_f8f6f4 cbsz:4 blgp:4`: fp4 A and B, no scaling.
#[test]
fn fp4_mfma_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let vals = [0.0f32, 0.5, -1.0, 1.5, -2.0, 3.0, -4.0, 6.0];
    let a = |i: usize, k: usize| vals[(i + k * 3) % 8];
    let b = |k: usize, j: usize| vals[(k * 5 + j * 2) % 8];
    let va = pack(
        4,
        |i, k| {
            let (l, bit) = f8f6f4_position("fp4", i, k);
            (l, bit, e2m1(a(i, k)))
        },
        16,
        128,
    );
    let vb = pack(
        4,
        |j, k| {
            let (l, bit) = f8f6f4_position("fp4", j, k);
            (l, bit, e2m1(b(k, j)))
        },
        16,
        128,
    );
    let (da, db) = (s.upload(&va).unwrap(), s.upload(&vb).unwrap());
    let dd = s.alloc(64 * 16).unwrap();
    s.dispatch(co.kernel("mfma_fp4").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[da, db, dd])).unwrap();
    let d: Vec<f32> = s.read_vec(dd, 64 * 4).unwrap();
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = ((lane / 16) * 4 + r, lane % 16);
            let want: f32 = (0..128).map(|k| a(i, k) * b(k, j)).sum();
            assert_eq!(d[lane * 4 + r], want, "D[{i}][{j}]");
        }
    }
}

/// The value of OCP E4M3 code `c` (bias 7, subnormals below exponent code 1), by the format's
/// definition; the NaN codes are not asked for.
fn e4m3_value(c: u8) -> f32 {
    let (e, m) = (i32::from(c >> 3 & 15), f32::from(c & 7));
    let mag = if e == 0 { m / 8.0 * 2f32.powi(-6) } else { (1.0 + m / 8.0) * 2f32.powi(e - 7) };
    if c & 0x80 != 0 {
        -mag
    } else {
        mag
    }
}

/// The OCP E4M3 value nearest to `x` (ties to the even code), saturating at ±448: a brute-force
/// search over the format's 256 codes, independent of the simulator's encoder.
fn nearest_e4m3(x: f32) -> u8 {
    let codes = (0u8..=255).filter(|c| c & 0x7f != 0x7f);
    let best = codes
        .min_by(|&a, &b| {
            let (da, db) = ((e4m3_value(a) - x).abs(), (e4m3_value(b) - x).abs());
            da.partial_cmp(&db).unwrap().then((a & 1).cmp(&(b & 1)))
        })
        .unwrap();
    // ±0 keep the sign of x.
    if e4m3_value(best) == 0.0 {
        if x.is_sign_negative() {
            0x80
        } else {
            0
        }
    } else {
        best
    }
}

/// Block-scaled fp8 quantisation through the compiler's intrinsics: x / scale rounded to OCP
/// E4M3 (nearest even), then back to f32 times the scale.
#[test]
fn scaled_fp8_quantisation_round_trip_on_gfx950() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let scale = 0.25f32;
    let x: Vec<f32> =
        (0..128).map(|i| ((i as f32) * 0.731).sin() * 100.0 * if i % 7 == 0 { 0.001 } else { 1.0 }).collect();
    let dx = s.upload(&x).unwrap();
    let (dq, dy) = (s.alloc(64 * 4).unwrap(), s.alloc(64 * 8).unwrap());
    let args = [dx, u64::from(scale.to_bits()), dq, dy];
    s.dispatch(co.kernel("fp8_quant_roundtrip").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&args)).unwrap();
    let (q, y): (Vec<u32>, Vec<f32>) = (s.read_vec(dq, 64).unwrap(), s.read_vec(dy, 128).unwrap());
    for lane in 0..64 {
        for h in 0..2 {
            let want = nearest_e4m3(x[2 * lane + h] / scale);
            assert_eq!((q[lane] >> (8 * h)) as u8, want, "lane {lane} element {h}: {}", x[2 * lane + h]);
        }
        assert_eq!(q[lane] >> 16, 0, "lane {lane}: the high word keeps the old value (0)");
    }
    for (i, (&xi, &yi)) in x.iter().zip(&y).enumerate() {
        let want = e4m3_value(nearest_e4m3(xi / scale)) * scale;
        assert_eq!(yi, want, "y[{i}]");
    }
}
