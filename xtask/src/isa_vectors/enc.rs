//! GFX9-family instruction encodings as the generator sees them: how to build the words of an
//! instruction from its fields, and which candidate words probe an opcode.
//!
//! Probes give every field a distinct register number so that the printed text tells which field
//! each operand came from: destination 16, first source/address 32, second source/data 48,
//! third source 64, VOP3b carry-out s[0:1].

/// Field values used by the probes.
pub const D: u32 = 16;
pub const A: u32 = 32;
pub const B: u32 = 48;
pub const C: u32 = 64;
/// VGPR n as a 9-bit source operand.
pub const fn v(n: u32) -> u32 {
    256 + n
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Enc {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop2,
    Vop1,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    Mimg,
    /// gfx950 block-scaled MFMA: a `v_mfma_ld_scale_b32` word pair fused with the VOP3P MFMA
    /// after it into one 16-byte instruction (the opcode is the MFMA's). Last, so that the
    /// other encodings keep their discriminants (they seed the random candidates).
    Vop3px,
}

pub const ALL: [Enc; 19] = [
    Enc::Sop2,
    Enc::Sopk,
    Enc::Sop1,
    Enc::Sopc,
    Enc::Sopp,
    Enc::Smem,
    Enc::Vop2,
    Enc::Vop1,
    Enc::Vopc,
    Enc::Vop3,
    Enc::Vop3p,
    Enc::Ds,
    Enc::Flat,
    Enc::Global,
    Enc::Scratch,
    Enc::Mubuf,
    Enc::Mtbuf,
    Enc::Mimg,
    Enc::Vop3px,
];

impl Enc {
    /// Whether the processor has the encoding (only gfx950 fuses `v_mfma_ld_scale_b32`).
    pub fn on(self, cpu: &str) -> bool {
        self != Enc::Vop3px || cpu == "gfx950"
    }

    /// The lower-case name used for files and the decoder's `Encoding` variant.
    pub fn name(self) -> &'static str {
        match self {
            Enc::Sop2 => "sop2",
            Enc::Sopk => "sopk",
            Enc::Sop1 => "sop1",
            Enc::Sopc => "sopc",
            Enc::Sopp => "sopp",
            Enc::Smem => "smem",
            Enc::Vop2 => "vop2",
            Enc::Vop1 => "vop1",
            Enc::Vopc => "vopc",
            Enc::Vop3 => "vop3",
            Enc::Vop3p => "vop3p",
            Enc::Vop3px => "vop3px",
            Enc::Ds => "ds",
            Enc::Flat => "flat",
            Enc::Global => "global",
            Enc::Scratch => "scratch",
            Enc::Mubuf => "mubuf",
            Enc::Mtbuf => "mtbuf",
            Enc::Mimg => "mimg",
        }
    }

    /// Number of opcode values the encoding's opcode field can hold without colliding with
    /// another encoding's prefix.
    pub fn opcodes(self) -> u32 {
        match self {
            Enc::Sop2 => 0x60,
            Enc::Sopk => 0x1d,
            Enc::Sop1 | Enc::Smem | Enc::Vop1 | Enc::Vopc | Enc::Ds => 256,
            Enc::Sopc | Enc::Sopp | Enc::Vop3p | Enc::Vop3px => 128,
            Enc::Vop2 => 0x3e,
            Enc::Vop3 => 0x380,
            Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf | Enc::Mimg => 128,
            Enc::Mtbuf => 16,
        }
    }
}

