//! gfx950 (CDNA4) matrix instructions against a CPU matrix product: OCP fp8/bf8 inputs of
//! the older fp8 MFMAs, the mixed-format `v_mfma_f32_{16x16x128,32x32x64}_f8f6f4` and the
//! block-scaled `v_mfma_scale_*` forms. Encodings come from `tests/data/isa/gfx950` (LLVM
//! 22); element encodings and register layouts are written here from the CDNA4 guide
//! (sections 7.1.4, 7.1.5, 7.2, table 30), not taken from the simulator.

use sim::isa::{decode, Target};
use sim::testing::Harness;

mod rng_support;
use rng_support::Rng;

/// An OCP small float format by its definition: exponent and mantissa bits, bias, and how
/// the top exponent is spent (E4M3: only S.1111.111 is NaN; E5M2: IEEE inf/NaN).
#[derive(Clone, Copy, Debug)]
struct Format {
    code: u8,
    ebits: u32,
    mbits: u32,
    bias: i32,
}

const FP8: Format = Format { code: 0, ebits: 4, mbits: 3, bias: 7 };
const BF8: Format = Format { code: 1, ebits: 5, mbits: 2, bias: 15 };
const FP6: Format = Format { code: 2, ebits: 2, mbits: 3, bias: 1 };
const BF6: Format = Format { code: 3, ebits: 3, mbits: 2, bias: 3 };
const FP4: Format = Format { code: 4, ebits: 2, mbits: 1, bias: 1 };

impl Format {
    fn bits(self) -> usize {
        (1 + self.ebits + self.mbits) as usize
    }

    /// The finite value of a code (sign-magnitude; subnormals at exponent 0).
    fn value(self, code: u32) -> f64 {
        let mag = code & ((1 << (self.ebits + self.mbits)) - 1);
        let (e, m) = ((mag >> self.mbits) as i32, f64::from(mag & ((1 << self.mbits) - 1)));
        let frac = f64::from(1u32 << self.mbits);
        let v = if e == 0 { m / frac * 2f64.powi(1 - self.bias) } else { (1.0 + m / frac) * 2f64.powi(e - self.bias) };
        if code >> (self.ebits + self.mbits) & 1 != 0 {
            -v
        } else {
            v
        }
    }

    /// The code of `v`, which must be exact in the format.
    fn encode(self, v: f64) -> u32 {
        (0..1u32 << self.bits())
            .find(|&c| self.value(c) == v && (v != 0.0 || c == 0))
            .unwrap_or_else(|| panic!("{v} is not exact in {self:?}"))
    }
}

/// Values every format holds exactly (fp4 E2M1 has only these); products are multiples of
/// 1/4 and sums of 128 of them are exact in f32, so the order of summation does not matter.
const VALUES: [f64; 15] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

/// Item `q` (0..32) of lane group `g` holding element `k` of a row of A (column of B) of
/// an f8f6f4 op with `rows` rows: fp8/bf8 in two 4-register halves of 16 consecutive k per
/// lane group (guide 7.1.5.1 tables), 6- and 4-bit formats 32 consecutive k per lane group.
fn item_of(rows: usize, k: usize, bits: usize) -> (usize, usize) {
    let groups = 64 / rows;
    if bits == 8 {
        ((k % (16 * groups)) / 16, (k / (16 * groups)) * 16 + k % 16)
    } else {
        (k / 32, k % 32)
    }
}

/// Writes `code` as item `q` of a lane's registers `base..` seen as one wide little-endian
/// register (6-bit items cross register boundaries).
fn put_item(h: &mut Harness, base: usize, lane: usize, q: usize, bits: usize, code: u32) {
    for b in 0..bits {
        let (reg, bit) = ((q * bits + b) / 32, (q * bits + b) % 32);
        let r = &mut h.wave.vgpr[base + reg][lane];
        *r = (*r & !(1 << bit)) | ((code >> b) & 1) << bit;
    }
}

