//! Which instructions the translator takes, and the plan of a run of them.
//!
//! A run is a straight line of lane-wise 32-bit VALU instructions: each lane's result depends
//! only on that lane's sources, no instruction writes EXEC, branches or touches memory. That
//! is what lets the translated code go through the wave four lanes at a time with the whole
//! run in host registers ([`super::lower`]). Everything else (scalar ops, memory, cross-lane
//! and 64-bit ops, modifiers, DPP, SDWA, AGPRs) ends the run and stays with the interpreter.
//!
//! Scalar plumbing stays in the interpreter's own code: before a run the caller reads the
//! uniform sources (SGPRs, constants, literals) and the lane masks (carry-in, `v_cndmask`
//! selector) with the interpreter's operand readers, and after it writes the lane masks the
//! run produced. So a run may not read a scalar register that an earlier instruction of the
//! same run wrote as a lane mask: such an instruction ends the run.
//!
//! Pure: planning needs no wave and no code generator, so it is unit-tested on its own.

use crate::gpu::exec::ops::valu::fp::{Env, Rm};
use crate::isa::{Encoding, Ext, Inst, Op, Operand};

/// A 32-bit source of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// A VGPR, different in each lane.
    Vgpr(u8),
    /// The same value in every lane: index into the run's uniform values.
    Uniform(u8),
}

/// A lane-mask source (carry-in, `v_cndmask` selector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskSrc {
    /// Read before the run: index into the run's input masks.
    Input(u8),
    /// Written by step `n` of this run.
    Step(u16),
}

/// Integer and bitwise operations on two sources (`a`, `b` = sources 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    SubRev,
    And,
    Or,
    Xor,
    /// `b << (a & 31)` (the `rev` shifts take the amount first).
    ShlRev,
    ShrRev,
    SarRev,
    MulLo,
    MulU24,
    MaxU,
    MinU,
    MaxI,
    MinI,
}

/// Integer operations on three sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    Add3,
    /// `(a << (b & 31)) + c`
    LshlAdd,
    /// `(a + b) << (c & 31)`
    AddLshl,
    LshlOr,
    AndOr,
    Or3,
    /// `(a ^ b) + c`
    Xad,
    MadU24,
}

/// The carry ops: `v_add_co`, `v_sub_co`, `v_subrev_co` and their carry-in forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarryOp {
    Add,
    Sub,
    SubRev,
}

/// Comparison conditions, named as in the opcodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    False,
    Lt,
    Eq,
    Le,
    Gt,
    /// Integer `ne`; float `lg` (ordered and not equal).
    NeOrLg,
    Ge,
    True,
    // Float only.
    O,
    U,
    Nge,
    Nlg,
    Ngt,
    Nle,
    /// Float `neq`: unordered or not equal.
    Neq,
    Nlt,
}

/// What one step computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Mov,
    Not,
    Bin(Bin),
    Tri(Tri),
    /// Result to the destination, carry (borrow) out to a lane mask.
    Carry {
        op: CarryOp,
        carry_in: bool,
    },
    /// `mask ? b : a`
    Cndmask,
    CmpInt {
        cond: Cond,
        signed: bool,
    },
    CmpF32(Cond),
    AddF32,
    SubF32,
    SubRevF32,
    MulF32,
    /// Fused `a * b + c`; with `acc` the third input is the destination (`v_fmac`).
    FmaF32 {
        acc: bool,
    },
    CvtF32U32,
    CvtF32I32,
}

/// One instruction of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub kind: Kind,
    /// The VGPR written (none for a compare).
    pub dst: Option<u8>,
    pub src: [Option<Src>; 3],
    pub mask_in: Option<MaskSrc>,
    /// Index into the run's output masks, for compares and carry-outs.
    pub mask_out: Option<u8>,
}

