//! Phase 2 of `isa-vectors`: mutations of each opcode's accepted probe (registers, constants,
//! literals, modifiers, offsets, DPP and SDWA forms), disassembled by LLVM and written as test
//! vectors. Candidates LLVM rejects are kept too (a sample per encoding), so the test can check
//! that the decoder does not panic on them.

use super::enc::{self, Enc};
use super::llvm::Mc;
use super::tables::Probe;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Rejected candidates kept per encoding.
const REJECTS_PER_ENC: usize = 400;
/// Random words per encoding prefix.
const RANDOM_PER_ENC: usize = 300;

/// The probe with source `i` replaced by the 9-bit (or 8-bit scalar) operand `val`, and an
/// optional literal appended. `None` when the encoding has no such source field.
pub fn with_src(p: &Probe, i: usize, val: u32, lit: Option<u32>) -> Option<Vec<u32>> {
    let mut w = p.words.clone();
    match p.enc {
        Enc::Vop3 | Enc::Vop3p => {
            if lit.is_some() {
                return None;
            }
            set(&mut w, 1, 9 * i as u32, 9, val);
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc if i == 0 && w.len() == 1 => set(&mut w, 0, 0, 9, val),
        Enc::Sop2 | Enc::Sopc if i < 2 && w.len() == 1 => set(&mut w, 0, 8 * i as u32, 8, val),
        Enc::Sop1 if i == 0 && w.len() == 1 => set(&mut w, 0, 0, 8, val),
        _ => return None,
    }
    if let Some(l) = lit {
        w.push(l);
    }
    Some(w)
}

fn set(w: &mut [u32], word: usize, lo: u32, width: u32, val: u32) {
    let mask = ((1u64 << width) - 1) as u32;
    w[word] = (w[word] & !(mask << lo)) | ((val & mask) << lo);
}

fn with(p: &Probe, edits: &[(usize, u32, u32, u32)]) -> Vec<u32> {
    let mut w = p.words.clone();
    for &(word, lo, width, val) in edits {
        set(&mut w, word, lo, width, val);
    }
    w
}

/// Scalar source operands worth covering (8-bit SSRC codes).
const SCALAR_SRCS: [u32; 22] =
    [0, 5, 101, 102, 103, 104, 105, 106, 107, 108, 111, 123, 124, 126, 127, 0x80, 0x81, 0xc0, 0xc1, 0xd0, 0xf2, 0xf8];
/// 9-bit source operand codes beyond the scalar ones.
const VECTOR_SRCS: [u32; 14] = [0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 235, 236, 237, 238, 239, 251, 253];
const MORE_SRCS: [u32; 3] = [252, 254, 511];
const LITERALS: [u32; 10] =
    [0x1234_5678, 0x3f80_0000, 0x40, 0xffff, 0x3c00, 0x3118, 0xc000_0000, 0x3ff0_0000, 0xffff_fff0, 0x3e22_f983];

const DPP_CTRLS: [u32; 24] = [
    0x000, 0x01b, 0x0e4, 0x0ff, 0x100, 0x101, 0x10f, 0x110, 0x111, 0x11f, 0x121, 0x12f, 0x130, 0x134, 0x138, 0x13c,
    0x140, 0x141, 0x142, 0x143, 0x144, 0x150, 0x15f, 0x160,
];

/// (modifier flag, baseline word, baseline with the modifier's bits set) for every modifier the
/// probe's encoding has.
pub fn modifier_probes(p: &Probe) -> Vec<(&'static str, Vec<u32>, Vec<u32>)> {
    let mut v = Vec::new();
    let base = p.words.clone();
    match p.enc {
        Enc::Vop3 => {
            let vop3b = tables_has_sdst(p);
            if !vop3b {
                v.push(("ABS", base.clone(), with(p, &[(0, 8, 1, 1)])));
                v.push(("OP_SEL", base.clone(), with(p, &[(0, 11, 1, 1)])));
            }
            v.push(("NEG", base.clone(), with(p, &[(1, 29, 1, 1)])));
            v.push(("NEG_SRC1", base.clone(), with(p, &[(1, 30, 1, 1)])));
            v.push(("NEG_SRC2", base.clone(), with(p, &[(1, 31, 1, 1)])));
            if !vop3b {
                v.push(("ABS_SRC1", base.clone(), with(p, &[(0, 9, 1, 1)])));
                v.push(("ABS_SRC2", base.clone(), with(p, &[(0, 10, 1, 1)])));
            }
            v.push(("CLAMP", base.clone(), with(p, &[(0, 15, 1, 1)])));
            v.push(("OMOD", base.clone(), with(p, &[(1, 27, 2, 1)])));
        }
        Enc::Vop3p if (p.words[0] >> 16) & 0x7f < 0x40 => {
            v.push(("NEG", base.clone(), with(p, &[(1, 29, 1, 1)])));
            v.push(("NEG_HI", base.clone(), with(p, &[(0, 8, 1, 1)])));
            v.push(("OP_SEL", base.clone(), with(p, &[(0, 11, 1, 1)])));
            v.push(("CLAMP", base.clone(), with(p, &[(0, 15, 1, 1)])));
            v.push(("OP_SEL_HI", base.clone(), with(p, &[(1, 27, 1, 0)])));
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc if p.words.len() == 1 => {
            let w0 = (p.words[0] & !0x1ff) | 0xf9;
            let sdwa = vec![w0, 32 | (6 << 8) | (6 << 16) | (6 << 24)];
            let set = |x: u32| vec![sdwa[0], sdwa[1] | x];
            v.push(("SDWA_ABS_NEG", sdwa.clone(), set(1 << 20)));
            v.push(("SDWA_SEXT", sdwa.clone(), set(1 << 19)));
            if p.enc != Enc::Vopc {
                v.push(("SDWA_CLAMP", sdwa.clone(), set(1 << 13)));
                v.push(("SDWA_OMOD", sdwa.clone(), set(1 << 14)));
            }
            let w0 = (p.words[0] & !0x1ff) | 0xfa;
            let dpp = vec![w0, 32 | (0x1b << 8) | (0xf << 24) | (0xf << 28)];
            v.push(("DPP_ABS_NEG", dpp.clone(), vec![dpp[0], dpp[1] | (1 << 20)]));
        }
        _ => {}
    }
    v
}

/// Whether a VOP3 probe printed a carry-out/sdst in bits [14:8] (VOP3b), which then are not
/// abs/op_sel.
fn tables_has_sdst(p: &Probe) -> bool {
    p.text.contains(" s[0:1]")
}

/// All candidates derived from one probe.
fn mutations(p: &Probe) -> Vec<Vec<u32>> {
    let mut out = vec![p.words.clone()];
    let lits = |out: &mut Vec<Vec<u32>>, i: usize| {
        for l in LITERALS {
            if let Some(w) = with_src(p, i, 0xff, Some(l)) {
                out.push(w);
            }
        }
    };
    match p.enc {
        Enc::Sop2 | Enc::Sopc | Enc::Sop1 => {
            let nsrc = if p.enc == Enc::Sop1 { 1 } else { 2 };
            for i in 0..nsrc {
                for s in SCALAR_SRCS.iter().chain(&[251, 252, 253, 235, 239, 0xf7]) {
                    out.extend(with_src(p, i, *s, None));
                }
                lits(&mut out, i);
            }
            if p.enc != Enc::Sopc {
                for d in [0, 101, 102, 106, 107, 108, 124, 126, 127, 125] {
                    out.push(with(p, &[(0, 16, 7, d)]));
                }
            }
        }
        Enc::Sopk => {
            for imm in [0, 1, 0x7fff, 0x8000, 0xffff, 0x0801, 0x1881, 0xf8c1, 0x0004, 0x0817] {
                out.push(with(p, &[(0, 0, 16, imm)]));
            }
            // Every hwreg id, whole register and a bit field.
            for id in 0..64 {
                out.push(with(p, &[(0, 0, 16, id | (31 << 11))]));
                out.push(with(p, &[(0, 0, 16, id | (3 << 6) | (4 << 11))]));
            }
            for d in [0, 101, 106, 124, 126, 108] {
                out.push(with(p, &[(0, 16, 7, d)]));
            }
            out.push({
                let mut w = p.words.clone();
                w.truncate(1);
                w.push(0xdead_beef);
                w
            });
        }
        Enc::Sopp => {
            for imm in [
                0, 1, 2, 0xf, 0x7fff, 0x8000, 0xffff, 0x1234, 0x0f70, 0x0070, 0xc07f, 0x3f0f, 0x0001, 0x0002, 0x0003,
                0x0012, 0x0022, 0x0032, 0x0009, 0x000a, 0x000f, 0x0004, 0x0008, 0x0005, 0x0006, 0x0007, 0x0013, 0x0033,
                0x0133, 0x0312, 0x001f, 0x002f, 0x003f, 0x004f, 0x010f, 0x0b, 0x0c, 0x0e, 0x0f7f, 0x3f7f, 0xcf7f,
                0x007f, 0x0f0f, 0x4000, 0x0c70, 0x0300,
            ] {
                out.push(with(p, &[(0, 0, 16, imm)]));
            }
        }
        Enc::Smem => {
            for e in [
                &[(0, 17, 1, 0), (1, 0, 21, 5)][..],
                &[(0, 17, 1, 0), (1, 0, 21, 124)],
                &[(1, 0, 21, 0)],
                &[(1, 0, 21, 0xf_ffff)],
                &[(1, 0, 21, 0x10_0000)],
                &[(1, 0, 21, 0x1f_fff0)],
                &[(0, 14, 1, 1), (1, 25, 7, 5)],
                &[(0, 14, 1, 1), (1, 25, 7, 124), (1, 0, 21, 0x100)],
                &[(0, 14, 1, 1), (0, 17, 1, 0), (1, 25, 7, 7)],
                &[(0, 16, 1, 1)],
                &[(0, 16, 1, 0)],
                &[(0, 15, 1, 1)],
                &[(0, 6, 7, 0)],
                &[(0, 6, 7, 101)],
                &[(0, 6, 7, 106)],
                &[(0, 6, 7, 108)],
                &[(0, 0, 6, 0)],
                &[(0, 0, 6, 53)],
                &[(0, 0, 6, 54)],
            ] {
                out.push(with(p, e));
            }
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => {
            if p.words.len() == 1 {
                for s in SCALAR_SRCS.iter().chain(&VECTOR_SRCS).chain(&MORE_SRCS) {
                    out.extend(with_src(p, 0, *s, None));
                }
                lits(&mut out, 0);
            } else {
                for l in [0x3f80_0000, 0x1234_5678, 0xffff_ffff] {
                    out.push(with(p, &[(1, 0, 32, l)]));
                }
                for s in [0x80, 5, 106, 0xf2] {
                    out.push(with(p, &[(0, 0, 9, s)]));
                }
            }
            if p.enc != Enc::Vopc {
                out.push(with(p, &[(0, 17, 8, 255)]));
            }
            if p.enc != Enc::Vop1 {
                out.push(with(p, &[(0, 9, 8, 255)]));
            }
            if p.words.len() == 1 {
                out.extend(sdwa(p));
                out.extend(dpp(p));
            }
        }
        Enc::Vop3 | Enc::Vop3p => {
            for i in 0..3 {
                for s in [0x80, 0xc1, 0xf2, 0xf8, 106, 126, 124, 5, 253, 0xff, 511, 256] {
                    out.extend(with_src(p, i, s, None));
                }
            }
            for (lo, width, vals) in [
                (8u32, 3u32, &[1u32, 2, 4, 7][..]),
                (11, 4, &[1, 2, 4, 8, 15]),
                (15, 1, &[1]),
                (8, 7, &[106, 4, 126, 108, 101, 124]),
            ] {
                for v in vals {
                    out.push(with(p, &[(0, lo, width, *v)]));
                }
            }
            for (lo, width, vals) in [(27u32, 2u32, &[0u32, 1, 2, 3][..]), (29, 3, &[1, 2, 4, 7])] {
                for v in vals {
                    out.push(with(p, &[(1, lo, width, *v)]));
                }
            }
            out.push(with(p, &[(0, 0, 8, 255)]));
            out.push(with(p, &[(0, 0, 8, 106)]));
            // Modifiers on constants and scalar sources.
            for (s0, abs, neg) in [(0xf2, 1, 1), (0xc1, 0, 1), (0x81, 1, 0), (5, 1, 1), (0xf8, 0, 1)] {
                let mut w = with_src(p, 0, s0, None).unwrap_or_else(|| p.words.clone());
                set(&mut w, 0, 8, 1, abs);
                set(&mut w, 1, 29, 1, neg);
                out.push(w);
            }
            out.push(with(p, &[(0, 15, 1, 1), (1, 27, 2, 2), (1, 29, 3, 3), (0, 8, 3, 5)]));
        }
        Enc::Vop3px => {
            // The prefix: scale sources, op_sel/op_sel_hi (the scale bytes), and the fields
            // the fused form ignores (vdst, neg, neg_hi, clamp, src2).
            for i in 0..2 {
                for s in [0x80, 0xc1, 0xf2, 0xf8, 106, 124, 5, 253, 511, 256, 0] {
                    out.push(with(p, &[(1, 9 * i, 9, s)]));
                }
            }
            for e in [
                &[(0, 11, 1, 1)][..],
                &[(0, 12, 1, 1)],
                &[(0, 13, 1, 1)],
                &[(0, 11, 3, 7)],
                &[(0, 14, 1, 1)],
                &[(1, 27, 1, 1)],
                &[(1, 28, 1, 1)],
                &[(1, 27, 2, 3), (0, 14, 1, 1)],
                &[(1, 27, 2, 3), (0, 11, 2, 3)],
                &[(1, 29, 3, 7)],
                &[(0, 8, 3, 7)],
                &[(0, 15, 1, 1)],
                &[(0, 0, 8, 16)],
                &[(1, 18, 9, 0x100)],
            ] {
                out.push(with(p, e));
            }
            // The MFMA: formats, abid (only 1 fuses), acc bits, operands.
            for cbsz in 0..8 {
                out.push(with(p, &[(2, 8, 3, cbsz)]));
            }
            for blgp in 0..8 {
                out.push(with(p, &[(3, 29, 3, blgp)]));
            }
            for (cbsz, blgp) in [(2, 4), (4, 3), (3, 2), (4, 4), (2, 2)] {
                out.push(with(p, &[(2, 8, 3, cbsz), (3, 29, 3, blgp)]));
            }
            for abid in [0, 2, 3, 5, 9, 15] {
                out.push(with(p, &[(2, 11, 4, abid)]));
            }
            for e in [&[(2, 15, 1, 1)][..], &[(3, 27, 1, 1)], &[(3, 28, 1, 1)], &[(3, 27, 2, 3), (2, 15, 1, 1)]] {
                out.push(with(p, e));
            }
            for i in 0..3 {
                for s in [0x80, 0xc1, 0xf2, 106, 5, 256, 0x1f8, 511] {
                    out.push(with(p, &[(3, 9 * i, 9, s)]));
                }
            }
            for d in [0, 252, 255] {
                out.push(with(p, &[(2, 0, 8, d)]));
            }
        }
        Enc::Ds => {
            for e in [
                &[(0, 0, 16, 0)][..],
                &[(0, 0, 16, 0xffff)],
                &[(0, 0, 8, 0x80), (0, 8, 8, 0)],
                &[(0, 16, 1, 1)],
                &[(0, 25, 1, 1)],
                &[(1, 0, 8, 255)],
                &[(1, 24, 8, 254)],
                &[(1, 8, 8, 254)],
            ] {
                out.push(with(p, e));
            }
        }
        Enc::Flat | Enc::Global | Enc::Scratch => {
            for e in [
                &[(0, 0, 13, 0xfff)][..],
                &[(0, 0, 13, 0x1000)],
                &[(0, 0, 13, 0x1fff)],
                &[(0, 0, 13, 0x800)],
                &[(0, 0, 13, 8)],
                &[(0, 16, 1, 1)],
                &[(0, 16, 1, 0)],
                &[(0, 17, 1, 1)],
                &[(0, 13, 1, 1)],
                &[(0, 25, 1, 1)],
                &[(1, 23, 1, 1)],
                &[(1, 16, 7, 2)],
                &[(1, 16, 7, 3)],
                &[(1, 16, 7, 106)],
                &[(1, 16, 7, 0)],
                &[(1, 16, 7, 0x7d)],
                &[(1, 16, 7, 2), (1, 0, 8, 0)],
                &[(1, 16, 7, 3), (1, 0, 8, 0)],
                &[(1, 0, 8, 254)],
                &[(1, 24, 8, 254)],
                &[(1, 8, 8, 254)],
            ] {
                out.push(with(p, e));
            }
        }
        Enc::Mubuf | Enc::Mtbuf => {
            for e in [
                &[(0, 0, 12, 0xfff)][..],
                &[(0, 0, 12, 1)],
                &[(0, 12, 2, 2), (1, 0, 8, 32)],
                &[(0, 12, 2, 3), (1, 0, 8, 32)],
                &[(0, 12, 2, 0), (1, 0, 8, 0)],
                &[(0, 14, 1, 1)],
                &[(0, 15, 1, 1)],
                &[(0, 16, 1, 1)],
                &[(0, 17, 1, 1)],
                &[(0, 25, 1, 1)],
                &[(1, 22, 1, 1)],
                &[(1, 23, 1, 1)],
                &[(1, 24, 8, 0x80)],
                &[(1, 24, 8, 0xc1)],
                &[(1, 24, 8, 124)],
                &[(1, 24, 8, 0xff)],
                &[(1, 16, 5, 0)],
                &[(1, 16, 5, 27)],
                &[(1, 16, 5, 31)],
                &[(1, 8, 8, 254)],
            ] {
                out.push(with(p, e));
            }
            if p.enc == Enc::Mtbuf {
                for (d, n) in [(0, 0), (4, 7), (15, 1), (14, 4), (2, 2)] {
                    out.push(with(p, &[(0, 19, 4, d), (0, 23, 3, n)]));
                }
            }
        }
        Enc::Mimg => {
            for e in [
                &[(0, 8, 4, 1)][..],
                &[(0, 8, 4, 3)],
                &[(0, 8, 4, 7)],
                &[(0, 8, 4, 0)],
                &[(0, 8, 4, 5)],
                &[(0, 12, 1, 1)],
                &[(0, 13, 1, 1)],
                &[(0, 14, 1, 1)],
                &[(0, 15, 1, 1)],
                &[(0, 16, 1, 1)],
                &[(0, 17, 1, 1)],
                &[(0, 25, 1, 1)],
                &[(1, 31, 1, 1)],
                &[(1, 31, 1, 1), (0, 8, 4, 3)],
                &[(1, 31, 1, 1), (0, 8, 4, 7)],
                &[(1, 16, 5, 1)],
                &[(1, 21, 5, 7)],
                &[(1, 0, 8, 34)],
            ] {
                out.push(with(p, e));
            }
        }
    }
    out
}

/// SDWA forms of a VOP1/VOP2/VOPC probe.
fn sdwa(p: &Probe) -> Vec<Vec<u32>> {
    let w0 = (p.words[0] & !0x1ff) | 0xf9;
    let base = 32u32; // src0 VGPR
    let mut v = Vec::new();
    let sdwa = |x: u32| vec![w0, base | x];
    // dst_sel, dst_unused, clamp, omod (or VOPC sdst), src0 sel/sext/neg/abs, src1 ...
    v.push(sdwa((6 << 8) | (6 << 16) | (6 << 24)));
    v.push(sdwa(0));
    for sel in [0u32, 1, 3, 4, 5] {
        v.push(sdwa((sel << 8) | (6 << 16) | (6 << 24)));
        v.push(sdwa((6 << 8) | (sel << 16) | (6 << 24)));
        v.push(sdwa((6 << 8) | (6 << 16) | (sel << 24)));
    }
    for x in [
        1 << 11,
        2 << 11,
        1 << 13,
        1 << 14,
        3 << 14,
        1 << 19,
        1 << 20,
        1 << 21,
        1 << 27,
        1 << 28,
        1 << 29,
        1 << 23,
        1 << 31,
        (1 << 15) | (4 << 8),
        (1 << 15) | (106 << 8),
        1 << 15,
        (1 << 23) | (1 << 20),
    ] {
        v.push(sdwa((6 << 8) | (6 << 16) | (6 << 24) | x));
    }
    v.push(vec![w0, 0xf2 | (1 << 23) | (6 << 8) | (6 << 16) | (6 << 24)]);
    v.push(vec![w0, 5 | (1 << 23) | (6 << 8) | (6 << 16) | (6 << 24)]);
    v
}

/// DPP forms of a VOP1/VOP2/VOPC probe.
fn dpp(p: &Probe) -> Vec<Vec<u32>> {
    let w0 = (p.words[0] & !0x1ff) | 0xfa;
    let mut v = Vec::new();
    for ctrl in DPP_CTRLS {
        v.push(vec![w0, 32 | (ctrl << 8) | (0xf << 24) | (0xf << 28)]);
    }
    for x in [1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23, (0x5 << 24) | (0xa << 28), 0] {
        v.push(vec![w0, 32 | (0x1b << 8) | (0xf << 24) | (0xf << 28) | x]);
    }
    v
}

/// Deterministic pseudo-random words with an encoding's prefix.
fn random_words(enc: Enc, n: usize) -> Vec<Vec<u32>> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ (enc as u64 + 1);
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    let (prefix, bits, two) = match enc {
        Enc::Sop2 => (0b10u32, 2u32, false),
        Enc::Sopk => (0b1011, 4, false),
        Enc::Sop1 => (0b1_0111_1101, 9, false),
        Enc::Sopc => (0b1_0111_1110, 9, false),
        Enc::Sopp => (0b1_0111_1111, 9, false),
        Enc::Smem => (0b110000, 6, true),
        Enc::Vop2 => (0, 1, false),
        Enc::Vop1 => (0b011_1111, 7, false),
        Enc::Vopc => (0b011_1110, 7, false),
        Enc::Vop3 => (0b110100, 6, true),
        Enc::Vop3p | Enc::Vop3px => (0b1_1010_0111, 9, true),
        Enc::Ds => (0b110110, 6, true),
        Enc::Flat | Enc::Global | Enc::Scratch => (0b110111, 6, true),
        Enc::Mubuf => (0b111000, 6, true),
        Enc::Mtbuf => (0b111010, 6, true),
        Enc::Mimg => (0b111100, 6, true),
    };
    (0..n)
        .map(|_| {
            let w0 = (prefix << (32 - bits)) | (next() >> bits);
            let mut w = vec![w0];
            if two {
                w.push(next());
            }
            w
        })
        .collect()
}

fn hex(words: &[u32]) -> String {
    words.iter().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(" ")
}

/// Accepted candidates per encoding: words -> LLVM's text.
pub type Accepted = BTreeMap<Enc, BTreeMap<Vec<u32>, String>>;

/// Writes `<dir>/<encoding>.txt` (accepted: `words<TAB>text`) and `<dir>/rejected.txt`
/// (`encoding<TAB>words`), and returns the accepted candidates.
pub fn write_vectors(mc: &Mc, probes: &[Probe], dir: &Path) -> anyhow::Result<Accepted> {
    let mut all = Accepted::new();
    std::fs::create_dir_all(dir)?;
    let mut rejected = String::new();
    let mut total = 0;
    for e in enc::ALL.into_iter().filter(|e| e.on(mc.cpu)) {
        let mut cands: Vec<Vec<u32>> = Vec::new();
        for p in probes.iter().filter(|p| p.enc == e) {
            cands.extend(mutations(p));
        }
        if e != Enc::Vop3px {
            cands.extend(random_words(e, RANDOM_PER_ENC));
        }
        let mut seen = std::collections::BTreeSet::new();
        cands.retain(|c| seen.insert(c.clone()));
        let res = mc.disasm(&cands)?;
        let mut acc: BTreeMap<Vec<u32>, String> = BTreeMap::new();
        let mut rej = 0;
        for (c, r) in cands.into_iter().zip(res) {
            match r {
                Some(t) => {
                    acc.insert(c, t);
                }
                None => {
                    if rej < REJECTS_PER_ENC {
                        writeln!(rejected, "{}\t{}", e.name(), hex(&c)).unwrap();
                        rej += 1;
                    }
                }
            }
        }
        let mut s = String::new();
        for (c, t) in &acc {
            writeln!(s, "{}\t{}", hex(c), t).unwrap();
        }
        total += acc.len();
        eprintln!("  {}: {} vectors, {} rejected kept", e.name(), acc.len(), rej);
        std::fs::write(dir.join(format!("{}.txt", e.name())), s)?;
        all.insert(e, acc);
    }
    std::fs::write(dir.join("rejected.txt"), rejected)?;
    eprintln!("  total {total} vectors in {}", dir.display());
    Ok(all)
}
