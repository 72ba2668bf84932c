//! gfx950 (CDNA4) small-float conversions run through the interpreter: every
//! `v_cvt_scalef32_*` op, the OCP forms of the older fp8/bf8 conversions, and `v_prng_b32`.
//! Encodings come from `tests/data/isa/gfx950/vop3.txt` (LLVM 22's disassembler) with the
//! register, `op_sel` and modifier fields rewritten; expected values are computed here from
//! the format definitions (OCP MX tables, CDNA4 guide section 7.3 and its pseudocode), by
//! brute force over each format's codes, not by the simulator's encoder.

use sim::isa::{decode, Target};
use sim::testing::{splitmix, Harness};

const FP16_OVFL: u32 = 1 << 23;

fn harness() -> Harness {
    Harness::with_hip_mode(Target::Gfx950)
}

fn set(h: &mut Harness, reg: usize, f: impl Fn(usize) -> u32) {
    for l in 0..64 {
        h.wave.vgpr[reg][l] = f(l);
    }
}

/// The first VOP3 encoding of `mnemonic` in the vectors.
fn base(mnemonic: &str) -> [u32; 2] {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/isa/gfx950/vop3.txt");
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines() {
        let (hex, asm) = line.split_once('\t').unwrap();
        if asm.split_whitespace().next() == Some(mnemonic) {
            let w: Vec<u32> = hex.split_whitespace().map(|x| u32::from_str_radix(x, 16).unwrap()).collect();
            return [w[0], w[1]];
        }
    }
    panic!("{mnemonic} not in the vectors")
}

/// Source operand fields: VGPR n is 256 + n; an SGPR its number; 242 the inline constant 1.0.
fn v(n: usize) -> u32 {
    256 + n as u32
}

/// VOP3 fields: vdst (word 0 bits 7:0), abs (10:8), op_sel (14:11); sources (word 1 bits 8:0,
/// 17:9, 26:18), neg (31:29).
#[derive(Clone, Copy, Default)]
struct F {
    d: usize,
    s: [u32; 3],
    op_sel: u32,
    abs: u32,
    neg: u32,
}

fn enc(mnemonic: &str, f: F) -> [u32; 2] {
    let w = base(mnemonic);
    let w0 = (w[0] & !0x7fff) | f.d as u32 | f.abs << 8 | f.op_sel << 11;
    let w1 = (w[1] & !0xe7ff_ffff) | f.s[0] | f.s[1] << 9 | f.s[2] << 18 | f.neg << 29;
    let words = [w0, w1];
    let inst = decode(&words, Target::Gfx950).unwrap();
    assert!(inst.to_string().starts_with(mnemonic), "{inst}");
    words
}

// ----- reference formats ----------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// All codes finite (fp6, bf6, fp4).
    Finite,
    /// E4M3: S.1111.111 NaN, no infinity.
    E4m3,
    /// E5M2: top exponent infinity / NaN.
    E5m2,
}

#[derive(Clone, Copy, Debug)]
struct Small {
    e: u32,
    m: u32,
    bias: i32,
    kind: Kind,
}

const FP8: Small = Small { e: 4, m: 3, bias: 7, kind: Kind::E4m3 };
const BF8: Small = Small { e: 5, m: 2, bias: 15, kind: Kind::E5m2 };
const FP6: Small = Small { e: 2, m: 3, bias: 1, kind: Kind::Finite };
const BF6: Small = Small { e: 3, m: 2, bias: 3, kind: Kind::Finite };
const FP4: Small = Small { e: 2, m: 1, bias: 1, kind: Kind::Finite };