/// A run of translatable instructions starting at one address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub steps: Vec<Step>,
    /// (instruction index in the run, source slot) of each uniform value, in index order.
    pub uniforms: Vec<(u16, u8)>,
    /// The lane-mask operands read before the run, in index order.
    pub masks_in: Vec<Operand>,
    /// The lane-mask operands written after the run, in index order (the last write of each).
    pub masks_out: Vec<Operand>,
    /// Total length in bytes of the run's instructions.
    pub bytes: u32,
    /// One more than the highest VGPR the run names.
    pub vgprs: u16,
    /// Whether a step is an f32 operation (the run depends on MODE's f32 controls).
    pub uses_f32: bool,
}

/// Runs no longer than this: the translated code grows with the run, and longer straight
/// lines are rare in compiled kernels.
pub const MAX_STEPS: usize = 96;
/// Most uniform values and lane masks (each way) a run has: the sizes of the arrays the
/// caller passes.
pub const MAX_UNIFORMS: usize = 64;
pub const MAX_MASKS: usize = 8;

/// Builds the plan of the longest run at the head of `insts` (the decoded instructions that
/// follow each other from the run's address). `mode` is the wave's MODE register: f32
/// arithmetic is taken only under round-to-nearest-even, the translated rounding.
pub fn plan(insts: &[Inst], mode: u32) -> Plan {
    let mut p = Plan::default();
    // Scalar registers (32-bit halves) written as lane masks so far, by operand.
    let mut written: Vec<(Operand, u16)> = Vec::new();
    for inst in insts.iter().take(MAX_STEPS) {
        let Some(step) = step(inst, mode, &mut p, &written) else { break };
        let index = p.steps.len() as u16;
        if let (Some(slot), Some(op)) = (step.mask_out, mask_dst(inst)) {
            written.retain(|(o, _)| *o != op);
            written.push((op, index));
            if slot as usize == p.masks_out.len() {
                p.masks_out.push(op);
            }
        }
        p.uses_f32 |= is_f32(step.kind);
        p.bytes += inst.len as u32;
        p.steps.push(step);
    }
    p
}

fn is_f32(k: Kind) -> bool {
    matches!(
        k,
        Kind::CmpF32(_)
            | Kind::AddF32
            | Kind::SubF32
            | Kind::SubRevF32
            | Kind::MulF32
            | Kind::FmaF32 { .. }
            | Kind::CvtF32U32
            | Kind::CvtF32I32
    )
}