pub fn sop2(op: u32, sdst: u32, s0: u32, s1: u32) -> u32 {
    (0b10 << 30) | (op << 23) | (sdst << 16) | (s1 << 8) | s0
}
pub fn sopk(op: u32, sdst: u32, imm: u32) -> u32 {
    (0b1011 << 28) | (op << 23) | (sdst << 16) | (imm & 0xffff)
}
pub fn sop1(op: u32, sdst: u32, s0: u32) -> u32 {
    (0b1_0111_1101 << 23) | (sdst << 16) | (op << 8) | s0
}
pub fn sopc(op: u32, s0: u32, s1: u32) -> u32 {
    (0b1_0111_1110 << 23) | (op << 16) | (s1 << 8) | s0
}
pub fn sopp(op: u32, imm: u32) -> u32 {
    (0b1_0111_1111 << 23) | (op << 16) | (imm & 0xffff)
}
/// SMEM with an immediate offset (imm=1).
pub fn smem(op: u32, sdata: u32, sbase: u32, glc: u32, offset: u32) -> [u32; 2] {
    [(0b110000 << 26) | (op << 18) | (1 << 17) | (glc << 16) | (sdata << 6) | (sbase >> 1), offset & 0x1f_ffff]
}
pub fn vop2(op: u32, vdst: u32, src0: u32, vsrc1: u32) -> u32 {
    (op << 25) | (vdst << 17) | (vsrc1 << 9) | src0
}
pub fn vop1(op: u32, vdst: u32, src0: u32) -> u32 {
    (0b011_1111 << 25) | (vdst << 17) | (op << 9) | src0
}
pub fn vopc(op: u32, src0: u32, vsrc1: u32) -> u32 {
    (0b011_1110 << 25) | (op << 17) | (vsrc1 << 9) | src0
}
/// VOP3 (a or b); `mid` is bits [14:8] (abs/op_sel or sdst).
pub fn vop3(op: u32, vdst: u32, mid: u32, srcs: [u32; 3]) -> [u32; 2] {
    [(0b110100 << 26) | (op << 16) | (mid << 8) | vdst, srcs[0] | (srcs[1] << 9) | (srcs[2] << 18)]
}
/// VOP3P with op_sel_hi = [1,1,1] (LLVM's default, printed as nothing), except for the
/// matrix ops (opcode 0x40 and up) whose op_sel_hi bits are the abid/acc fields.
pub fn vop3p(op: u32, vdst: u32, srcs: [u32; 3]) -> [u32; 2] {
    let hi = u32::from(op < 0x40);
    [
        (0b1_1010_0111 << 23) | (op << 16) | (hi << 14) | vdst,
        srcs[0] | (srcs[1] << 9) | (srcs[2] << 18) | ((hi * 0b11) << 27),
    ]
}
/// The `v_mfma_ld_scale_b32` prefix of a block-scaled MFMA: scale sources (9-bit codes) for A
/// and B, op_sel_hi = 0 (scale byte 0, what LLVM's intrinsics emit).
pub fn ld_scale(scale_a: u32, scale_b: u32) -> [u32; 2] {
    [0xd3ac_0000, scale_a | (scale_b << 9)]
}
/// A VOP3P-MAI MFMA word pair with abid = 1 (which the scaled form requires), VGPR operands.
pub fn mai(op: u32, vdst: u32, srcs: [u32; 3]) -> [u32; 2] {
    [(0b1_1010_0111 << 23) | (op << 16) | (1 << 11) | vdst, srcs[0] | (srcs[1] << 9) | (srcs[2] << 18)]
}
/// Scale registers of the VOP3PX probes (not among the fields `describe` reads).
pub const SA: u32 = 80;
pub const SB: u32 = 96;

pub fn ds(op: u32, off0: u32, off1: u32, addr: u32, data0: u32, data1: u32, vdst: u32) -> [u32; 2] {
    [(0b110110 << 26) | (op << 17) | (off1 << 8) | off0, addr | (data0 << 8) | (data1 << 16) | (vdst << 24)]
}
/// FLAT/GLOBAL/SCRATCH; `seg` 0 flat, 1 scratch, 2 global.
pub fn flat(op: u32, seg: u32, glc: u32, addr: u32, data: u32, saddr: u32, vdst: u32) -> [u32; 2] {
    [(0b110111 << 26) | (op << 18) | (glc << 16) | (seg << 14), addr | (data << 8) | (saddr << 16) | (vdst << 24)]
}
pub fn mubuf(op: u32, offen: u32, vaddr: u32, vdata: u32, srsrc: u32, soffset: u32) -> [u32; 2] {
    [(0b111000 << 26) | (op << 18) | (offen << 12), vaddr | (vdata << 8) | (srsrc << 16) | (soffset << 24)]
}
/// MTBUF with dfmt=1 (BUF_DATA_FORMAT_8) and nfmt=0.
pub fn mtbuf(op: u32, offen: u32, vaddr: u32, vdata: u32, srsrc: u32, soffset: u32) -> [u32; 2] {
    [(0b111010 << 26) | (1 << 19) | (op << 15) | (offen << 12), vaddr | (vdata << 8) | (srsrc << 16) | (soffset << 24)]
}
pub fn mimg(op: u32, dmask: u32, vaddr: u32, vdata: u32, srsrc: u32, ssamp: u32) -> [u32; 2] {
    [(0b111100 << 26) | (op << 18) | (dmask << 8), vaddr | (vdata << 8) | (srsrc << 16) | (ssamp << 21)]
}