impl Small {
    fn bits(self) -> u32 {
        1 + self.e + self.m
    }
    fn sign(self) -> u32 {
        1 << (self.e + self.m)
    }
    /// The value of a code, from the definition.
    fn value(self, c: u32) -> f64 {
        let mag = c & (self.sign() - 1);
        let (e, m) = (mag >> self.m, mag & ((1 << self.m) - 1));
        let top = (1 << self.e) - 1;
        let x = match self.kind {
            Kind::E4m3 if mag == self.sign() - 1 => f64::NAN,
            Kind::E5m2 if e == top && m == 0 => f64::INFINITY,
            Kind::E5m2 if e == top => f64::NAN,
            _ if e == 0 => m as f64 / (1 << self.m) as f64 * 2f64.powi(1 - self.bias),
            _ => (1.0 + m as f64 / (1 << self.m) as f64) * 2f64.powi(e as i32 - self.bias),
        };
        if c & self.sign() != 0 {
            -x
        } else {
            x
        }
    }
    /// The largest finite magnitude's code.
    fn max(self) -> u32 {
        (0..self.sign()).filter(|&c| self.value(c).is_finite()).max().unwrap()
    }
    /// NaN: E4M3/E5M2 all ones (the simulator's choice of NaN code); fp4/fp6 have none and
    /// get the largest magnitude (the simulator's documented choice).
    fn nan(self, neg: bool) -> u32 {
        let s = if neg { self.sign() } else { 0 };
        match self.kind {
            Kind::Finite => s | self.max(),
            _ => s | (self.sign() - 1),
        }
    }
    /// Infinity or overflow: fp4/fp6 saturate; fp8/bf8 saturate with FP16_OVFL, else NaN
    /// (E4M3) or infinity (E5M2) (guide section 7.3).
    fn over(self, neg: bool, sat: bool) -> u32 {
        let s = if neg { self.sign() } else { 0 };
        match self.kind {
            Kind::Finite => s | self.max(),
            _ if sat => s | self.max(),
            Kind::E4m3 => s | 0x7f,
            Kind::E5m2 => s | 0x7c,
        }
    }
    /// Encodes the exact value `x`: round to nearest even, or with `sr = Some(r)` add the
    /// fraction `r` (of the gap between the neighbours) and truncate. Neighbours found by
    /// searching every code.
    fn encode(self, x: f64, sr: Option<f64>, sat: bool) -> u32 {
        let neg = x.is_sign_negative();
        let s = if neg { self.sign() } else { 0 };
        if x.is_nan() {
            return self.nan(neg);
        }
        if x.is_infinite() {
            return self.over(neg, sat);
        }
        let a = x.abs();
        let max = self.max();
        let lo = (0..=max).filter(|&c| self.value(c) <= a).max().unwrap();
        let vlo = self.value(lo);
        if vlo == a {
            return s | lo;
        }
        let vhi = if lo < max { self.value(lo + 1) } else { 2.0 * self.value(max) - self.value(max - 1) };
        let frac = (a - vlo) / (vhi - vlo);
        let up = match sr {
            None => frac > 0.5 || (frac == 0.5 && lo & 1 == 1),
            Some(r) => frac + r >= 1.0,
        };
        let c = lo + up as u32;
        if c > max {
            self.over(neg, sat)
        } else {
            s | c
        }
    }
}

/// The scale operand's E8M0 exponent as a factor (NaN for 0xff).
fn scale(bits: u32) -> f64 {
    match (bits >> 23) & 0xff {
        0xff => f64::NAN,
        e => 2f64.powi(e as i32 - 127),
    }
}