/// The step for `inst`, registering its uniform sources and masks in `p`; `None` (and `p`
/// unchanged) if the instruction ends the run.
fn step(inst: &Inst, mode: u32, p: &mut Plan, written: &[(Operand, u16)]) -> Option<Step> {
    if !plain(inst) {
        return None;
    }
    let kind = kind(inst.op)?;
    if is_f32(kind) && (Env::new(mode).rm32() != Rm::Ne || mode & crate::gpu::exec::vector_modes::MODE_BITS != 0) {
        return None;
    }
    let arity = match kind {
        Kind::Mov | Kind::Not | Kind::CvtF32U32 | Kind::CvtF32I32 => 1,
        Kind::Tri(_) | Kind::FmaF32 { acc: false } => 3,
        _ => 2,
    };
    let dst = match kind {
        Kind::CmpInt { .. } | Kind::CmpF32(_) => None,
        _ => match inst.dst[0] {
            Operand::Vgpr(n) => Some(n),
            _ => return None,
        },
    };
    // Sources: VGPRs, or uniform values no lane mask of this run has overwritten.
    let index = p.steps.len() as u16;
    let mut uniforms = Vec::new();
    let mut src = [None; 3];
    let mut vgprs = dst.map_or(0, |d| d as u16 + 1);
    for (i, s) in src.iter_mut().enumerate().take(arity) {
        *s = Some(match inst.src[i] {
            Operand::Vgpr(n) => {
                vgprs = vgprs.max(n as u16 + 1);
                Src::Vgpr(n)
            }
            op @ (Operand::Sgpr(_) | Operand::M0 | Operand::ExecLo | Operand::ExecHi) => {
                if written.iter().any(|(w, _)| overlaps(*w, op, 1)) {
                    return None;
                }
                uniforms.push((index, i as u8));
                Src::Uniform((p.uniforms.len() + uniforms.len() - 1) as u8)
            }
            Operand::Int(_) | Operand::Float(_) | Operand::Literal => {
                uniforms.push((index, i as u8));
                Src::Uniform((p.uniforms.len() + uniforms.len() - 1) as u8)
            }
            _ => return None,
        });
    }
    // The lane mask read: VCC or an SGPR pair, from this run or from before it.
    let needs_mask = matches!(kind, Kind::Cndmask | Kind::Carry { carry_in: true, .. });
    let mut new_mask_in = None;
    let mask_in = if needs_mask {
        let op = inst.src[2];
        if !matches!(op, Operand::VccLo | Operand::Sgpr(_)) {
            return None;
        }
        if let Some((_, n)) = written.iter().rev().find(|(w, _)| *w == op) {
            Some(MaskSrc::Step(*n))
        } else if written.iter().any(|(w, _)| overlaps(*w, op, 2)) {
            return None;
        } else {
            let at = p.masks_in.iter().position(|m| *m == op).unwrap_or_else(|| {
                new_mask_in = Some(op);
                p.masks_in.len()
            });
            Some(MaskSrc::Input(at as u8))
        }
    } else {
        None
    };
    // The lane mask written: compares and carry-outs.
    let writes_mask = matches!(kind, Kind::CmpInt { .. } | Kind::CmpF32(_) | Kind::Carry { .. });
    let mask_out = if writes_mask {
        let op = mask_dst(inst)?;
        if !matches!(op, Operand::VccLo | Operand::Sgpr(_)) || matches!(op, Operand::Sgpr(n) if n % 2 != 0) {
            return None;
        }
        Some(p.masks_out.iter().position(|m| *m == op).unwrap_or(p.masks_out.len()) as u8)
    } else {
        None
    };
    if p.uniforms.len() + uniforms.len() > MAX_UNIFORMS
        || p.masks_in.len() + new_mask_in.is_some() as usize > MAX_MASKS
        || mask_out.is_some_and(|m| m as usize >= MAX_MASKS)
    {
        return None;
    }
    // Commit.
    p.uniforms.extend(uniforms);
    if let Some(op) = new_mask_in {
        p.masks_in.push(op);
    }
    p.vgprs = p.vgprs.max(vgprs);
    Some(Step { kind, dst, src, mask_in, mask_out })
}

/// The lane-mask destination of a compare or carry op.
fn mask_dst(inst: &Inst) -> Option<Operand> {
    match inst.enc {
        // VOPC e32 writes VCC; its dst[0] says so too.
        Encoding::Vopc | Encoding::Vop3 if inst.dst[1] == Operand::None => Some(inst.dst[0]),
        _ if inst.dst[1] != Operand::None => Some(inst.dst[1]),
        _ => None,
    }
}

/// Whether a 64-bit lane mask written at `w` covers any part of the register read at `r`,
/// `dwords` (1 or 2) wide.
fn overlaps(w: Operand, r: Operand, dwords: u16) -> bool {
    let first = |o: Operand| -> Option<u16> {
        match o {
            Operand::Sgpr(n) => Some(n as u16),
            Operand::VccLo => Some(1000),
            Operand::VccHi => Some(1001),
            _ => None,
        }
    };
    match (first(w), first(r)) {
        (Some(w0), Some(r0)) => r0 <= w0 + 1 && w0 < r0 + dwords,
        _ => false,
    }
}

/// Whether `inst` has no modifier, DPP or SDWA that changes its sources or result.
fn plain(inst: &Inst) -> bool {
    let vector = matches!(inst.enc, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3);
    vector
        && match inst.ext {
            Ext::None => true,
            Ext::Vop3(m) => m.abs == 0 && m.neg == 0 && m.op_sel == 0 && !m.clamp && m.omod == 0,
            _ => false,
        }
}