/// D[i][j] of a 16x16 or 32x32 f32 result: (register, lane), guide 7.1.4.2.
fn d_pos(m: usize, i: usize, j: usize) -> (usize, usize) {
    if m == 16 {
        (i % 4, j + 16 * (i / 4))
    } else {
        (4 * (i / 8) + i % 4, j + 32 * ((i / 4) % 2))
    }
}

/// Registers in the harness: D v0.., A v16.., B v24.., C v32.. (VOP3P-MAI: vdst bits 7:0 of
/// word 0, srcA/B/C bits 8:0, 17:9, 26:18 of word 1); cbsz (A's format) in word 0 bits 10:8,
/// blgp (B's) in word 1 bits 31:29.
const D: usize = 0;
const A: usize = 16;
const B: usize = 24;
const C: usize = 32;

fn place(w: [u32; 2], cbsz: u8, blgp: u8) -> [u32; 2] {
    let src = |r: usize| 256 + r as u32;
    [
        (w[0] & !0x7ff) | u32::from(cbsz) << 8 | D as u32,
        (w[1] & !0xe7ff_ffff) | src(A) | src(B) << 9 | src(C) << 18 | u32::from(blgp) << 29,
    ]
}

/// `v_mfma_f32_16x16x128_f8f6f4 v[16:19], v[32:39], v[48:55], v[64:67]` and the 32x32x64 one.
const F8F6F4_16: [u32; 2] = [0xd3ad0010, 0x05026120];
const F8F6F4_32: [u32; 2] = [0xd3ae0010, 0x05026120];

