//! VOPC compares (`v_cmp_*`, `v_cmpx_*`, `v_cmp_class_*`) against a
//! reference written from the MI200 ISA: every compare op in its e32 (VCC)
//! and e64 (SGPR pair) form over all pairs of edge values (NaN, ±0, ±inf,
//! denormals, integer limits), with input denormals allowed and flushed
//! (MODE), EXEC full and with holes; SDWA selects and VOP3/SDWA abs/neg.
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.

use std::cmp::Ordering;

use sim::gpu::exec::LANES;
use sim::isa::Target;
use sim::testing::Harness;

const EXECS: [u64; 3] = [u64::MAX, 0x5a5a_0ff0_8001_7ffe, 0];
/// MODE with input denormals allowed for every type, and all flushed.
const MODES: [u32; 2] = [0xf0, 0];

const F16: [u64; 16] = [
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x8200, 0x7bff, 0x0400, 0x4000, 0x3800,
    0xfe00, 0x3c01,
];
const F32: [u64; 16] = [
    0,
    0x8000_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x0000_0001,
    0x8040_0000,
    0x7f7f_ffff,
    0x0080_0000,
    0x4000_0000,
    0x3f00_0000,
    0xffc0_0000,
    0x3f80_0001,
];
const F64: [u64; 16] = [
    0,
    1 << 63,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    1,
    0x8008_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x4000_0000_0000_0000,
    0x3fe0_0000_0000_0000,
    0xfff8_0000_0000_0000,
    0x3ff0_0000_0000_0001,
];
const I16: [u64; 16] =
    [0, 1, 2, 0x7fff, 0x8000, 0x8001, 0xffff, 0xfffe, 0x1234, 0xedcb, 0x00ff, 0xff00, 3, 0x4000, 0xc000, 0x7ffe];
const I32: [u64; 16] = [
    0,
    1,
    2,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_ffff,
    0xffff_fffe,
    0x1234_5678,
    0xedcb_a988,
    0xffff,
    0x1_0000,
    0x7fff,
    0x8000,
    3,
    0x7fff_fffe,
];
const I64: [u64; 16] = [
    0,
    1,
    2,
    i64::MAX as u64,
    1 << 63,
    (1 << 63) + 1,
    u64::MAX,
    u64::MAX - 1,
    0xffff_ffff,
    1 << 32,
    0x8000_0000,
    0xffff_ffff_8000_0000,
    0x1234_5678_9abc_def0,
    0xedcb_a987_6543_2110,
    3,
    i64::MAX as u64 - 1,
];
/// `v_cmp_class` masks: each class alone, all, none, mixtures.
const MASKS: [u64; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0x3ff, 0, 0x155, 0x2aa, 0x3, 0x300];

fn values(ty: &str) -> &'static [u64; 16] {
    match ty {
        "f16" => &F16,
        "f32" => &F32,
        "f64" => &F64,
        "i16" | "u16" => &I16,
        "i32" | "u32" => &I32,
        _ => &I64,
    }
}