/// The step kind of `op`, if it is one the translator takes.
pub fn kind(op: Op) -> Option<Kind> {
    use Bin as B;
    Some(match op {
        Op::VMovB32 => Kind::Mov,
        Op::VNotB32 => Kind::Not,
        Op::VAddU32 => Kind::Bin(B::Add),
        Op::VSubU32 => Kind::Bin(B::Sub),
        Op::VSubrevU32 => Kind::Bin(B::SubRev),
        Op::VAndB32 => Kind::Bin(B::And),
        Op::VOrB32 => Kind::Bin(B::Or),
        Op::VXorB32 => Kind::Bin(B::Xor),
        Op::VLshlrevB32 => Kind::Bin(B::ShlRev),
        Op::VLshrrevB32 => Kind::Bin(B::ShrRev),
        Op::VAshrrevI32 => Kind::Bin(B::SarRev),
        Op::VMulLoU32 => Kind::Bin(B::MulLo),
        Op::VMulU32U24 => Kind::Bin(B::MulU24),
        Op::VMaxU32 => Kind::Bin(B::MaxU),
        Op::VMinU32 => Kind::Bin(B::MinU),
        Op::VMaxI32 => Kind::Bin(B::MaxI),
        Op::VMinI32 => Kind::Bin(B::MinI),
        Op::VAdd3U32 => Kind::Tri(Tri::Add3),
        Op::VLshlAddU32 => Kind::Tri(Tri::LshlAdd),
        Op::VAddLshlU32 => Kind::Tri(Tri::AddLshl),
        Op::VLshlOrB32 => Kind::Tri(Tri::LshlOr),
        Op::VAndOrB32 => Kind::Tri(Tri::AndOr),
        Op::VOr3B32 => Kind::Tri(Tri::Or3),
        Op::VXadU32 => Kind::Tri(Tri::Xad),
        Op::VMadU32U24 => Kind::Tri(Tri::MadU24),
        Op::VAddCoU32 => Kind::Carry { op: CarryOp::Add, carry_in: false },
        Op::VSubCoU32 => Kind::Carry { op: CarryOp::Sub, carry_in: false },
        Op::VSubrevCoU32 => Kind::Carry { op: CarryOp::SubRev, carry_in: false },
        Op::VAddcCoU32 => Kind::Carry { op: CarryOp::Add, carry_in: true },
        Op::VSubbCoU32 => Kind::Carry { op: CarryOp::Sub, carry_in: true },
        Op::VSubbrevCoU32 => Kind::Carry { op: CarryOp::SubRev, carry_in: true },
        Op::VCndmaskB32 => Kind::Cndmask,
        Op::VAddF32 => Kind::AddF32,
        Op::VSubF32 => Kind::SubF32,
        Op::VSubrevF32 => Kind::SubRevF32,
        Op::VMulF32 => Kind::MulF32,
        Op::VFmaF32 | Op::VFmamkF32 | Op::VFmaakF32 => Kind::FmaF32 { acc: false },
        Op::VFmacF32 => Kind::FmaF32 { acc: true },
        Op::VCvtF32U32 => Kind::CvtF32U32,
        Op::VCvtF32I32 => Kind::CvtF32I32,
        _ => return compare(op.name()),
    })
}