/// Inputs of one mixed-format product: A (m×k), B (k×n), C (m×n) as values.
struct Case {
    m: usize,
    k: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Case {
    fn random(m: usize, k: usize, seed: u64) -> Case {
        let mut rng = Rng(seed);
        let mut pick = |n: usize| (0..n).map(|_| VALUES[(rng.next() % 15) as usize]).collect::<Vec<_>>();
        let (a, b) = (pick(m * k), pick(k * m));
        let c = (0..m * m).map(|x| ((x * 37) % 201) as f64 - 100.0).collect();
        Case { m, k, a, b, c }
    }

    /// Loads A, B (in formats `fa`, `fb`) and C into a fresh gfx950 harness.
    fn load(&self, fa: Format, fb: Format) -> Harness {
        let mut h = Harness::for_target(Target::Gfx950);
        let (m, k) = (self.m, self.k);
        for r in 0..m {
            for kk in 0..k {
                let (g, q) = item_of(m, kk, fa.bits());
                put_item(&mut h, A, r + m * g, q, fa.bits(), fa.encode(self.a[r * k + kk]));
                let (g, q) = item_of(m, kk, fb.bits());
                put_item(&mut h, B, r + m * g, q, fb.bits(), fb.encode(self.b[kk * m + r]));
            }
            for j in 0..m {
                let (reg, lane) = d_pos(m, r, j);
                h.wave.vgpr[C + reg][lane] = (self.c[r * m + j] as f32).to_bits();
            }
        }
        h
    }

    /// C + sum over k of A·B·scale(i, j, k).
    fn want(&self, i: usize, j: usize, scale: impl Fn(usize, usize, usize) -> f64) -> f32 {
        let (m, k) = (self.m, self.k);
        let sum: f64 = (0..k).map(|kk| self.a[i * k + kk] * self.b[kk * m + j] * scale(i, j, kk)).sum();
        (self.c[i * m + j] + sum) as f32
    }

    fn check(&self, h: &Harness, what: &str, scale: impl Fn(usize, usize, usize) -> f64) {
        for i in 0..self.m {
            for j in 0..self.m {
                let (reg, lane) = d_pos(self.m, i, j);
                let got = f32::from_bits(h.wave.vgpr[D + reg][lane]);
                assert_eq!(got, self.want(i, j, &scale), "{what}: D[{i}][{j}]");
            }
        }
    }
}

#[test]
fn f8f6f4_ops_multiply_every_format_combination() {
    let formats = [FP8, BF8, FP6, BF6, FP4];
    for (words, m, k) in [(F8F6F4_16, 16, 128), (F8F6F4_32, 32, 64)] {
        for (n, &fa) in formats.iter().enumerate() {
            for (o, &fb) in formats.iter().enumerate() {
                let case = Case::random(m, k, 0x5eed + (m * 100 + n * 10 + o) as u64);
                let mut h = case.load(fa, fb);
                h.wave.exec = 0x0000_ffff_0000_0001; // EXEC does not mask an MFMA.
                let words = place(words, fa.code, fb.code);
                let inst = decode(&words, Target::Gfx950).unwrap();
                assert_eq!(usize::from(inst.src_regs(0)), fa.bits(), "{inst}");
                h.run(&words).unwrap_or_else(|e| panic!("{inst}: {e}"));
                case.check(&h, &inst.to_string(), |_, _, _| 1.0);
            }
        }
    }
}

#[test]
fn f8f6f4_special_values_follow_the_ocp_formats() {
    // fp8 E4M3 0x7f is NaN, bf8 E5M2 0x7c is +inf: a NaN in A row 0 makes row 0 NaN; an
    // infinity in B column 1 makes column 1 infinite where A's factor is positive.
    let mut case = Case::random(16, 128, 7);
    case.a.iter_mut().for_each(|v| *v = 1.0);
    let mut h = case.load(FP8, BF8);
    let (g, q) = item_of(16, 70, 8);
    put_item(&mut h, A, 16 * g, q, 8, 0x7f);
    put_item(&mut h, B, 1 + 16 * g, q, 8, 0x7c);
    h.run(&place(F8F6F4_16, 0, 1)).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            let (reg, lane) = d_pos(16, i, j);
            let got = f32::from_bits(h.wave.vgpr[D + reg][lane]);
            match (i, j) {
                (0, _) => assert!(got.is_nan(), "D[0][{j}] = {got}"),
                (_, 1) => assert_eq!(got, f32::INFINITY, "D[{i}][1]"),
                _ => assert_eq!(got, case.want(i, j, |_, _, _| 1.0), "D[{i}][{j}]"),
            }
        }
    }
    // Format codes above 4 are refused, naming the op.
    let mut h = case.load(FP8, FP8);
    let err = h.run(&place(F8F6F4_16, 5, 0)).unwrap_err().to_string();
    assert!(err.contains("v_mfma_f32_16x16x128_f8f6f4") && err.contains("format code 5"), "{err}");
}

#[test]
fn older_fp8_mfmas_read_ocp_formats_on_gfx950() {
    // v_mfma_f32_16x16x32_bf8_fp8 v[16:19], v[32:33], v[48:49], v[64:67]: A bf8 (E5M2),
    // B fp8 (E4M3), 8 elements per lane: lane r + 16*(k/8), byte k%8 (guide 7.1.4.1).
    let words = [0xd3f10010u32, 0x05026120];
    let inst = decode(&words, Target::Gfx950).unwrap();
    assert_eq!(inst.op.name(), "v_mfma_f32_16x16x32_bf8_fp8");
    let words = [
        (words[0] & !0xff) | D as u32,
        (words[1] & !0x7ff_ffff) | (256 + A as u32) | (256 + B as u32) << 9 | (256 + C as u32) << 18,
    ];
    let mut rng = Rng(99);
    let a: Vec<f64> = (0..16 * 32).map(|_| VALUES[(rng.next() % 15) as usize]).collect();
    let b: Vec<f64> = (0..32 * 16).map(|_| VALUES[(rng.next() % 15) as usize]).collect();
    let mut h = Harness::for_target(Target::Gfx950);
    for r in 0..16 {
        for k in 0..32 {
            let (lane, byte) = (r + 16 * (k / 8), k % 8);
            let reg = &mut h.wave.vgpr[A + byte / 4][lane];
            *reg |= BF8.encode(a[r * 32 + k]) << (8 * (byte % 4));
            let reg = &mut h.wave.vgpr[B + byte / 4][lane];
            *reg |= FP8.encode(b[k * 16 + r]) << (8 * (byte % 4));
        }
    }
    h.run(&words).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            let (reg, lane) = d_pos(16, i, j);
            let want: f64 = (0..32).map(|k| a[i * 32 + k] * b[k * 16 + j]).sum();
            assert_eq!(f32::from_bits(h.wave.vgpr[D + reg][lane]), want as f32, "D[{i}][{j}]");
        }
    }
}