/// The top `k` bits of `r` as a fraction.
fn rfrac(r: u32, k: u32) -> f64 {
    (r >> (32 - k)) as f64 / 2f64.powi(k as i32)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Wide {
    F32,
    F16,
    Bf16,
}

impl Wide {
    fn value(self, b: u32) -> f64 {
        match self {
            Wide::F32 => f32::from_bits(b) as f64,
            Wide::F16 => half::f16::from_bits(b as u16).to_f64(),
            Wide::Bf16 => half::bf16::from_bits(b as u16).to_f64(),
        }
    }
    fn round(self, x: f64) -> u32 {
        match self {
            Wide::F32 => (x as f32).to_bits(),
            Wide::F16 => half::f16::from_f64(x).to_bits() as u32,
            Wide::Bf16 => half::bf16::from_f64(x).to_bits() as u32,
        }
    }
    fn mbits(self) -> u32 {
        match self {
            Wide::F32 => 23,
            Wide::F16 => 10,
            Wide::Bf16 => 7,
        }
    }
    fn is_nan(self, b: u32) -> bool {
        self.value(b).is_nan()
    }
}

/// Inputs that exercise a format with scale exponent `e`: values around the format's range
/// (ties, overflow, subnormals), and specials.
fn wide_input(w: Wide, f: Small, i: u64) -> u32 {
    let r = splitmix(i);
    let special = match r % 16 {
        0 => Some(f64::NAN),
        1 => Some(f64::INFINITY),
        2 => Some(f64::NEG_INFINITY),
        3 => Some(0.0),
        4 => Some(-0.0),
        // An exact tie between two codes, or a code itself.
        5 | 6 => {
            let c = splitmix(i + 7) & (f.sign() - 1);
            let c = c.min(f.max() - 1);
            let t = if r % 16 == 5 { (f.value(c) + f.value(c + 1)) / 2.0 } else { f.value(c) };
            Some(if r & 1 << 8 != 0 { -t } else { t })
        }
        _ => None,
    };
    let x = special.unwrap_or_else(|| {
        // (1 + frac) * 2^k for k from below the smallest subnormal to past the largest value.
        let lo = 1 - f.bias - f.m as i32 - 2;
        let hi = (1 << f.e) - f.bias + 1;
        let k = lo + (splitmix(i + 1) % (hi - lo + 1) as u32) as i32;
        let frac = (splitmix(i + 2) >> 8) as f64 / (1u32 << 24) as f64;
        let s = if r & 1 << 9 != 0 { -1.0 } else { 1.0 };
        s * (1.0 + frac) * 2f64.powi(k)
    });
    match w {
        Wide::F32 => (x as f32).to_bits(),
        Wide::F16 => half::f16::from_f64(x).to_bits() as u32,
        Wide::Bf16 => half::bf16::from_f64(x).to_bits() as u32,
    }
}

/// A scale operand for lane `l`: mostly 2^0..2^3 (so inputs keep hitting the range), with
/// extremes (2^-127, 2^127, the NaN exponent) in a few lanes. The mantissa and sign are noise
/// the ops must ignore.
fn scale_input(l: usize) -> u32 {
    let e = match l % 11 {
        0 => 0,
        1 => 254,
        2 => 255,
        n => 125 + n as u32 % 5,
    };
    (splitmix(l as u64 + 99) & 0x807f_ffff) | e << 23
}

/// A downcast input value scaled the way the inputs of `scale_input(l)` expect, so that
/// values land in the format's range: the input is multiplied by the lane's scale.
fn scaled_wide_input(w: Wide, f: Small, i: u64, l: usize) -> u32 {
    let b = wide_input(w, f, i);
    let e = (scale_input(l) >> 23) & 0xff;
    if !(100..=200).contains(&e) {
        return b; // the extremes test over/underflow with raw inputs
    }
    w.round(w.value(b) * 2f64.powi(e as i32 - 127))
}

const EXEC: u64 = 0xf0f0_ffff_7ff7_fffe;

/// Old destination contents (the ops keep what they do not write).
fn old(k: usize, l: usize) -> u32 {
    splitmix(1000 + 64 * k as u64 + l as u64)
}

fn merge(old: u32, v: u32, shift: u32, width: u32) -> u32 {
    let m = ((1u64 << width) - 1) as u32;
    (old & !(m << shift)) | (v & m) << shift
}

/// Runs `words` with destination registers `d..d+n` holding `old`, EXEC holes, and checks every
/// register against `want(k, lane)` in active lanes (`is_nan(k, got, want)` compares NaNs) and
/// the old value in inactive ones.
fn check(
    h: &mut Harness,
    words: [u32; 2],
    d: usize,
    n: usize,
    want: impl Fn(usize, usize) -> u32,
    same: impl Fn(u32, u32) -> bool,
) {
    for k in 0..n {
        set(h, d + k, |l| old(k, l));
    }
    h.wave.exec = EXEC;
    h.run(&words).unwrap();
    for k in 0..n {
        for l in 0..64 {
            let got = h.wave.vgpr[d + k][l];
            if EXEC >> l & 1 == 0 {
                assert_eq!(got, old(k, l), "inactive lane {l} reg {k}");
            } else {
                let w = want(k, l);
                assert!(same(got, w), "lane {l} reg {k}: got {got:#x}, want {w:#x}");
            }
        }
    }
}

fn exact(a: u32, b: u32) -> bool {
    a == b
}

// ----- to fp8/bf8 ----------------------------------------------------------------------

#[test]
fn pk_fp8_bf8_from_f32_f16_bf16() {
    for (name, f, wide) in [
        ("v_cvt_scalef32_pk_fp8_f32", FP8, Wide::F32),
        ("v_cvt_scalef32_pk_bf8_f32", BF8, Wide::F32),
        ("v_cvt_scalef32_pk_fp8_f16", FP8, Wide::F16),
        ("v_cvt_scalef32_pk_bf8_f16", BF8, Wide::F16),
        ("v_cvt_scalef32_pk_fp8_bf16", FP8, Wide::Bf16),
        ("v_cvt_scalef32_pk_bf8_bf16", BF8, Wide::Bf16),
    ] {
        for (mode, op_sel) in [(0x2f0, 0), (0x2f0 | FP16_OVFL, 8)] {
            let sat = mode & FP16_OVFL != 0;
            let mut h = harness();
            h.wave.mode = mode;
            let (a, b, s, d) = (1, 2, 3, 10);
            if wide == Wide::F32 {
                set(&mut h, a, |l| scaled_wide_input(wide, f, l as u64, l));
                set(&mut h, b, |l| scaled_wide_input(wide, f, 500 + l as u64, l));
            } else {
                set(&mut h, a, |l| {
                    scaled_wide_input(wide, f, l as u64, l) | scaled_wide_input(wide, f, 500 + l as u64, l) << 16
                });
            }
            set(&mut h, s, scale_input);
            let srcs = if wide == Wide::F32 { [v(a), v(b), v(s)] } else { [v(a), v(s), 0] };
            let words = enc(name, F { d, s: srcs, op_sel, ..F::default() });
            let regs = h.wave.vgpr.clone();
            let want = |_: usize, l: usize| {
                let (x0, x1) =
                    if wide == Wide::F32 { (regs[a][l], regs[b][l]) } else { (regs[a][l] & 0xffff, regs[a][l] >> 16) };
                let sc = scale(regs[s][l]);
                let c = |x: u32| f.encode(wide.value(x) / sc, None, sat);
                merge(old(0, l), c(x0) | c(x1) << 8, if op_sel & 8 != 0 { 16 } else { 0 }, 16)
            };
            check(&mut h, words, d, 1, want, exact);
        }
    }
}

#[test]
fn pk_fp8_applies_neg_and_abs_and_reads_inline_scales() {
    // -|x| via abs + neg on src0, neg on src1, scale the inline constant 1.0 (2^0).
    let mut h = harness();
    set(&mut h, 1, |l| (1.0f32 + l as f32 / 8.0).to_bits());
    set(&mut h, 2, |l| (-(l as f32) / 4.0).to_bits());
    let words = enc("v_cvt_scalef32_pk_fp8_f32", F { d: 10, s: [v(1), v(2), 242], abs: 1, neg: 3, ..F::default() });
    let want = |_: usize, l: usize| {
        let c0 = FP8.encode(-(1.0 + l as f64 / 8.0), None, false);
        let c1 = FP8.encode(l as f64 / 4.0, None, false);
        merge(old(0, l), c0 | c1 << 8, 0, 16)
    };
    check(&mut h, words, 10, 1, want, exact);
}

#[test]
fn sr_fp8_bf8_from_f32_f16_bf16() {
    for (name, f, wide) in [
        ("v_cvt_scalef32_sr_fp8_f32", FP8, Wide::F32),
        ("v_cvt_scalef32_sr_bf8_f32", BF8, Wide::F32),
        ("v_cvt_scalef32_sr_fp8_f16", FP8, Wide::F16),
        ("v_cvt_scalef32_sr_bf8_f16", BF8, Wide::F16),
        ("v_cvt_scalef32_sr_fp8_bf16", FP8, Wide::Bf16),
        ("v_cvt_scalef32_sr_bf8_bf16", BF8, Wide::Bf16),
    ] {
        // op_sel[3:2] picks the destination byte; op_sel[0] the high half of a 16-bit source.
        for (mode, op_sel) in [(0x2f0, 0b0100), (0x2f0 | FP16_OVFL, 0b1101), (0x2f0, 0b1000)] {
            let sat = mode & FP16_OVFL != 0;
            let mut h = harness();
            h.wave.mode = mode;
            let (a, r, s, d) = (1, 2, 3, 10);
            set(&mut h, a, |l| {
                scaled_wide_input(wide, f, l as u64, l) | scaled_wide_input(wide, f, 700 + l as u64, l) << 16
            });
            if wide == Wide::F32 {
                set(&mut h, a, |l| scaled_wide_input(wide, f, l as u64, l));
            }
            set(&mut h, r, |l| splitmix(300 + l as u64));
            set(&mut h, s, scale_input);
            let words = enc(name, F { d, s: [v(a), v(r), v(s)], op_sel, ..F::default() });
            let regs = h.wave.vgpr.clone();
            let k = wide.mbits() - f.m;
            let want = |_: usize, l: usize| {
                let x = if wide == Wide::F32 {
                    regs[a][l]
                } else if op_sel & 1 != 0 {
                    regs[a][l] >> 16
                } else {
                    regs[a][l] & 0xffff
                };
                let c = f.encode(wide.value(x) / scale(regs[s][l]), Some(rfrac(regs[r][l], k)), sat);
                merge(old(0, l), c, 8 * (op_sel >> 2 & 3), 8)
            };
            check(&mut h, words, d, 1, want, exact);
        }
    }
}

// ----- to fp4 --------------------------------------------------------------------------

#[test]
fn pk_fp4_plain_and_stochastic() {
    for (name, wide, sr) in [
        ("v_cvt_scalef32_pk_fp4_f32", Wide::F32, false),
        ("v_cvt_scalef32_pk_fp4_f16", Wide::F16, false),
        ("v_cvt_scalef32_pk_fp4_bf16", Wide::Bf16, false),
        ("v_cvt_scalef32_sr_pk_fp4_f32", Wide::F32, true),
        ("v_cvt_scalef32_sr_pk_fp4_f16", Wide::F16, true),
        ("v_cvt_scalef32_sr_pk_fp4_bf16", Wide::Bf16, true),
    ] {
        for op_sel in [0b0000, 0b1100, 0b0100] {
            let mut h = harness();
            let (a, r, s, d) = (2, 4, 5, 10);
            let f = FP4;
            if wide == Wide::F32 {
                set(&mut h, a, |l| scaled_wide_input(wide, f, l as u64, l));
                set(&mut h, a + 1, |l| scaled_wide_input(wide, f, 800 + l as u64, l));
            } else {
                set(&mut h, a, |l| {
                    scaled_wide_input(wide, f, l as u64, l) | scaled_wide_input(wide, f, 800 + l as u64, l) << 16
                });
            }
            set(&mut h, r, |l| splitmix(400 + l as u64));
            set(&mut h, s, scale_input);
            // Plain f32: S0, S1 (= the next register), scale S2; plain 16-bit: S0, scale S1;
            // sr f32: 64-bit S0, seed, scale; sr 16-bit: S0, seed, scale.
            let srcs = match (wide, sr) {
                (Wide::F32, false) => [v(a), v(a + 1), v(s)],
                (_, false) => [v(a), v(s), 0],
                (_, true) => [v(a), v(r), v(s)],
            };
            let words = enc(name, F { d, s: srcs, op_sel, ..F::default() });
            let regs = h.wave.vgpr.clone();
            let k = wide.mbits() - f.m;
            let want = |_: usize, l: usize| {
                let (x0, x1) = if wide == Wide::F32 {
                    (regs[a][l], regs[a + 1][l])
                } else {
                    (regs[a][l] & 0xffff, regs[a][l] >> 16)
                };
                let sc = scale(regs[s][l]);
                let seed = regs[r][l];
                // The second value's random bits: one v_prng_b32 step of the seed.
                let next = (seed << 1) ^ if seed >> 31 != 0 { 197 } else { 0 };
                let rnd = |x: u32| if sr { Some(rfrac(x, k)) } else { None };
                let c0 = f.encode(wide.value(x0) / sc, rnd(seed), false);
                let c1 = f.encode(wide.value(x1) / sc, rnd(next), false);
                merge(old(0, l), c0 | c1 << 4, 8 * (op_sel >> 2 & 3), 8)
            };
            check(&mut h, words, d, 1, want, exact);
        }
    }
}

// ----- to 32 x fp6/bf6 -----------------------------------------------------------------

/// Packs 32 6-bit codes into six dwords (element j at bits 6j..6j+5).
fn pack6(c: &[u32; 32]) -> [u32; 6] {
    let mut bits = 0u128;
    let mut hi = 0u64;
    for (j, &x) in c.iter().enumerate() {
        let p = 6 * j;
        if p < 128 {
            bits |= (x as u128) << p;
            if p + 6 > 128 {
                hi |= (x as u64) >> (128 - p);
            }
        } else {
            hi |= (x as u64) << (p - 128);
        }
    }
    [bits as u32, (bits >> 32) as u32, (bits >> 64) as u32, (bits >> 96) as u32, hi as u32, (hi >> 32) as u32]
}

#[test]
fn pk32_fp6_bf6_conversions() {
    #[derive(Clone, Copy, PartialEq)]
    enum Form {
        Interleaved,
        Ne,
        Sr,
    }
    for (name, f, wide, form) in [
        ("v_cvt_scalef32_2xpk16_fp6_f32", FP6, Wide::F32, Form::Interleaved),
        ("v_cvt_scalef32_2xpk16_bf6_f32", BF6, Wide::F32, Form::Interleaved),
        ("v_cvt_scalef32_pk32_fp6_f16", FP6, Wide::F16, Form::Ne),
        ("v_cvt_scalef32_pk32_fp6_bf16", FP6, Wide::Bf16, Form::Ne),
        ("v_cvt_scalef32_pk32_bf6_f16", BF6, Wide::F16, Form::Ne),
        ("v_cvt_scalef32_pk32_bf6_bf16", BF6, Wide::Bf16, Form::Ne),
        ("v_cvt_scalef32_sr_pk32_fp6_f32", FP6, Wide::F32, Form::Sr),
        ("v_cvt_scalef32_sr_pk32_bf6_f32", BF6, Wide::F32, Form::Sr),
        ("v_cvt_scalef32_sr_pk32_fp6_f16", FP6, Wide::F16, Form::Sr),
        ("v_cvt_scalef32_sr_pk32_fp6_bf16", FP6, Wide::Bf16, Form::Sr),
        ("v_cvt_scalef32_sr_pk32_bf6_f16", BF6, Wide::F16, Form::Sr),
        ("v_cvt_scalef32_sr_pk32_bf6_bf16", BF6, Wide::Bf16, Form::Sr),
    ] {
        let mut h = harness();
        // Sources from v0 (32 or 16 registers; 2xpk16: v0..v15 and v16..v31), destination
        // v40..v45, seed v46, scale v47.
        let (d, r, s) = (40, 46, 47);
        let nsrc = if wide == Wide::F32 { 32 } else { 16 };
        for j in 0..nsrc {
            set(&mut h, j, |l| {
                let e = |i: u64| scaled_wide_input(wide, f, 64 * i + l as u64, l);
                if wide == Wide::F32 {
                    e(j as u64)
                } else {
                    e(2 * j as u64) | e(2 * j as u64 + 1) << 16
                }
            });
        }
        set(&mut h, r, |l| splitmix(900 + l as u64));
        set(&mut h, s, scale_input);
        let srcs = match form {
            Form::Interleaved => [v(0), v(16), v(s)],
            Form::Ne => [v(0), v(s), 0],
            Form::Sr => [v(0), v(r), v(s)],
        };
        let words = enc(name, F { d, s: srcs, ..F::default() });
        let regs = h.wave.vgpr.clone();
        let k = wide.mbits() - f.m;
        let lane_codes = |l: usize| {
            let sc = scale(regs[s][l]);
            let mut seed = regs[r][l];
            let mut codes = [0u32; 32];
            for (j, c) in codes.iter_mut().enumerate() {
                let x = match (form, wide) {
                    (Form::Interleaved, _) => regs[(j % 2) * 16 + j / 2][l],
                    (_, Wide::F32) => regs[j][l],
                    _ => regs[j / 2][l] >> (16 * (j % 2)) & 0xffff,
                };
                let rnd = if form == Form::Sr { Some(rfrac(seed, k)) } else { None };
                *c = f.encode(wide.value(x) / sc, rnd, false);
                seed = (seed << 1) ^ if seed >> 31 != 0 { 197 } else { 0 };
            }
            pack6(&codes)
        };
        check(&mut h, words, d, 6, |k, l| lane_codes(l)[k], exact);
    }
}

// ----- from the small formats ----------------------------------------------------------

fn same_value(to: Wide) -> impl Fn(u32, u32) -> bool {
    move |got, want| got == want || (to.is_nan(got) && to.is_nan(want))
}

/// `code * scale` rounded into `to` (NaN stays NaN).
fn up(f: Small, c: u32, sc: f64, to: Wide) -> u32 {
    to.round(f.value(c) * sc)
}

#[test]
fn single_fp8_bf8_to_f32_and_f16() {
    for (name, f, to) in [
        ("v_cvt_scalef32_f32_fp8", FP8, Wide::F32),
        ("v_cvt_scalef32_f32_bf8", BF8, Wide::F32),
        ("v_cvt_scalef32_f16_fp8", FP8, Wide::F16),
        ("v_cvt_scalef32_f16_bf8", BF8, Wide::F16),
    ] {
        // op_sel[1:0] picks the source byte; op_sel[3] the f16 destination half.
        for op_sel in [0b0000, 0b0011, 0b1001, 0b1110] {
            let mut h = harness();
            let (a, s, d) = (1, 2, 10);
            set(&mut h, a, |l| splitmix(l as u64 + 17 * op_sel as u64));
            set(&mut h, s, scale_input);
            let words = enc(name, F { d, s: [v(a), v(s), 0], op_sel, ..F::default() });
            let regs = h.wave.vgpr.clone();
            let want = |_: usize, l: usize| {
                let c = regs[a][l] >> (8 * (op_sel & 3)) & 0xff;
                let x = up(f, c, scale(regs[s][l]), to);
                if to == Wide::F32 {
                    x
                } else {
                    merge(old(0, l), x, 16 * (op_sel >> 3 & 1), 16)
                }
            };
            let cmp = move |got: u32, want: u32| {
                if to == Wide::F32 {
                    same_value(to)(got, want)
                } else {
                    let sh = 16 * (op_sel >> 3 & 1);
                    (got ^ want) & !(0xffff << sh) == 0 && same_value(to)(got >> sh & 0xffff, want >> sh & 0xffff)
                }
            };
            check(&mut h, words, d, 1, want, cmp);
        }
    }
}

#[test]
fn packed_fp8_bf8_fp4_to_wide() {
    for (name, f, to) in [
        ("v_cvt_scalef32_pk_f32_fp8", FP8, Wide::F32),
        ("v_cvt_scalef32_pk_f32_bf8", BF8, Wide::F32),
        ("v_cvt_scalef32_pk_f16_fp8", FP8, Wide::F16),
        ("v_cvt_scalef32_pk_f16_bf8", BF8, Wide::F16),
        ("v_cvt_scalef32_pk_bf16_fp8", FP8, Wide::Bf16),
        ("v_cvt_scalef32_pk_bf16_bf8", BF8, Wide::Bf16),
        ("v_cvt_scalef32_pk_f32_fp4", FP4, Wide::F32),
        ("v_cvt_scalef32_pk_f16_fp4", FP4, Wide::F16),
        ("v_cvt_scalef32_pk_bf16_fp4", FP4, Wide::Bf16),
    ] {
        // fp8/bf8: op_sel[0] picks the source word; fp4: op_sel[1:0] the source byte.
        for op_sel in [0b00, 0b01, 0b10, 0b11] {
            let mut h = harness();
            let (a, s, d) = (1, 2, 10);
            set(&mut h, a, |l| splitmix(l as u64 + 31 * op_sel as u64));
            set(&mut h, s, scale_input);
            let words = enc(name, F { d, s: [v(a), v(s), 0], op_sel, ..F::default() });
            let regs = h.wave.vgpr.clone();
            let pair = |l: usize| {
                let (shift, width) = if f.bits() == 4 { (8 * (op_sel & 3), 4) } else { (16 * (op_sel & 1), 8) };
                let x = regs[a][l] >> shift;
                let m = (1 << width) - 1;
                let sc = scale(regs[s][l]);
                (up(f, x & m, sc, to), up(f, x >> width & m, sc, to))
            };
            if to == Wide::F32 {
                check(&mut h, words, d, 2, |k, l| if k == 0 { pair(l).0 } else { pair(l).1 }, same_value(to));
            } else {
                let cmp =
                    move |g: u32, w: u32| same_value(to)(g & 0xffff, w & 0xffff) && same_value(to)(g >> 16, w >> 16);
                check(&mut h, words, d, 1, |_, l| pair(l).0 | pair(l).1 << 16, cmp);
            }
        }
    }
}

#[test]
fn pk32_fp6_bf6_to_wide() {
    for (name, f, to) in [
        ("v_cvt_scalef32_pk32_f32_fp6", FP6, Wide::F32),
        ("v_cvt_scalef32_pk32_f32_bf6", BF6, Wide::F32),
        ("v_cvt_scalef32_pk32_f16_fp6", FP6, Wide::F16),
        ("v_cvt_scalef32_pk32_f16_bf6", BF6, Wide::F16),
        ("v_cvt_scalef32_pk32_bf16_fp6", FP6, Wide::Bf16),
        ("v_cvt_scalef32_pk32_bf16_bf6", BF6, Wide::Bf16),
    ] {
        let mut h = harness();
        // Source v40..v45, scale v46, destination v0..v31 (or v0..v15).
        let (a, s, d) = (40, 46, 0);
        for k in 0..6 {
            set(&mut h, a + k, |l| splitmix(5000 + 64 * k as u64 + l as u64));
        }
        set(&mut h, s, scale_input);
        let words = enc(name, F { d, s: [v(a), v(s), 0], ..F::default() });
        let regs = h.wave.vgpr.clone();
        let code = |l: usize, j: usize| {
            let mut bits = 0u128;
            let mut hi = 0u64;
            for k in 0..4 {
                bits |= (regs[a + k][l] as u128) << (32 * k);
            }
            hi |= regs[a + 4][l] as u64 | (regs[a + 5][l] as u64) << 32;
            let p = 6 * j;
            let all = |q: usize| if q < 128 { (bits >> q) as u32 & 1 } else { (hi >> (q - 128)) as u32 & 1 };
            (0..6).fold(0, |c, b| c | all(p + b) << b)
        };
        let sc = |l: usize| scale(regs[s][l]);
        if to == Wide::F32 {
            check(&mut h, words, d, 32, |k, l| up(f, code(l, k), sc(l), to), same_value(to));
        } else {
            let want =
                |k: usize, l: usize| up(f, code(l, 2 * k), sc(l), to) | up(f, code(l, 2 * k + 1), sc(l), to) << 16;
            let cmp = move |g: u32, w: u32| same_value(to)(g & 0xffff, w & 0xffff) && same_value(to)(g >> 16, w >> 16);
            check(&mut h, words, d, 16, want, cmp);
        }
    }
}

#[test]
fn scale_extremes_on_exact_values() {
    // fp8 1.0 (0x38) times 2^127 is f32 2^127; times 2^-127 an f32 normal 2^-127 (denormal:
    // exponent field 0, mantissa 0x400000); bf16 keeps it too; f16 flushes it to zero by
    // range. The f32 mantissa and sign of the scale operand do not matter.
    let mut h = harness();
    set(&mut h, 1, |_| 0x38);
    set(&mut h, 2, |l| [0x7f00_0000, 0x0000_0000, 0x8000_0000 | 0x3fff_ffff, 0xff80_0000][l % 4]);
    let words = enc("v_cvt_scalef32_f32_fp8", F { d: 10, s: [v(1), v(2), 0], ..F::default() });
    let want = |_: usize, l: usize| [0x7f00_0000, 0x0040_0000, 0x3f80_0000, 0x7fc0_0000][l % 4];
    check(&mut h, words, 10, 1, want, same_value(Wide::F32));
    // Downcast with scale 2^127: 2^127 * 448 overflows f32 as an input, but 2^127 itself is
    // fp8 1.0; with scale 2^-127, 2^-133 (an f32 denormal) is 2^-6, fp8's smallest normal.
    let mut h = harness();
    set(&mut h, 1, |l| [2f32.powi(127), 2f32.powi(-133), 2f32.powi(-133), 1.0][l % 4].to_bits());
    set(&mut h, 2, |l| [0x7f00_0000u32, 0, 0, 0x7f80_0000][l % 4]);
    let words = enc("v_cvt_scalef32_pk_fp8_f32", F { d: 10, s: [v(1), v(1), v(2)], ..F::default() });
    let want = |_: usize, l: usize| {
        let c = [0x38, 0x08, 0x08, 0x7f][l % 4];
        merge(old(0, l), c | c << 8, 0, 16)
    };
    check(&mut h, words, 10, 1, want, exact);
    // MODE flushing f32 input denormals: 2^-133 becomes 0.
    let mut h = harness();
    h.wave.mode = 0x2c0; // f32 denormals flushed
    set(&mut h, 1, |_| 2f32.powi(-133).to_bits());
    set(&mut h, 2, |_| 0);
    let words = enc("v_cvt_scalef32_pk_fp8_f32", F { d: 10, s: [v(1), v(1), v(2)], ..F::default() });
    check(&mut h, words, 10, 1, |_, l| merge(old(0, l), 0, 0, 16), exact);
}

// ----- the older fp8/bf8 conversions read OCP formats on gfx950 --------------------------

#[test]
fn legacy_fp8_conversions_use_ocp_formats() {
    // v_cvt_f32_fp8_e64 with op_sel[1:0] = 2 (byte 2), every code in some lane.
    for (name, f) in [("v_cvt_f32_fp8_e64", FP8), ("v_cvt_f32_bf8_e64", BF8)] {
        for part in 0..4u32 {
            let mut h = harness();
            set(&mut h, 1, |l| ((64 * part + l as u32) << 16) | 0xa5);
            let words = enc(name, F { d: 10, s: [v(1), 0, 0], op_sel: 2, ..F::default() });
            let want = |_: usize, l: usize| (f.value(64 * part + l as u32) as f32).to_bits();
            check(&mut h, words, 10, 1, want, same_value(Wide::F32));
        }
    }
    // v_cvt_pk_f32_bf8_e64 with op_sel[0]: the high word.
    let mut h = harness();
    set(&mut h, 1, |l| splitmix(l as u64));
    let regs = h.wave.vgpr.clone();
    let words = enc("v_cvt_pk_f32_bf8_e64", F { d: 10, s: [v(1), 0, 0], op_sel: 1, ..F::default() });
    let want = |k: usize, l: usize| (BF8.value(regs[1][l] >> (16 + 8 * k) & 0xff) as f32).to_bits();
    check(&mut h, words, 10, 2, want, same_value(Wide::F32));
    // v_cvt_pk_fp8_f32 (RNE) to the high word, with and without FP16_OVFL.
    for mode in [0x2f0, 0x2f0 | FP16_OVFL] {
        let mut h = harness();
        h.wave.mode = mode;
        set(&mut h, 1, |l| wide_input(Wide::F32, FP8, l as u64));
        set(&mut h, 2, |l| wide_input(Wide::F32, FP8, 64 + l as u64));
        let regs = h.wave.vgpr.clone();
        let words = enc("v_cvt_pk_fp8_f32", F { d: 10, s: [v(1), v(2), 0], op_sel: 8, ..F::default() });
        let sat = mode & FP16_OVFL != 0;
        let want = |_: usize, l: usize| {
            let c = |x: u32| FP8.encode(f32::from_bits(x) as f64, None, sat);
            merge(old(0, l), c(regs[1][l]) | c(regs[2][l]) << 8, 16, 16)
        };
        check(&mut h, words, 10, 1, want, exact);
    }
    // v_cvt_sr_bf8_f32 to byte 1: adds S1[31:11] below the kept 2 mantissa bits.
    let mut h = harness();
    set(&mut h, 1, |l| wide_input(Wide::F32, BF8, l as u64));
    set(&mut h, 2, |l| splitmix(77 + l as u64));
    let regs = h.wave.vgpr.clone();
    let words = enc("v_cvt_sr_bf8_f32", F { d: 10, s: [v(1), v(2), 0], op_sel: 4, ..F::default() });
    let want = |_: usize, l: usize| {
        let c = BF8.encode(f32::from_bits(regs[1][l]) as f64, Some(rfrac(regs[2][l], 21)), false);
        merge(old(0, l), c, 8, 8)
    };
    check(&mut h, words, 10, 1, want, exact);
    // v_cvt_sr_fp8_f32 to byte 3: S1[31:12].
    let words = enc("v_cvt_sr_fp8_f32", F { d: 10, s: [v(1), v(2), 0], op_sel: 12, ..F::default() });
    let want = |_: usize, l: usize| {
        let c = FP8.encode(f32::from_bits(regs[1][l]) as f64, Some(rfrac(regs[2][l], 20)), false);
        merge(old(0, l), c, 24, 8)
    };
    check(&mut h, words, 10, 1, want, exact);
}

#[test]
fn prng_steps_the_lfsr() {
    let mut h = harness();
    set(&mut h, 1, |l| if l == 0 { 0 } else { splitmix(l as u64) });
    let words = enc("v_prng_b32_e64", F { d: 10, s: [v(1), 0, 0], ..F::default() });
    let regs = h.wave.vgpr.clone();
    let want = |_: usize, l: usize| {
        let x = regs[1][l];
        (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
    };
    check(&mut h, words, 10, 1, want, exact);
}

/// Runs a VOP1 (one or two words) with v10.. holding `old` and EXEC holes.
fn check_vop1(h: &mut Harness, words: &[u32], n: usize, want: impl Fn(usize, usize) -> u32) {
    for k in 0..n {
        set(h, 10 + k, |l| old(k, l));
    }
    h.wave.exec = EXEC;
    h.run(words).unwrap();
    for k in 0..n {
        for l in 0..64 {
            let got = h.wave.vgpr[10 + k][l];
            let w = if EXEC >> l & 1 != 0 { want(k, l) } else { old(k, l) };
            assert!(got == w || (f32::from_bits(got).is_nan() && f32::from_bits(w).is_nan()), "lane {l}");
        }
    }
}

#[test]
fn vop1_and_sdwa_forms() {
    // Words disassembled by LLVM 22 (gfx950): v_prng_b32_e32 v10, v1;
    // v_cvt_pk_f32_fp8_sdwa v[10:11], v1 src0_sel:WORD_1;
    // v_cvt_f32_fp8_sdwa v10, v1 src0_sel:BYTE_3.
    let mut h = harness();
    set(&mut h, 1, |l| splitmix(3 * l as u64));
    let regs = h.wave.vgpr.clone();
    assert_eq!(decode(&[0x7e14b101], Target::Gfx950).unwrap().to_string(), "v_prng_b32_e32 v10, v1");
    check_vop1(&mut h, &[0x7e14b101], 1, |_, l| {
        let x = regs[1][l];
        (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
    });
    check_vop1(&mut h, &[0x7e14acf9, 0x00050601], 2, |k, l| {
        (FP8.value(regs[1][l] >> (16 + 8 * k) & 0xff) as f32).to_bits()
    });
    check_vop1(&mut h, &[0x7e14a8f9, 0x00030601], 1, |_, l| (FP8.value(regs[1][l] >> 24) as f32).to_bits());
}