/// Candidate words for one opcode, in order of preference: the first one LLVM accepts is the
/// opcode's probe (the one that shows the most operands).
pub fn probes(enc: Enc, op: u32) -> Vec<Vec<u32>> {
    let mut p: Vec<Vec<u32>> = Vec::new();
    match enc {
        Enc::Sop2 => {
            p.push(vec![sop2(op, D, A, B)]);
            p.push(vec![sop2(op, 0, A, B)]);
        }
        Enc::Sopk => {
            p.push(vec![sopk(op, D, 0x1234)]);
            p.push(vec![sopk(op, D, 0x1234), 0x5678]);
        }
        Enc::Sop1 => {
            p.push(vec![sop1(op, D, A)]);
            p.push(vec![sop1(op, 0, A)]);
            p.push(vec![sop1(op, D, 0)]);
            p.push(vec![sop1(op, 0, 0)]);
        }
        Enc::Sopc => p.push(vec![sopc(op, A, B)]),
        Enc::Sopp => {
            p.push(vec![sopp(op, 3)]);
            p.push(vec![sopp(op, 0)]);
        }
        Enc::Smem => {
            for glc in [1, 0] {
                p.push(smem(op, D, A, glc, 0x10).to_vec());
                p.push(smem(op, 0, A, glc, 0x10).to_vec());
            }
            p.push(smem(op, D, 0, 0, 0).to_vec());
            p.push(smem(op, 0, 0, 0, 0).to_vec());
            p.push(vec![(0b110000 << 26) | (op << 18) | (D << 6), 0]);
            p.push(vec![(0b110000 << 26) | (op << 18), 0]);
        }
        Enc::Vop2 => {
            p.push(vec![vop2(op, D, v(A), B)]);
            p.push(vec![vop2(op, D, v(A), B), 0x11]);
        }
        Enc::Vop1 => {
            p.push(vec![vop1(op, D, v(A))]);
            p.push(vec![vop1(op, D, 0)]);
            p.push(vec![vop1(op, 0, 0)]);
        }
        Enc::Vopc => p.push(vec![vopc(op, v(A), B)]),
        Enc::Vop3 => {
            for n in (0..=3usize).rev() {
                for kinds in 0..(1u32 << n) {
                    let mut srcs = [0u32; 3];
                    for (i, s) in srcs.iter_mut().enumerate().take(n) {
                        let base = [A, B, C][i];
                        *s = if kinds & (1 << i) == 0 { v(base) } else { base };
                    }
                    p.push(vop3(op, D, 0, srcs).to_vec());
                }
            }
            p.push(vop3(op, 0, 0, [0; 3]).to_vec());
        }
        Enc::Vop3p => {
            for n in (0..=3usize).rev() {
                for kinds in 0..(1u32 << n) {
                    let mut srcs = [0u32; 3];
                    for (i, s) in srcs.iter_mut().enumerate().take(n) {
                        let base = [A, B, C][i];
                        *s = if kinds & (1 << i) == 0 { v(base) } else { base };
                    }
                    p.push(vop3p(op, D, srcs).to_vec());
                }
            }
            // gfx950 puts MFMAs (`v_mfma_*_f8f6f4`) and `v_mfma_ld_scale_b32` (no destination)
            // below 0x40, where the default op_sel_hi bits would read as abid/acc bits.
            if op < 0x40 {
                let [w0, w1] = vop3p(op, D, [v(A), v(B), v(C)]);
                p.push(vec![w0 & !(1 << 14), w1 & !(0b11 << 27)]);
                let [w0, w1] = vop3p(op, 0, [v(A), v(B), 0]);
                p.push(vec![w0, w1]);
            }
        }
        Enc::Vop3px => {
            let mut w = ld_scale(v(SA), v(SB)).to_vec();
            w.extend(mai(op, D, [v(A), v(B), v(C)]));
            p.push(w);
        }
        Enc::Ds => {
            // Presence of vdst, data0, data1 (addr is always given; ds_nop & co take none).
            for mask in (0..8u32).rev() {
                let vd = if mask & 4 != 0 { D } else { 0 };
                let d0 = if mask & 2 != 0 { B } else { 0 };
                let d1 = if mask & 1 != 0 { C } else { 0 };
                p.push(ds(op, 1, 2, A, d0, d1, vd).to_vec());
            }
            for mask in (0..8u32).rev() {
                let vd = if mask & 4 != 0 { D } else { 0 };
                let d0 = if mask & 2 != 0 { B } else { 0 };
                let d1 = if mask & 1 != 0 { C } else { 0 };
                p.push(ds(op, 1, 2, 0, d0, d1, vd).to_vec());
            }
            // GWS ops need the gds bit.
            for addr in [A, 0] {
                let mut w = ds(op, 1, 2, addr, 0, 0, 0);
                w[0] |= 1 << 16;
                p.push(w.to_vec());
            }
        }
        Enc::Flat | Enc::Global | Enc::Scratch => {
            let (seg, off) = match enc {
                Enc::Flat => (0, 0),
                Enc::Scratch => (1, 0x7f),
                _ => (2, 0x7f),
            };
            for glc in [1, 0] {
                for (vd, data) in [(D, B), (D, 0), (0, B), (0, 0)] {
                    p.push(flat(op, seg, glc, A, data, off, vd).to_vec());
                }
            }
        }
        Enc::Mubuf => {
            for (offen, vaddr) in [(1, A), (0, 0)] {
                p.push(mubuf(op, offen, vaddr, D, 2, 10).to_vec());
            }
            p.push(mubuf(op, 0, 0, 0, 0, 0).to_vec());
        }
        Enc::Mtbuf => {
            for (offen, vaddr) in [(1, A), (0, 0)] {
                p.push(mtbuf(op, offen, vaddr, D, 2, 10).to_vec());
            }
        }
        Enc::Mimg => {
            for ssamp in [4, 0] {
                p.push(mimg(op, 0xf, A, D, 2, ssamp).to_vec());
                p.push(mimg(op, 0x1, A, D, 2, ssamp).to_vec());
            }
        }
    }
    p
}