/// Scale registers of the block-scaled tests.
const SA: usize = 48;
const SB: usize = 49;

/// `v_mfma_ld_scale_b32 v48, v49` with op_sel / op_sel_hi bits (bit i for source i; LLVM
/// 22: `d3ac0000 00023318` is the prefix of `v_mfma_scale_f32_16x16x128_f8f6f4 ..., v24, v25
/// op_sel_hi:[0,0,0]`), followed by the MFMA.
fn scaled(mfma: [u32; 2], op_sel: u32, op_sel_hi: u32, scale_a: u32, scale_b: u32) -> [u32; 4] {
    let (mut w0, mut w1) = (0xd3ac_0000u32, scale_a | scale_b << 9);
    w0 |= (op_sel & 3) << 11;
    w1 |= (op_sel_hi & 3) << 27;
    // The fused MFMA has abid = 1 (word 0 bit 11).
    [w0, w1, mfma[0] | 1 << 11, mfma[1]]
}

#[test]
fn scaled_mfmas_apply_e8m0_scales_per_row_column_and_k_block() {
    for (words, m, k) in [(F8F6F4_16, 16, 128), (F8F6F4_32, 32, 64)] {
        for (n, (fa, fb)) in [(FP8, FP4), (FP6, BF8), (BF6, FP6), (FP4, FP4)].into_iter().enumerate() {
            for byte in 0..4u32 {
                let case = Case::random(m, k, 0xabc + (m + n) as u64 * 4 + u64::from(byte));
                let mut h = case.load(fa, fb);
                // Exponents 125..=129 (scales 1/4..4) keep every sum exact in f32; the other
                // bytes of the scale registers are noise the byte select must skip.
                let mut rng = Rng(0x77 + u64::from(byte));
                let mut ea = [0u32; 64];
                let mut eb = [0u32; 64];
                for l in 0..64 {
                    ea[l] = 125 + (rng.next() % 5) as u32;
                    eb[l] = 125 + (rng.next() % 5) as u32;
                    let noise = rng.next() as u32;
                    let put = |e: u32| (noise & !(0xff << (8 * byte))) | e << (8 * byte);
                    h.wave.vgpr[SA][l] = put(ea[l]);
                    h.wave.vgpr[SB][l] = put(eb[l]);
                }
                let (sel, hi) = ((byte & 1) * 3, (byte >> 1) * 3);
                let words = scaled(place(words, fa.code, fb.code), sel, hi, 256 + SA as u32, 256 + SB as u32);
                let inst = decode(&words, Target::Gfx950).unwrap();
                assert_eq!(usize::from(inst.len), 16, "{inst}");
                assert!(inst.op.name().starts_with("v_mfma_scale_f32_"), "{inst}");
                h.run(&words).unwrap_or_else(|e| panic!("{inst}: {e}"));
                // Guide 7.2.1: the scale of A's row i, k block kb (32 k each) is in lane
                // i + m*kb; B's column j likewise.
                let scale = |i: usize, j: usize, kk: usize| {
                    let blk = kk / 32;
                    2f64.powi(ea[i + m * blk] as i32 - 127) * 2f64.powi(eb[j + m * blk] as i32 - 127)
                };
                case.check(&h, &inst.to_string(), scale);
            }
        }
    }
}