/// An f16 as f64, from its fields.
fn f16_value(h: u64) -> f64 {
    let sign = if h >> 15 & 1 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10 & 31) as i32;
    let m = (h & 1023) as f64;
    match e {
        0 => sign * m / 1024.0 * 2f64.powi(-14),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A float operand of type `ty` as f64, denormals flushed to ±0 if `flush`.
fn float(ty: &str, v: u64, flush: bool) -> f64 {
    let (bits, mant) = match ty {
        "f16" => (16, 10),
        "f32" => (32, 23),
        _ => (64, 52),
    };
    let v = if bits < 64 { v & ((1 << bits) - 1) } else { v };
    let exp_mask = ((1u64 << (bits - 1 - mant)) - 1) << mant;
    let v = if flush && v & exp_mask == 0 { v & 1 << (bits - 1) } else { v };
    match ty {
        "f16" => f16_value(v),
        "f32" => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// An integer operand as i128.
fn int(ty: &str, v: u64) -> i128 {
    match ty {
        "i16" => v as u16 as i16 as i128,
        "u16" => v as u16 as i128,
        "i32" => v as u32 as i32 as i128,
        "u32" => v as u32 as i128,
        "i64" => v as i64 as i128,
        _ => v as i128,
    }
}

fn holds(cond: &str, ord: Option<Ordering>) -> bool {
    use Ordering::*;
    match cond {
        "f" => false,
        "lt" => ord == Some(Less),
        "eq" => ord == Some(Equal),
        "le" => matches!(ord, Some(Less | Equal)),
        "gt" => ord == Some(Greater),
        "lg" | "ne" => matches!(ord, Some(Less | Greater)),
        "ge" => matches!(ord, Some(Greater | Equal)),
        "o" => ord.is_some(),
        "u" => ord.is_none(),
        "nge" => !holds("ge", ord),
        "nlg" => !holds("lg", ord),
        "ngt" => !holds("gt", ord),
        "nle" => !holds("le", ord),
        "neq" => !holds("eq", ord),
        "nlt" => !holds("lt", ord),
        "tru" | "t" => true,
        _ => panic!("condition {cond}"),
    }
}

/// The ISA's class number of a float: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
/// 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
fn class(ty: &str, v: u64) -> u32 {
    let (bits, mant) = match ty {
        "f16" => (16u32, 10u32),
        "f32" => (32, 23),
        _ => (64, 52),
    };
    let neg = v >> (bits - 1) & 1 != 0;
    let e = v >> mant & ((1 << (bits - 1 - mant)) - 1);
    let emax = (1 << (bits - 1 - mant)) - 1;
    let m = v & ((1 << mant) - 1);
    let pos_class = if e == emax && m != 0 {
        return if m >> (mant - 1) & 1 != 0 { 1 } else { 0 };
    } else if e == emax {
        9
    } else if e == 0 && m == 0 {
        6
    } else if e == 0 {
        7
    } else {
        8
    };
    if neg {
        11 - pos_class
    } else {
        pos_class
    }
}

/// `name` = v_cmp[x]_<cond>_<type>: the reference result for operands
/// `a`, `b` (register bit patterns) under MODE `mode`.
fn reference(name: &str, a: u64, b: u64, mode: u32) -> bool {
    let rest = name.strip_prefix("v_cmpx_").or_else(|| name.strip_prefix("v_cmp_")).unwrap();
    let (cond, ty) = rest.rsplit_once('_').unwrap();
    if cond == "class" {
        let t = if ty == "f16" { a & 0xffff } else { a };
        return b >> class(ty, t) & 1 != 0;
    }
    if ty.starts_with('f') {
        let flush = if ty == "f32" { mode & 0x10 == 0 } else { mode & 0x40 == 0 };
        let (x, y) = (float(ty, a, flush), float(ty, b, flush));
        holds(cond, x.partial_cmp(&y))
    } else {
        holds(cond, Some(int(ty, a).cmp(&int(ty, b))))
    }
}

/// Writes 64-bit `v` to register pair `r` of every lane by `f`.
fn set_pair(h: &mut Harness, r: usize, f: impl Fn(usize) -> u64) {
    h.wave.vgpr[r] = std::array::from_fn(|l| f(l) as u32);
    h.wave.vgpr[r + 1] = std::array::from_fn(|l| (f(l) >> 32) as u32);
}

/// The register values of lane `l` in run `r`: operand a (v0 or v[6:7]) and b
/// (v1 or v[8:9]). 16-bit values get another edge value in the high half.
fn lane_operands(name: &str, r: usize, l: usize) -> (u64, u64) {
    let ty = name.rsplit_once('_').unwrap().1;
    let vals = values(ty);
    let p = r * 64 + l;
    let hi = |i: usize| if ty.ends_with("16") { vals[(i * 7 + 3) % 16] << 16 } else { 0 };
    let a = vals[p % 16] | hi(p);
    let b = if name.contains("class") { MASKS[p / 16] } else { vals[p / 16] | hi(p + 5) };
    (a, b)
}

fn load(h: &mut Harness, name: &str, r: usize) {
    set_pair(h, 6, |l| lane_operands(name, r, l).0);
    set_pair(h, 8, |l| lane_operands(name, r, l).1);
    h.wave.vgpr[0] = std::array::from_fn(|l| lane_operands(name, r, l).0 as u32);
    h.wave.vgpr[1] = std::array::from_fn(|l| lane_operands(name, r, l).1 as u32);
}

fn result(h: &Harness, vcc: bool) -> u64 {
    if vcc {
        h.wave.vcc
    } else {
        h.wave.sgpr[4] as u64 | (h.wave.sgpr[5] as u64) << 32
    }
}

/// Runs `words` for every pair run, MODE and EXEC; `fa`/`fb` turn register
/// values into the operands the op compares (selects, modifiers).
/// Runs on gfx90a and gfx942 (the encodings are the same; llvm-mc-19
/// -mcpu=gfx942 agrees).
fn check(name: &str, words: &[u32], vcc: bool, fa: impl Fn(u64) -> u64, fb: impl Fn(u64) -> u64) {
    for target in [Target::Gfx90a, Target::Gfx942] {
        check_on(target, name, words, vcc, &fa, &fb);
    }
}

fn check_on(target: Target, name: &str, words: &[u32], vcc: bool, fa: &dyn Fn(u64) -> u64, fb: &dyn Fn(u64) -> u64) {
    let mut h = Harness::for_target(target);
    h.wave.sgpr[20] = 1;
    h.wave.sgpr[21] = 0x8000_0000;
    for mode in MODES {
        for exec in EXECS {
            for r in 0..4 {
                load(&mut h, name, r);
                h.wave.mode = mode;
                h.wave.exec = exec;
                h.wave.vcc = 0x1111_2222_3333_4444;
                h.wave.sgpr[4] = 0x5555_5555;
                h.wave.sgpr[5] = 0x6666_6666;
                h.run(words).unwrap_or_else(|e| panic!("{name} {words:x?}: {e}"));
                let mut want = 0u64;
                for l in 0..LANES {
                    let (a, b) = lane_operands(name, r, l);
                    want |= (reference(name, fa(a), fb(b), mode) as u64) << l;
                }
                want &= exec;
                let got = result(&h, vcc);
                if got != want {
                    let l = (got ^ want).trailing_zeros() as usize;
                    let (a, b) = lane_operands(name, r, l);
                    panic!(
                        "{target:?} {name} {words:x?} mode {mode:#x} exec {exec:#x}: got {got:#x} want {want:#x}; \
                         first wrong lane {l}: a={a:#x} b={b:#x}"
                    );
                }
                if name.starts_with("v_cmpx") {
                    assert_eq!(h.wave.exec, want, "{name} {words:x?} writes EXEC");
                } else {
                    assert_eq!(h.wave.exec, exec, "{name} {words:x?} keeps EXEC");
                }
            }
        }
    }
}

/// A compare's name and its e32, e64 and SDWA encodings (no SDWA for the
/// 64-bit types).
type CmpForms = (&'static str, &'static [u32], &'static [u32], &'static [u32]);

/// Every compare op in its e32, e64 and (32/16-bit types) SDWA forms,
/// plain operands.
#[test]
fn every_compare_matches_the_reference() {
    let table: &[CmpForms] = &[
        ("v_cmp_class_f16", &[0x7c280300], &[0xd0140004, 0x00020300], &[0x7c2802f9, 0x06068400]),
        ("v_cmp_class_f32", &[0x7c200300], &[0xd0100004, 0x00020300], &[0x7c2002f9, 0x06068400]),
        ("v_cmp_class_f64", &[0x7c240306], &[0xd0120004, 0x00020306], &[]),
        ("v_cmp_eq_f16", &[0x7c440300], &[0xd0220004, 0x00020300], &[0x7c4402f9, 0x06068400]),
        ("v_cmp_eq_f32", &[0x7c840300], &[0xd0420004, 0x00020300], &[0x7c8402f9, 0x06068400]),
        ("v_cmp_eq_f64", &[0x7cc41106], &[0xd0620004, 0x00021106], &[]),
        ("v_cmp_eq_i16", &[0x7d440300], &[0xd0a20004, 0x00020300], &[0x7d4402f9, 0x06068400]),
        ("v_cmp_eq_i32", &[0x7d840300], &[0xd0c20004, 0x00020300], &[0x7d8402f9, 0x06068400]),
        ("v_cmp_eq_i64", &[0x7dc41106], &[0xd0e20004, 0x00021106], &[]),
        ("v_cmp_eq_u16", &[0x7d540300], &[0xd0aa0004, 0x00020300], &[0x7d5402f9, 0x06068400]),
        ("v_cmp_eq_u32", &[0x7d940300], &[0xd0ca0004, 0x00020300], &[0x7d9402f9, 0x06068400]),
        ("v_cmp_eq_u64", &[0x7dd41106], &[0xd0ea0004, 0x00021106], &[]),
        ("v_cmp_f_f16", &[0x7c400300], &[0xd0200004, 0x00020300], &[0x7c4002f9, 0x06068400]),
        ("v_cmp_f_f32", &[0x7c800300], &[0xd0400004, 0x00020300], &[0x7c8002f9, 0x06068400]),
        ("v_cmp_f_f64", &[0x7cc01106], &[0xd0600004, 0x00021106], &[]),
        ("v_cmp_f_i16", &[0x7d400300], &[0xd0a00004, 0x00020300], &[0x7d4002f9, 0x06068400]),
        ("v_cmp_f_i32", &[0x7d800300], &[0xd0c00004, 0x00020300], &[0x7d8002f9, 0x06068400]),
        ("v_cmp_f_i64", &[0x7dc01106], &[0xd0e00004, 0x00021106], &[]),
        ("v_cmp_f_u16", &[0x7d500300], &[0xd0a80004, 0x00020300], &[0x7d5002f9, 0x06068400]),
        ("v_cmp_f_u32", &[0x7d900300], &[0xd0c80004, 0x00020300], &[0x7d9002f9, 0x06068400]),
        ("v_cmp_f_u64", &[0x7dd01106], &[0xd0e80004, 0x00021106], &[]),
        ("v_cmp_ge_f16", &[0x7c4c0300], &[0xd0260004, 0x00020300], &[0x7c4c02f9, 0x06068400]),
        ("v_cmp_ge_f32", &[0x7c8c0300], &[0xd0460004, 0x00020300], &[0x7c8c02f9, 0x06068400]),
        ("v_cmp_ge_f64", &[0x7ccc1106], &[0xd0660004, 0x00021106], &[]),
        ("v_cmp_ge_i16", &[0x7d4c0300], &[0xd0a60004, 0x00020300], &[0x7d4c02f9, 0x06068400]),
        ("v_cmp_ge_i32", &[0x7d8c0300], &[0xd0c60004, 0x00020300], &[0x7d8c02f9, 0x06068400]),
        ("v_cmp_ge_i64", &[0x7dcc1106], &[0xd0e60004, 0x00021106], &[]),
        ("v_cmp_ge_u16", &[0x7d5c0300], &[0xd0ae0004, 0x00020300], &[0x7d5c02f9, 0x06068400]),
        ("v_cmp_ge_u32", &[0x7d9c0300], &[0xd0ce0004, 0x00020300], &[0x7d9c02f9, 0x06068400]),
        ("v_cmp_ge_u64", &[0x7ddc1106], &[0xd0ee0004, 0x00021106], &[]),
        ("v_cmp_gt_f16", &[0x7c480300], &[0xd0240004, 0x00020300], &[0x7c4802f9, 0x06068400]),
        ("v_cmp_gt_f32", &[0x7c880300], &[0xd0440004, 0x00020300], &[0x7c8802f9, 0x06068400]),
        ("v_cmp_gt_f64", &[0x7cc81106], &[0xd0640004, 0x00021106], &[]),
        ("v_cmp_gt_i16", &[0x7d480300], &[0xd0a40004, 0x00020300], &[0x7d4802f9, 0x06068400]),
        ("v_cmp_gt_i32", &[0x7d880300], &[0xd0c40004, 0x00020300], &[0x7d8802f9, 0x06068400]),
        ("v_cmp_gt_i64", &[0x7dc81106], &[0xd0e40004, 0x00021106], &[]),
        ("v_cmp_gt_u16", &[0x7d580300], &[0xd0ac0004, 0x00020300], &[0x7d5802f9, 0x06068400]),
        ("v_cmp_gt_u32", &[0x7d980300], &[0xd0cc0004, 0x00020300], &[0x7d9802f9, 0x06068400]),
        ("v_cmp_gt_u64", &[0x7dd81106], &[0xd0ec0004, 0x00021106], &[]),
        ("v_cmp_le_f16", &[0x7c460300], &[0xd0230004, 0x00020300], &[0x7c4602f9, 0x06068400]),
        ("v_cmp_le_f32", &[0x7c860300], &[0xd0430004, 0x00020300], &[0x7c8602f9, 0x06068400]),
        ("v_cmp_le_f64", &[0x7cc61106], &[0xd0630004, 0x00021106], &[]),
        ("v_cmp_le_i16", &[0x7d460300], &[0xd0a30004, 0x00020300], &[0x7d4602f9, 0x06068400]),
        ("v_cmp_le_i32", &[0x7d860300], &[0xd0c30004, 0x00020300], &[0x7d8602f9, 0x06068400]),
        ("v_cmp_le_i64", &[0x7dc61106], &[0xd0e30004, 0x00021106], &[]),
        ("v_cmp_le_u16", &[0x7d560300], &[0xd0ab0004, 0x00020300], &[0x7d5602f9, 0x06068400]),
        ("v_cmp_le_u32", &[0x7d960300], &[0xd0cb0004, 0x00020300], &[0x7d9602f9, 0x06068400]),
        ("v_cmp_le_u64", &[0x7dd61106], &[0xd0eb0004, 0x00021106], &[]),
        ("v_cmp_lg_f16", &[0x7c4a0300], &[0xd0250004, 0x00020300], &[0x7c4a02f9, 0x06068400]),
        ("v_cmp_lg_f32", &[0x7c8a0300], &[0xd0450004, 0x00020300], &[0x7c8a02f9, 0x06068400]),
        ("v_cmp_lg_f64", &[0x7cca1106], &[0xd0650004, 0x00021106], &[]),
        ("v_cmp_lt_f16", &[0x7c420300], &[0xd0210004, 0x00020300], &[0x7c4202f9, 0x06068400]),
        ("v_cmp_lt_f32", &[0x7c820300], &[0xd0410004, 0x00020300], &[0x7c8202f9, 0x06068400]),
        ("v_cmp_lt_f64", &[0x7cc21106], &[0xd0610004, 0x00021106], &[]),
        ("v_cmp_lt_i16", &[0x7d420300], &[0xd0a10004, 0x00020300], &[0x7d4202f9, 0x06068400]),
        ("v_cmp_lt_i32", &[0x7d820300], &[0xd0c10004, 0x00020300], &[0x7d8202f9, 0x06068400]),
        ("v_cmp_lt_i64", &[0x7dc21106], &[0xd0e10004, 0x00021106], &[]),
        ("v_cmp_lt_u16", &[0x7d520300], &[0xd0a90004, 0x00020300], &[0x7d5202f9, 0x06068400]),
        ("v_cmp_lt_u32", &[0x7d920300], &[0xd0c90004, 0x00020300], &[0x7d9202f9, 0x06068400]),
        ("v_cmp_lt_u64", &[0x7dd21106], &[0xd0e90004, 0x00021106], &[]),
        ("v_cmp_ne_i16", &[0x7d4a0300], &[0xd0a50004, 0x00020300], &[0x7d4a02f9, 0x06068400]),
        ("v_cmp_ne_i32", &[0x7d8a0300], &[0xd0c50004, 0x00020300], &[0x7d8a02f9, 0x06068400]),
        ("v_cmp_ne_i64", &[0x7dca1106], &[0xd0e50004, 0x00021106], &[]),
        ("v_cmp_ne_u16", &[0x7d5a0300], &[0xd0ad0004, 0x00020300], &[0x7d5a02f9, 0x06068400]),
        ("v_cmp_ne_u32", &[0x7d9a0300], &[0xd0cd0004, 0x00020300], &[0x7d9a02f9, 0x06068400]),
        ("v_cmp_ne_u64", &[0x7dda1106], &[0xd0ed0004, 0x00021106], &[]),
        ("v_cmp_neq_f16", &[0x7c5a0300], &[0xd02d0004, 0x00020300], &[0x7c5a02f9, 0x06068400]),
        ("v_cmp_neq_f32", &[0x7c9a0300], &[0xd04d0004, 0x00020300], &[0x7c9a02f9, 0x06068400]),
        ("v_cmp_neq_f64", &[0x7cda1106], &[0xd06d0004, 0x00021106], &[]),
        ("v_cmp_nge_f16", &[0x7c520300], &[0xd0290004, 0x00020300], &[0x7c5202f9, 0x06068400]),
        ("v_cmp_nge_f32", &[0x7c920300], &[0xd0490004, 0x00020300], &[0x7c9202f9, 0x06068400]),
        ("v_cmp_nge_f64", &[0x7cd21106], &[0xd0690004, 0x00021106], &[]),
        ("v_cmp_ngt_f16", &[0x7c560300], &[0xd02b0004, 0x00020300], &[0x7c5602f9, 0x06068400]),
        ("v_cmp_ngt_f32", &[0x7c960300], &[0xd04b0004, 0x00020300], &[0x7c9602f9, 0x06068400]),
        ("v_cmp_ngt_f64", &[0x7cd61106], &[0xd06b0004, 0x00021106], &[]),
        ("v_cmp_nle_f16", &[0x7c580300], &[0xd02c0004, 0x00020300], &[0x7c5802f9, 0x06068400]),
        ("v_cmp_nle_f32", &[0x7c980300], &[0xd04c0004, 0x00020300], &[0x7c9802f9, 0x06068400]),
        ("v_cmp_nle_f64", &[0x7cd81106], &[0xd06c0004, 0x00021106], &[]),
        ("v_cmp_nlg_f16", &[0x7c540300], &[0xd02a0004, 0x00020300], &[0x7c5402f9, 0x06068400]),
        ("v_cmp_nlg_f32", &[0x7c940300], &[0xd04a0004, 0x00020300], &[0x7c9402f9, 0x06068400]),
        ("v_cmp_nlg_f64", &[0x7cd41106], &[0xd06a0004, 0x00021106], &[]),
        ("v_cmp_nlt_f16", &[0x7c5c0300], &[0xd02e0004, 0x00020300], &[0x7c5c02f9, 0x06068400]),
        ("v_cmp_nlt_f32", &[0x7c9c0300], &[0xd04e0004, 0x00020300], &[0x7c9c02f9, 0x06068400]),
        ("v_cmp_nlt_f64", &[0x7cdc1106], &[0xd06e0004, 0x00021106], &[]),
        ("v_cmp_o_f16", &[0x7c4e0300], &[0xd0270004, 0x00020300], &[0x7c4e02f9, 0x06068400]),
        ("v_cmp_o_f32", &[0x7c8e0300], &[0xd0470004, 0x00020300], &[0x7c8e02f9, 0x06068400]),
        ("v_cmp_o_f64", &[0x7cce1106], &[0xd0670004, 0x00021106], &[]),
        ("v_cmp_t_i16", &[0x7d4e0300], &[0xd0a70004, 0x00020300], &[0x7d4e02f9, 0x06068400]),
        ("v_cmp_t_i32", &[0x7d8e0300], &[0xd0c70004, 0x00020300], &[0x7d8e02f9, 0x06068400]),
        ("v_cmp_t_i64", &[0x7dce1106], &[0xd0e70004, 0x00021106], &[]),
        ("v_cmp_t_u16", &[0x7d5e0300], &[0xd0af0004, 0x00020300], &[0x7d5e02f9, 0x06068400]),
        ("v_cmp_t_u32", &[0x7d9e0300], &[0xd0cf0004, 0x00020300], &[0x7d9e02f9, 0x06068400]),
        ("v_cmp_t_u64", &[0x7dde1106], &[0xd0ef0004, 0x00021106], &[]),
        ("v_cmp_tru_f16", &[0x7c5e0300], &[0xd02f0004, 0x00020300], &[0x7c5e02f9, 0x06068400]),
        ("v_cmp_tru_f32", &[0x7c9e0300], &[0xd04f0004, 0x00020300], &[0x7c9e02f9, 0x06068400]),
        ("v_cmp_tru_f64", &[0x7cde1106], &[0xd06f0004, 0x00021106], &[]),
        ("v_cmp_u_f16", &[0x7c500300], &[0xd0280004, 0x00020300], &[0x7c5002f9, 0x06068400]),
        ("v_cmp_u_f32", &[0x7c900300], &[0xd0480004, 0x00020300], &[0x7c9002f9, 0x06068400]),
        ("v_cmp_u_f64", &[0x7cd01106], &[0xd0680004, 0x00021106], &[]),
        ("v_cmpx_class_f16", &[0x7c2a0300], &[0xd0150004, 0x00020300], &[0x7c2a02f9, 0x06068400]),
        ("v_cmpx_class_f32", &[0x7c220300], &[0xd0110004, 0x00020300], &[0x7c2202f9, 0x06068400]),
        ("v_cmpx_class_f64", &[0x7c260306], &[0xd0130004, 0x00020306], &[]),
        ("v_cmpx_eq_f16", &[0x7c640300], &[0xd0320004, 0x00020300], &[0x7c6402f9, 0x06068400]),
        ("v_cmpx_eq_f32", &[0x7ca40300], &[0xd0520004, 0x00020300], &[0x7ca402f9, 0x06068400]),
        ("v_cmpx_eq_f64", &[0x7ce41106], &[0xd0720004, 0x00021106], &[]),
        ("v_cmpx_eq_i16", &[0x7d640300], &[0xd0b20004, 0x00020300], &[0x7d6402f9, 0x06068400]),
        ("v_cmpx_eq_i32", &[0x7da40300], &[0xd0d20004, 0x00020300], &[0x7da402f9, 0x06068400]),
        ("v_cmpx_eq_i64", &[0x7de41106], &[0xd0f20004, 0x00021106], &[]),
        ("v_cmpx_eq_u16", &[0x7d740300], &[0xd0ba0004, 0x00020300], &[0x7d7402f9, 0x06068400]),
        ("v_cmpx_eq_u32", &[0x7db40300], &[0xd0da0004, 0x00020300], &[0x7db402f9, 0x06068400]),
        ("v_cmpx_eq_u64", &[0x7df41106], &[0xd0fa0004, 0x00021106], &[]),
        ("v_cmpx_f_f16", &[0x7c600300], &[0xd0300004, 0x00020300], &[0x7c6002f9, 0x06068400]),
        ("v_cmpx_f_f32", &[0x7ca00300], &[0xd0500004, 0x00020300], &[0x7ca002f9, 0x06068400]),
        ("v_cmpx_f_f64", &[0x7ce01106], &[0xd0700004, 0x00021106], &[]),
        ("v_cmpx_f_i16", &[0x7d600300], &[0xd0b00004, 0x00020300], &[0x7d6002f9, 0x06068400]),
        ("v_cmpx_f_i32", &[0x7da00300], &[0xd0d00004, 0x00020300], &[0x7da002f9, 0x06068400]),
        ("v_cmpx_f_i64", &[0x7de01106], &[0xd0f00004, 0x00021106], &[]),
        ("v_cmpx_f_u16", &[0x7d700300], &[0xd0b80004, 0x00020300], &[0x7d7002f9, 0x06068400]),
        ("v_cmpx_f_u32", &[0x7db00300], &[0xd0d80004, 0x00020300], &[0x7db002f9, 0x06068400]),
        ("v_cmpx_f_u64", &[0x7df01106], &[0xd0f80004, 0x00021106], &[]),
        ("v_cmpx_ge_f16", &[0x7c6c0300], &[0xd0360004, 0x00020300], &[0x7c6c02f9, 0x06068400]),
        ("v_cmpx_ge_f32", &[0x7cac0300], &[0xd0560004, 0x00020300], &[0x7cac02f9, 0x06068400]),
        ("v_cmpx_ge_f64", &[0x7cec1106], &[0xd0760004, 0x00021106], &[]),
        ("v_cmpx_ge_i16", &[0x7d6c0300], &[0xd0b60004, 0x00020300], &[0x7d6c02f9, 0x06068400]),
        ("v_cmpx_ge_i32", &[0x7dac0300], &[0xd0d60004, 0x00020300], &[0x7dac02f9, 0x06068400]),
        ("v_cmpx_ge_i64", &[0x7dec1106], &[0xd0f60004, 0x00021106], &[]),
        ("v_cmpx_ge_u16", &[0x7d7c0300], &[0xd0be0004, 0x00020300], &[0x7d7c02f9, 0x06068400]),
        ("v_cmpx_ge_u32", &[0x7dbc0300], &[0xd0de0004, 0x00020300], &[0x7dbc02f9, 0x06068400]),
        ("v_cmpx_ge_u64", &[0x7dfc1106], &[0xd0fe0004, 0x00021106], &[]),
        ("v_cmpx_gt_f16", &[0x7c680300], &[0xd0340004, 0x00020300], &[0x7c6802f9, 0x06068400]),
        ("v_cmpx_gt_f32", &[0x7ca80300], &[0xd0540004, 0x00020300], &[0x7ca802f9, 0x06068400]),
        ("v_cmpx_gt_f64", &[0x7ce81106], &[0xd0740004, 0x00021106], &[]),
        ("v_cmpx_gt_i16", &[0x7d680300], &[0xd0b40004, 0x00020300], &[0x7d6802f9, 0x06068400]),
        ("v_cmpx_gt_i32", &[0x7da80300], &[0xd0d40004, 0x00020300], &[0x7da802f9, 0x06068400]),
        ("v_cmpx_gt_i64", &[0x7de81106], &[0xd0f40004, 0x00021106], &[]),
        ("v_cmpx_gt_u16", &[0x7d780300], &[0xd0bc0004, 0x00020300], &[0x7d7802f9, 0x06068400]),
        ("v_cmpx_gt_u32", &[0x7db80300], &[0xd0dc0004, 0x00020300], &[0x7db802f9, 0x06068400]),
        ("v_cmpx_gt_u64", &[0x7df81106], &[0xd0fc0004, 0x00021106], &[]),
        ("v_cmpx_le_f16", &[0x7c660300], &[0xd0330004, 0x00020300], &[0x7c6602f9, 0x06068400]),
        ("v_cmpx_le_f32", &[0x7ca60300], &[0xd0530004, 0x00020300], &[0x7ca602f9, 0x06068400]),
        ("v_cmpx_le_f64", &[0x7ce61106], &[0xd0730004, 0x00021106], &[]),
        ("v_cmpx_le_i16", &[0x7d660300], &[0xd0b30004, 0x00020300], &[0x7d6602f9, 0x06068400]),
        ("v_cmpx_le_i32", &[0x7da60300], &[0xd0d30004, 0x00020300], &[0x7da602f9, 0x06068400]),
        ("v_cmpx_le_i64", &[0x7de61106], &[0xd0f30004, 0x00021106], &[]),
        ("v_cmpx_le_u16", &[0x7d760300], &[0xd0bb0004, 0x00020300], &[0x7d7602f9, 0x06068400]),
        ("v_cmpx_le_u32", &[0x7db60300], &[0xd0db0004, 0x00020300], &[0x7db602f9, 0x06068400]),
        ("v_cmpx_le_u64", &[0x7df61106], &[0xd0fb0004, 0x00021106], &[]),
        ("v_cmpx_lg_f16", &[0x7c6a0300], &[0xd0350004, 0x00020300], &[0x7c6a02f9, 0x06068400]),
        ("v_cmpx_lg_f32", &[0x7caa0300], &[0xd0550004, 0x00020300], &[0x7caa02f9, 0x06068400]),
        ("v_cmpx_lg_f64", &[0x7cea1106], &[0xd0750004, 0x00021106], &[]),
        ("v_cmpx_lt_f16", &[0x7c620300], &[0xd0310004, 0x00020300], &[0x7c6202f9, 0x06068400]),
        ("v_cmpx_lt_f32", &[0x7ca20300], &[0xd0510004, 0x00020300], &[0x7ca202f9, 0x06068400]),
        ("v_cmpx_lt_f64", &[0x7ce21106], &[0xd0710004, 0x00021106], &[]),
        ("v_cmpx_lt_i16", &[0x7d620300], &[0xd0b10004, 0x00020300], &[0x7d6202f9, 0x06068400]),
        ("v_cmpx_lt_i32", &[0x7da20300], &[0xd0d10004, 0x00020300], &[0x7da202f9, 0x06068400]),
        ("v_cmpx_lt_i64", &[0x7de21106], &[0xd0f10004, 0x00021106], &[]),
        ("v_cmpx_lt_u16", &[0x7d720300], &[0xd0b90004, 0x00020300], &[0x7d7202f9, 0x06068400]),
        ("v_cmpx_lt_u32", &[0x7db20300], &[0xd0d90004, 0x00020300], &[0x7db202f9, 0x06068400]),
        ("v_cmpx_lt_u64", &[0x7df21106], &[0xd0f90004, 0x00021106], &[]),
        ("v_cmpx_ne_i16", &[0x7d6a0300], &[0xd0b50004, 0x00020300], &[0x7d6a02f9, 0x06068400]),
        ("v_cmpx_ne_i32", &[0x7daa0300], &[0xd0d50004, 0x00020300], &[0x7daa02f9, 0x06068400]),
        ("v_cmpx_ne_i64", &[0x7dea1106], &[0xd0f50004, 0x00021106], &[]),
        ("v_cmpx_ne_u16", &[0x7d7a0300], &[0xd0bd0004, 0x00020300], &[0x7d7a02f9, 0x06068400]),
        ("v_cmpx_ne_u32", &[0x7dba0300], &[0xd0dd0004, 0x00020300], &[0x7dba02f9, 0x06068400]),
        ("v_cmpx_ne_u64", &[0x7dfa1106], &[0xd0fd0004, 0x00021106], &[]),
        ("v_cmpx_neq_f16", &[0x7c7a0300], &[0xd03d0004, 0x00020300], &[0x7c7a02f9, 0x06068400]),
        ("v_cmpx_neq_f32", &[0x7cba0300], &[0xd05d0004, 0x00020300], &[0x7cba02f9, 0x06068400]),
        ("v_cmpx_neq_f64", &[0x7cfa1106], &[0xd07d0004, 0x00021106], &[]),
        ("v_cmpx_nge_f16", &[0x7c720300], &[0xd0390004, 0x00020300], &[0x7c7202f9, 0x06068400]),
        ("v_cmpx_nge_f32", &[0x7cb20300], &[0xd0590004, 0x00020300], &[0x7cb202f9, 0x06068400]),
        ("v_cmpx_nge_f64", &[0x7cf21106], &[0xd0790004, 0x00021106], &[]),
        ("v_cmpx_ngt_f16", &[0x7c760300], &[0xd03b0004, 0x00020300], &[0x7c7602f9, 0x06068400]),
        ("v_cmpx_ngt_f32", &[0x7cb60300], &[0xd05b0004, 0x00020300], &[0x7cb602f9, 0x06068400]),
        ("v_cmpx_ngt_f64", &[0x7cf61106], &[0xd07b0004, 0x00021106], &[]),
        ("v_cmpx_nle_f16", &[0x7c780300], &[0xd03c0004, 0x00020300], &[0x7c7802f9, 0x06068400]),
        ("v_cmpx_nle_f32", &[0x7cb80300], &[0xd05c0004, 0x00020300], &[0x7cb802f9, 0x06068400]),
        ("v_cmpx_nle_f64", &[0x7cf81106], &[0xd07c0004, 0x00021106], &[]),
        ("v_cmpx_nlg_f16", &[0x7c740300], &[0xd03a0004, 0x00020300], &[0x7c7402f9, 0x06068400]),
        ("v_cmpx_nlg_f32", &[0x7cb40300], &[0xd05a0004, 0x00020300], &[0x7cb402f9, 0x06068400]),
        ("v_cmpx_nlg_f64", &[0x7cf41106], &[0xd07a0004, 0x00021106], &[]),
        ("v_cmpx_nlt_f16", &[0x7c7c0300], &[0xd03e0004, 0x00020300], &[0x7c7c02f9, 0x06068400]),
        ("v_cmpx_nlt_f32", &[0x7cbc0300], &[0xd05e0004, 0x00020300], &[0x7cbc02f9, 0x06068400]),
        ("v_cmpx_nlt_f64", &[0x7cfc1106], &[0xd07e0004, 0x00021106], &[]),
        ("v_cmpx_o_f16", &[0x7c6e0300], &[0xd0370004, 0x00020300], &[0x7c6e02f9, 0x06068400]),
        ("v_cmpx_o_f32", &[0x7cae0300], &[0xd0570004, 0x00020300], &[0x7cae02f9, 0x06068400]),
        ("v_cmpx_o_f64", &[0x7cee1106], &[0xd0770004, 0x00021106], &[]),
        ("v_cmpx_t_i16", &[0x7d6e0300], &[0xd0b70004, 0x00020300], &[0x7d6e02f9, 0x06068400]),
        ("v_cmpx_t_i32", &[0x7dae0300], &[0xd0d70004, 0x00020300], &[0x7dae02f9, 0x06068400]),
        ("v_cmpx_t_i64", &[0x7dee1106], &[0xd0f70004, 0x00021106], &[]),
        ("v_cmpx_t_u16", &[0x7d7e0300], &[0xd0bf0004, 0x00020300], &[0x7d7e02f9, 0x06068400]),
        ("v_cmpx_t_u32", &[0x7dbe0300], &[0xd0df0004, 0x00020300], &[0x7dbe02f9, 0x06068400]),
        ("v_cmpx_t_u64", &[0x7dfe1106], &[0xd0ff0004, 0x00021106], &[]),
        ("v_cmpx_tru_f16", &[0x7c7e0300], &[0xd03f0004, 0x00020300], &[0x7c7e02f9, 0x06068400]),
        ("v_cmpx_tru_f32", &[0x7cbe0300], &[0xd05f0004, 0x00020300], &[0x7cbe02f9, 0x06068400]),
        ("v_cmpx_tru_f64", &[0x7cfe1106], &[0xd07f0004, 0x00021106], &[]),
        ("v_cmpx_u_f16", &[0x7c700300], &[0xd0380004, 0x00020300], &[0x7c7002f9, 0x06068400]),
        ("v_cmpx_u_f32", &[0x7cb00300], &[0xd0580004, 0x00020300], &[0x7cb002f9, 0x06068400]),
        ("v_cmpx_u_f64", &[0x7cf01106], &[0xd0780004, 0x00021106], &[]),
    ];
    assert_eq!(table.len(), 198, "all gfx90a compare ops");
    for (name, e32, e64, sdwa) in table {
        check(name, e32, true, |a| a, |b| b);
        check(name, e64, false, |a| a, |b| b);
        if !sdwa.is_empty() {
            check(name, sdwa, false, |a| a, |b| b);
        }
    }
}

type Map = fn(u64) -> u64;

/// SDWA selects/sext, VOP3 and SDWA abs/neg, constants and SGPR sources.
#[test]
fn compare_operand_modifiers() {
    let table: &[(&str, &[u32], bool, Map, Map)] = &[
        // v_cmp_eq_u16_sdwa s[4:5], v0, v1 src0_sel:WORD_1 src1_sel:BYTE_0
        ("v_cmp_eq_u16", &[0x7d5402f9, 0x00058400], false, |a| a >> 16 & 0xffff, |b| b & 0xff),
        // v_cmp_ne_u32_sdwa vcc, v0, v1 src0_sel:BYTE_1 src1_sel:DWORD
        ("v_cmp_ne_u32", &[0x7d9a02f9, 0x06010000], true, |a| a >> 8 & 0xff, |b| b),
        // v_cmp_gt_i32_sdwa vcc, sext(v0), v1 src0_sel:WORD_0 src1_sel:DWORD
        ("v_cmp_gt_i32", &[0x7d8802f9, 0x060c0000], true, |a| a as u16 as i16 as i32 as u32 as u64, |b| b),
        // v_cmp_lt_u32_sdwa vcc, v0, sext(v1) src0_sel:DWORD src1_sel:BYTE_3
        ("v_cmp_lt_u32", &[0x7d9202f9, 0x0b060000], true, |a| a, |b| (b >> 24) as u8 as i8 as i32 as u32 as u64),
        // v_cmp_lt_f32_sdwa vcc, -v0, |v1| src0_sel:DWORD src1_sel:DWORD
        ("v_cmp_lt_f32", &[0x7c8202f9, 0x26160000], true, |a| a ^ 0x8000_0000, |b| b & 0x7fff_ffff),
        // v_cmp_nge_f16_sdwa s[4:5], v0, -v1 src0_sel:WORD_1 src1_sel:WORD_1
        ("v_cmp_nge_f16", &[0x7c5202f9, 0x15058400], false, |a| a >> 16, |b| (b >> 16) ^ 0x8000),
        // v_cmpx_le_f32_sdwa vcc, v0, v1 src0_sel:WORD_0 src1_sel:DWORD
        ("v_cmpx_le_f32", &[0x7ca602f9, 0x06040000], true, |a| a & 0xffff, |b| b),
        // v_cmp_lt_f32_e64 s[4:5], -v0, |v1|
        ("v_cmp_lt_f32", &[0xd0410204, 0x20020300], false, |a| a ^ 0x8000_0000, |b| b & 0x7fff_ffff),
        // v_cmp_neq_f16_e64 s[4:5], |v0|, -|v1|
        ("v_cmp_neq_f16", &[0xd02d0304, 0x40020300], false, |a| a & 0x7fff, |b| b | 0x8000),
        // v_cmpx_ge_f64_e64 s[4:5], -|v[6:7]|, -v[8:9]
        ("v_cmpx_ge_f64", &[0xd0760104, 0x60021106], false, |a| a | 1 << 63, |b| b ^ 1 << 63),
        // v_cmp_class_f32_e64 s[4:5], -v0, v1
        ("v_cmp_class_f32", &[0xd0100004, 0x20020300], false, |a| a ^ 0x8000_0000, |b| b),
        // v_cmp_class_f64_e64 s[4:5], |v[6:7]|, v1
        ("v_cmp_class_f64", &[0xd0120104, 0x00020306], false, |a| a & !(1 << 63), |b| b),
        // v_cmp_class_f16_sdwa s[4:5], -v0, v1 src0_sel:WORD_1 src1_sel:DWORD
        ("v_cmp_class_f16", &[0x7c2802f9, 0x06158400], false, |a| (a >> 16) ^ 0x8000, |b| b),
        // v_cmp_eq_u32_e32 vcc, 0x5678, v1
        ("v_cmp_eq_u32", &[0x7d9402ff, 0x00005678], true, |_| 0x5678, |b| b),
        // v_cmp_gt_u64_e64 s[4:5], s[20:21], v[8:9]
        ("v_cmp_gt_u64", &[0xd0ec0004, 0x00021014], false, |_| 0x8000_0000_0000_0001, |b| b),
        // v_cmp_lt_i64_e32 vcc, -1, v[8:9]
        ("v_cmp_lt_i64", &[0x7dc210c1], true, |_| u64::MAX, |b| b),
        // v_cmp_eq_f64_e32 vcc, 1.0, v[8:9]
        ("v_cmp_eq_f64", &[0x7cc410f2], true, |_| 0x3ff0_0000_0000_0000, |b| b),
        // v_cmp_eq_f16_e32 vcc, 1.0, v1
        ("v_cmp_eq_f16", &[0x7c4402f2], true, |_| 0x3c00, |b| b),
    ];
    for (name, words, vcc, fa, fb) in table {
        check(name, words, *vcc, fa, fb);
    }
}