/// `v_cmp_<cond>_<type>` (not `v_cmpx`, which writes EXEC, nor `v_cmp_class`).
fn compare(name: &str) -> Option<Kind> {
    let rest = name.strip_prefix("v_cmp_")?;
    let (cond, ty) = rest.rsplit_once('_')?;
    let int = |c: &str| -> Option<Cond> {
        Some(match c {
            "f" => Cond::False,
            "lt" => Cond::Lt,
            "eq" => Cond::Eq,
            "le" => Cond::Le,
            "gt" => Cond::Gt,
            "ne" => Cond::NeOrLg,
            "ge" => Cond::Ge,
            "t" => Cond::True,
            _ => return None,
        })
    };
    let float = |c: &str| -> Option<Cond> {
        Some(match c {
            "f" => Cond::False,
            "lt" => Cond::Lt,
            "eq" => Cond::Eq,
            "le" => Cond::Le,
            "gt" => Cond::Gt,
            "lg" => Cond::NeOrLg,
            "ge" => Cond::Ge,
            "o" => Cond::O,
            "u" => Cond::U,
            "nge" => Cond::Nge,
            "nlg" => Cond::Nlg,
            "ngt" => Cond::Ngt,
            "nle" => Cond::Nle,
            "neq" => Cond::Neq,
            "nlt" => Cond::Nlt,
            "tru" => Cond::True,
            _ => return None,
        })
    };
    match ty {
        "u32" => Some(Kind::CmpInt { cond: int(cond)?, signed: false }),
        "i32" => Some(Kind::CmpInt { cond: int(cond)?, signed: true }),
        "f32" => Some(Kind::CmpF32(float(cond)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{decode, Target};

    /// Encodings by llvm-mc-15 (gfx90a).
    const ADD_CO: [u32; 1] = [0x3200_0000]; // v_add_co_u32_e32 v0, vcc, s0, v0
    const ADDC: [u32; 1] = [0x3802_0303]; // v_addc_co_u32_e32 v1, vcc, v3, v1, vcc
    const CMP_S4: [u32; 2] = [0xd0c9_0004, 0x0002_0300]; // v_cmp_lt_u32_e64 s[4:5], v0, v1
    const CNDMASK_S4: [u32; 2] = [0xd100_0002, 0x0012_0300]; // v_cndmask_b32_e64 v2, v0, v1, s[4:5]
    const ADD_S4: [u32; 1] = [0x6806_0604]; // v_add_u32_e32 v3, s4, v3
    const FMA: [u32; 2] = [0xd1cb_0001, 0x040a_0b01]; // v_fma_f32 v1, v1, v5, v2
    const S_ADD: [u32; 1] = [0x8103_8103]; // s_add_i32 s3, s3, 1

    fn insts(words: &[&[u32]]) -> Vec<Inst> {
        words.iter().map(|w| decode(w, Target::Gfx90a).expect("decodes")).collect()
    }

    #[test]
    fn a_carry_chain_reads_its_carry_from_the_run_and_writes_vcc_once() {
        let p = plan(&insts(&[&ADD_CO, &ADDC]), 0xf0);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[0].src[0], Some(Src::Uniform(0)));
        assert_eq!(p.steps[1].mask_in, Some(MaskSrc::Step(0)));
        assert_eq!(p.masks_out, vec![Operand::VccLo]);
        assert!(p.masks_in.is_empty());
        assert_eq!((p.bytes, p.vgprs), (8, 4));
    }

    #[test]
    fn a_mask_written_by_the_run_ends_it_where_it_is_read_as_a_uniform_value() {
        let p = plan(&insts(&[&CMP_S4, &CNDMASK_S4, &ADD_S4]), 0xf0);
        assert_eq!(p.steps.len(), 2, "v_add_u32 reads s4, which the compare wrote");
        assert_eq!(p.steps[1].mask_in, Some(MaskSrc::Step(0)));
        assert_eq!(p.masks_out, vec![Operand::Sgpr(4)]);
    }

    #[test]
    fn scalar_code_ends_a_run_and_f32_code_needs_round_to_nearest() {
        let p = plan(&insts(&[&FMA, &S_ADD, &FMA]), 0xf0);
        assert_eq!(p.steps.len(), 1);
        assert!(p.uses_f32);
        // Round toward zero: the translated host arithmetic rounds to nearest.
        assert!(plan(&insts(&[&FMA]), 0xf3).steps.is_empty());
        // Integer code does not depend on MODE.
        assert_eq!(plan(&insts(&[&ADD_CO, &ADDC]), 0xf3).steps.len(), 2);
    }
}