#[test]
fn scale_special_values_constants_and_the_standalone_prefix() {
    let case = Case::random(16, 128, 3);
    // A NaN scale (0xff) for A's row 2, k block 1 (lane 2 + 16) makes row 2 NaN.
    let mut h = case.load(FP8, FP8);
    for l in 0..64 {
        h.wave.vgpr[SA][l] = if l == 18 { 0xff } else { 127 };
        h.wave.vgpr[SB][l] = 127;
    }
    h.run(&scaled(place(F8F6F4_16, 0, 0), 0, 0, 256 + SA as u32, 256 + SB as u32)).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            let (reg, lane) = d_pos(16, i, j);
            let got = f32::from_bits(h.wave.vgpr[D + reg][lane]);
            if i == 2 {
                assert!(got.is_nan(), "D[2][{j}] = {got}");
            } else {
                assert_eq!(got, case.want(i, j, |_, _, _| 1.0), "D[{i}][{j}]");
            }
        }
    }
    // An inline float constant gives its exponent: 2.0 (code 0xf4) is scale 2 (the guide:
    // "floats, using only the exponent portion"; LLVM 22 prints it as an invalid immediate).
    let mut h = case.load(FP4, FP6);
    let words = scaled(place(F8F6F4_16, 4, 2), 0, 0, 0xf4, 0xf4);
    let text = decode(&words, Target::Gfx950).unwrap().to_string();
    assert!(text.contains(", 2.0/*Invalid immediate*/, 2.0/*Invalid immediate*/"), "{text}");
    h.run(&words).unwrap();
    case.check(&h, "constant scales", |_, _, _| 4.0);
    // A's scale from byte 2 ({op_sel_hi[0], op_sel[0]} = 10), B's from byte 1 (01).
    let mut h = case.load(FP6, BF6);
    for l in 0..64 {
        h.wave.vgpr[SA][l] = 0x1100_7f22 | (125 + (l % 3) as u32) << 16;
        h.wave.vgpr[SB][l] = 0x33_44_00_55 | (126 + (l % 4) as u32) << 8;
    }
    let words = scaled(place(F8F6F4_16, 2, 3), 0b10, 0b01, 256 + SA as u32, 256 + SB as u32);
    let text = decode(&words, Target::Gfx950).unwrap().to_string();
    assert!(text.ends_with("v48, v49 op_sel:[0,1,0] op_sel_hi:[1,0,0] cbsz:2 blgp:3"), "{text}");
    h.run(&words).unwrap();
    case.check(&h, &text, |i, j, kk| {
        let (la, lb) = (i + 16 * (kk / 32), j + 16 * (kk / 32));
        2f64.powi((la % 3) as i32 - 2) * 2f64.powi((lb % 4) as i32 - 1)
    });
    // A standalone `v_mfma_ld_scale_b32` (here followed by an MFMA with abid 0, so not
    // fused) changes nothing: the MFMA after it is unscaled.
    let mut h = case.load(BF8, FP8);
    for l in 0..64 {
        h.wave.vgpr[SA][l] = 130;
        h.wave.vgpr[SB][l] = 120;
    }
    let fused = scaled(place(F8F6F4_16, 1, 0), 0, 0, 256 + SA as u32, 256 + SB as u32);
    let mut words = fused;
    words[2] &= !(1 << 11);
    let prefix = decode(&words, Target::Gfx950).unwrap();
    assert_eq!((prefix.op.name(), prefix.len), ("v_mfma_ld_scale_b32", 8));
    h.run(&words).unwrap();
    case.check(&h, "standalone prefix", |_, _, _| 1.0);
}

#[test]
fn sparse_fp8_reads_ocp_and_two_register_chunks() {
    // v_smfmac_f32_16x16x128_fp8_fp8 v[16:19], v[32:35], v[48:55], v64 with D = v0, A = v16,
    // B = v24, the index register v32. Guide 7.5: B (8 registers) is two 4-register chunks,
    // lane group g holding k 16g..16g+15 in v0-v3 and 64+16g.. in v4-v7; A's 16 stored
    // values per lane are the kept pairs of the lane's 32 logical items (laid out like B's),
    // 2-bit index i of the index register placing stored value i within its group of four.
    let words = [0xd3c3_0000 | D as u32, (256 + A as u32) | (256 + B as u32) << 9 | (256 + C as u32) << 18];
    assert_eq!(
        decode(&words, Target::Gfx950).unwrap().to_string(),
        "v_smfmac_f32_16x16x128_fp8_fp8 v[0:3], v[16:19], v[24:31], v32"
    );
    let k_of = |g: usize, item: usize| (item / 16) * 64 + 16 * g + item % 16;
    let mut rng = Rng(4242);
    let mut a = vec![0f64; 16 * 128];
    let b: Vec<f64> = (0..128 * 16).map(|_| VALUES[(rng.next() % 15) as usize]).collect();
    let mut h = Harness::for_target(Target::Gfx950);
    for lane in 0..64 {
        let (row, g) = (lane % 16, lane / 16);
        let mut index = 0u32;
        for pair in 0..8 {
            // Keep positions p0 < p1 of the group of four.
            let p0 = (rng.next() % 3) as usize;
            let p1 = p0 + 1 + (rng.next() % (3 - p0 as u64)) as usize;
            for (n, pos) in [p0, p1].into_iter().enumerate() {
                let e = 2 * pair + n;
                let v = VALUES[(rng.next() % 15) as usize];
                a[row * 128 + k_of(g, 4 * pair + pos)] = v;
                h.wave.vgpr[A + e / 4][lane] |= FP8.encode(v) << (8 * (e % 4));
                index |= (pos as u32) << (2 * e);
            }
        }
        h.wave.vgpr[C][lane] = index;
        for item in 0..32 {
            let k = k_of(g, item);
            h.wave.vgpr[B + item / 4][lane] |= FP8.encode(b[k * 16 + row]) << (8 * (item % 4));
        }
    }
    // The 8-bit K-doubled ops have one index set: ABID does not choose another.
    for abid in [0u32, 1] {
        for i in 0..16 {
            for j in 0..16 {
                let (reg, lane) = d_pos(16, i, j);
                h.wave.vgpr[D + reg][lane] = ((i * 16 + j) as f32).to_bits();
            }
        }
        h.run(&[words[0] | abid << 11, words[1]]).unwrap();
        for i in 0..16 {
            for j in 0..16 {
                let (reg, lane) = d_pos(16, i, j);
                let want = (i * 16 + j) as f64 + (0..128).map(|k| a[i * 128 + k] * b[k * 16 + j]).sum::<f64>();
                assert_eq!(f32::from_bits(h.wave.vgpr[D + reg][lane]), want as f32, "abid {abid}: D[{i}][{j}]");
            }
        }
    }
}

/// Every gfx950 matrix op LLVM decodes (its probe form, operands moved into the harness's
/// registers) runs: no op is left unimplemented and none panics (e.g. on the 8-register
/// operands of the newest shapes).
#[test]
fn every_gfx950_matrix_op_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/isa/gfx950");
    let mut ran = std::collections::BTreeSet::new();
    for file in ["vop3p.txt", "vop3px.txt"] {
        for line in std::fs::read_to_string(dir.join(file)).unwrap().lines() {
            let (hex, text) = line.split_once('\t').unwrap();
            let mut words: Vec<u32> = hex.split(' ').map(|w| u32::from_str_radix(w, 16).unwrap()).collect();
            let name = text.split(' ').next().unwrap();
            let ops: Vec<&str> = text.split_once(' ').map_or("", |t| t.1).split(", ").collect();
            let at = |i: usize, r: &str| {
                ops.get(i).is_some_and(|o| o.starts_with(&format!("v[{r}:")) || o.starts_with(&format!("v{r}")))
            };
            let probe = !text.contains("Invalid") && at(0, "16") && at(1, "32") && at(2, "48");
            if !(name.starts_with("v_mfma") || name.starts_with("v_smfmac")) || !probe || ran.contains(name) {
                continue;
            }
            let n = words.len();
            // VGPR operands, no broadcast; the scaled form needs abid 1.
            let [w0, w1] = place([words[n - 2] & !0xf800, words[n - 1] & !(3 << 27)], 0, 0);
            words[n - 2] = w0 | if n == 4 { 1 << 11 } else { 0 };
            words[n - 1] = w1;
            if n == 4 {
                words[1] = (256 + SA as u32) | ((256 + SB as u32) << 9);
            }
            let mut h = Harness::for_target(Target::Gfx950);
            for r in 0..64 {
                h.wave.vgpr[r] = [0x3838_3838; 64];
            }
            let inst = decode(&words, Target::Gfx950).unwrap();
            h.run(&words).unwrap_or_else(|e| panic!("{inst}: {e}"));
            ran.insert(name.to_string());
        }
    }
    // Every gfx950 MFMA-class mnemonic but the standalone scale prefix.
    let all: std::collections::BTreeSet<&str> = sim::isa::mnemonics(Target::Gfx950)
        .filter(|m| (m.starts_with("v_mfma") || m.starts_with("v_smfmac")) && *m != "v_mfma_ld_scale_b32")
        .collect();
    let missing: Vec<_> = all.iter().filter(|m| !ran.contains(**m)).collect();
    assert!(missing.is_empty(), "not run: {missing:?}");
}

#[test]
fn subnormal_inputs_and_scaled_overflow() {
    // fp8's smallest subnormal 2^-9 (0x01) times bf8's 2^-16 (0x01), 128 times: 2^-18,
    // denormal inputs kept (guide 7.1.5: "keep Input/Output Denorms").
    let mut case = Case::random(16, 128, 11);
    case.a.iter_mut().for_each(|v| *v = 0.0);
    case.b.iter_mut().for_each(|v| *v = 0.0);
    case.c.iter_mut().for_each(|v| *v = 0.0);
    let mut h = case.load(FP8, BF8);
    for l in 0..64 {
        for r in 0..8 {
            h.wave.vgpr[A + r][l] = 0x0101_0101;
            h.wave.vgpr[B + r][l] = 0x0101_0101;
        }
    }
    h.run(&place(F8F6F4_16, 0, 1)).unwrap();
    for reg in 0..4 {
        assert!(h.wave.vgpr[D + reg].iter().all(|&v| f32::from_bits(v) == 2f32.powi(-18)));
    }
    // E4M3's largest, 448, times E5M2's, 57344, scaled by 2^127 * 2^127 overflows to +inf;
    // scaled by 2^-127 * 2^-127 the products underflow to zero.
    for (e, want) in [(254u32, f32::INFINITY), (0, 0.0)] {
        let mut h = case.load(FP8, BF8);
        for l in 0..64 {
            for r in 0..8 {
                h.wave.vgpr[A + r][l] = 0x7e7e_7e7e;
                h.wave.vgpr[B + r][l] = 0x7b7b_7b7b;
            }
            h.wave.vgpr[SA][l] = e;
            h.wave.vgpr[SB][l] = e;
        }
        h.run(&scaled(place(F8F6F4_16, 0, 1), 0, 0, 256 + SA as u32, 256 + SB as u32)).unwrap();
        for reg in 0..4 {
            assert!(h.wave.vgpr[D + reg].iter().all(|&v| f32::from_bits(v) == want), "scale {e}");
        }
    }
}

#[test]
fn llc_compiled_scaled_mfma_runs_with_an_agpr_result() {
    // What LLVM 22's llc emits for llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4 (fp8 x fp8,
    // zero accumulator, scales in v0/v1, result in AGPRs).
    let words = [0xd3ac_0000, 0x0002_0300, 0xd3ad_8800, 0x0202_1904];
    let inst = decode(&words, Target::Gfx950).unwrap();
    assert_eq!(
        inst.to_string(),
        "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[12:19], 0, v0, v1 op_sel_hi:[0,0,0]"
    );
    let mut case = Case::random(16, 128, 21);
    case.c.iter_mut().for_each(|v| *v = 0.0);
    let mut h = case.load(FP8, FP8);
    for r in 0..8 {
        h.wave.vgpr[4 + r] = h.wave.vgpr[A + r];
        h.wave.vgpr[12 + r] = h.wave.vgpr[B + r];
    }
    for l in 0..64 {
        h.wave.vgpr[0][l] = 126 + (l % 3) as u32;
        h.wave.vgpr[1][l] = 128 - (l % 2) as u32;
    }
    h.run(&words).unwrap();
    for i in 0..16 {
        for j in 0..16 {
            let (reg, lane) = d_pos(16, i, j);
            let want = case.want(i, j, |i, j, kk| {
                let (la, lb) = (i + 16 * (kk / 32), j + 16 * (kk / 32));
                2f64.powi((la % 3) as i32 - 1) * 2f64.powi(1 - (lb % 2) as i32)
            });
            assert_eq!(f32::from_bits(h.wave.agpr[reg][lane]), want, "D[{i}][{j}]");
        }
    }
}

#[test]
fn fp16_ovfl_saturates_matrix_results() {
    // MODE bit 23 (FP16_OVFL): "F32 Result on overflow is clamped to +/- MAX, otherwise the
    // overflow result is normalized to +/-INF. ... I32 Result is clamped to +/-MAX" (guide
    // 7.1.2). v_mfma_i32_16x16x64_i8 with A = B = 127: every D gains 64 * 127 * 127.
    let words = place([0xd3b6_0010, 0x0502_6120], 0, 0);
    assert_eq!(decode(&words, Target::Gfx950).unwrap().op.name(), "v_mfma_i32_16x16x64_i8");
    for ovfl in [false, true] {
        let mut h = Harness::for_target(Target::Gfx950);
        h.wave.mode = if ovfl { 1 << 23 } else { 0 };
        for r in 0..4 {
            h.wave.vgpr[A + r] = [0x7f7f_7f7f; 64];
            h.wave.vgpr[B + r] = [0x7f7f_7f7f; 64];
            h.wave.vgpr[C + r] = [(i32::MAX - 5) as u32; 64];
        }
        h.run(&words).unwrap();
        let want = if ovfl { i32::MAX } else { (i32::MAX - 5).wrapping_add(64 * 127 * 127) };
        for r in 0..4 {
            assert!(h.wave.vgpr[D + r].iter().all(|&v| v as i32 == want), "ovfl {ovfl}");
        }
    }
    // f32: a scaled product past f32's range, and an infinite bf8 input, are ±MAX.
    let mut case = Case::random(16, 128, 5);
    case.c.iter_mut().for_each(|v| *v = 0.0);
    for ovfl in [false, true] {
        let mut h = case.load(FP8, BF8);
        h.wave.mode = if ovfl { 1 << 23 } else { 0 };
        for l in 0..64 {
            for r in 0..8 {
                h.wave.vgpr[A + r][l] = 0x7e7e_7e7e;
                h.wave.vgpr[B + r][l] = if l % 16 == 3 { 0xfcfc_fcfc } else { 0x7b7b_7b7b };
            }
            h.wave.vgpr[SA][l] = 254;
            h.wave.vgpr[SB][l] = 254;
        }
        h.run(&scaled(place(F8F6F4_16, 0, 1), 0, 0, 256 + SA as u32, 256 + SB as u32)).unwrap();
        for i in 0..16 {
            for j in 0..16 {
                let (reg, lane) = d_pos(16, i, j);
                let got = f32::from_bits(h.wave.vgpr[D + reg][lane]);
                let inf = if j == 3 { f32::NEG_INFINITY } else { f32::INFINITY };
                let want = if ovfl { f32::MAX.copysign(inf) } else { inf };
                assert_eq!(got, want, "ovfl {ovfl}: D[{i}][{j}]");
            }
        }
    }
}
