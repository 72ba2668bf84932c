//! Which instructions the translator takes, and the plan of a run of them.
//!
//! A run is a straight line of code that ends before the first instruction the translator
//! does not take, or after a branch. It is a sequence of items:
//! - **vector segments**: lane-wise VALU instructions (each lane's result depends only on
//!   that lane's sources; no EXEC writes, memory, cross-lane ops, modifiers, DPP, SDWA or
//!   AGPRs). The translated code goes through the wave four lanes at a time with the
//!   whole segment in host registers ([`super::lower`]). The 64-bit shifts by a constant
//!   (address arithmetic) are steps too, on register pairs;
//! - **compiled scalar ops**: the common scalar ALU instructions ([`scalar_op`]);
//! - **memory accesses**: global, FLAT and LDS loads and stores of whole dwords, LDS's
//!   two-address forms too ([`MemOp`]),
//!   compiled for a whole wave at one address or at consecutive elements of one mapping, the
//!   interpreter's handler for every other case;
//! - **interpreted instructions**: everything else that does not change MODE, VGPR indexing
//!   or the PC other than as a branch (other scalar code and memory, LDS, MFMA, the vector
//!   ops the translator does not compile), which the translated code hands to the
//!   interpreter's own handler, so their semantics exist once. `s_nop` and `s_waitcnt` need
//!   no code (memory is synchronous here). A branch (or `s_endpgm`) ends the run.
//!
//! A segment reads its uniform sources (SGPRs, M0, EXEC halves) and lane masks (carry-in,
//! `v_cndmask` selector) from the wave when it starts, and writes the lane masks it produces
//! when it ends. So an instruction that reads, as a uniform value, a register an earlier
//! instruction of its segment wrote as a lane mask starts a new segment.
//!
//! Pure: planning needs no wave and no code generator, so it is unit-tested on its own.

use crate::gpu::exec::ops::valu::fp::{Env, Rm};
use crate::isa::{Encoding, Ext, Inst, Op, Operand};

/// A 32-bit source of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    /// A VGPR, different in each lane.
    Vgpr(u8),
    /// The same value in every lane: index into the segment's uniform values.
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
    /// The high 32 bits of the unsigned 64-bit product (division by a constant).
    MulHiU,
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
    /// `(a & b) | (!a & c)`
    Bfi,
    /// `(a:b) >> (c & 31)`, the low 32 bits (rotates).
    Alignbit,
    /// `(a >> (b & 31)) & ((1 << (c & 31)) - 1)`
    BfeU,
    /// The field of `BfeU` sign-extended from its top bit; 0 for a width of 0.
    BfeI,
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
    /// `v_cmp_<cond>_f64` of register pairs (as [`Kind::F64`] reads them, abs/neg applied);
    /// taken where MODE keeps f64 input denormals.
    CmpF64 {
        cond: Cond,
        abs: u8,
        neg: u8,
    },
    AddF32,
    SubF32,
    SubRevF32,
    MulF32,
    /// Fused `a * b + c`; with `acc` the third input is the destination (`v_fmac`).
    FmaF32 {
        acc: bool,
    },
    /// `v_max_f32` (`max`) or `v_min_f32`, with the interpreter's NaN and signed-zero rules.
    MinMaxF32 {
        max: bool,
    },
    CvtF32U32,
    CvtF32I32,
    /// `v_rcp_f32` as the interpreter computes it: denormal inputs and results flushed
    /// whatever MODE says, the quotient correctly rounded (host f32 division: the
    /// interpreter's f64 quotient rounded to f32 is the same number).
    RcpF32,
    /// `v_cvt_i32_f32` (`signed`) or `v_cvt_u32_f32`: truncated toward zero, saturated at
    /// the integer type's ends, a NaN giving 0 (a denormal truncates to 0 flushed or not).
    CvtIntF32 {
        signed: bool,
    },
    /// `v_max3_f32` (`max`) or `v_min3_f32`: [`Kind::MinMaxF32`] of the first two sources,
    /// then of that and the third, as the interpreter composes them.
    MinMax3F32 {
        max: bool,
    },
    /// `v_trunc_f32` (`trunc`) or `v_rndne_f32`: inputs flushed per MODE, a NaN quieted.
    RoundF32 {
        trunc: bool,
    },
    /// Byte `n` (0..3) of the source as an f32 (exact).
    CvtF32Ubyte(u8),
    /// `v_cvt_f16_f32`: the source (input denormals flushed per MODE) rounded to f16, ties to
    /// even, in the low half and the high half zero, as the interpreter writes it; a NaN
    /// quieted with its top ten mantissa bits. Taken where MODE rounds f16 results to nearest
    /// even and keeps f16 output denormals (HIP's default).
    CvtF16F32,
    /// `v_pack_b32_f16` without modifiers: source 0's low half in the low half, source 1's
    /// low half in the high half (bits moved; nothing rounded or flushed).
    PackB32F16,
    /// The f64 division helpers on three register pairs into a VGPR pair:
    /// `v_div_scale_f64` (its lane mask to `mask_out`), `v_div_fmas_f64` (VCC read as
    /// `mask_in`), `v_div_fixup_f64`. Taken where MODE keeps f64 denormals and rounds to
    /// nearest even; the translated code decides the common case itself and hands the other
    /// lanes to the interpreter's per-lane functions.
    DivF64(DivOp),
    /// The f32 division helpers on three VGPRs or uniform values, without modifiers:
    /// `v_div_scale_f32` (its lane mask to `mask_out`), `v_div_fmas_f32` (VCC read as
    /// `mask_in`), `v_div_fixup_f32`. The translated code decides the common cases (the
    /// interpreter's fast-path bounds on the exponent fields, zeros, infinite denominators;
    /// for `v_div_fmas_f32`, lanes without their VCC bit or with a NaN input: `v_fma_f32`)
    /// and hands the other chunks to the interpreter's per-lane functions. HIP's correctly
    /// rounded f32 division is these around an FMA sequence.
    DivF32(DivOp),
    /// `v_ldexp_f64`: source 0 a register pair (its sign-bit modifiers applied), source 1 a
    /// 32-bit exponent, into a VGPR pair. Taken where MODE keeps f64 denormals and rounds to
    /// nearest even; the translated code scales normal results and zeros itself and hands
    /// the other chunks (denormals, infinities, NaNs, results out of the normal range) to
    /// the interpreter's per-lane function.
    LdexpF64 {
        abs: bool,
        neg: bool,
    },
    /// `v_cvt_f64_u32` / `v_cvt_f64_i32`: a 32-bit source into a VGPR pair (exact).
    CvtF64 {
        signed: bool,
    },
    /// `v_pk_mov_b32` of VGPR pairs: the destination's low dword is source 0's high
    /// (`hi0`) or low dword, its high dword source 1's high (`hi1`) or low dword.
    PkMov {
        hi0: bool,
        hi1: bool,
    },
    /// An f64 op (`v_add_f64`, `v_mul_f64`, `v_fma_f64`, `v_fmac_f64` with `acc`: the third
    /// input is the destination, `v_rcp_f64`) on register pairs: each source a VGPR pair or
    /// two uniform values (an SGPR pair, or a constant's low and high dwords), with the
    /// sign-bit modifiers of bit `i` of `abs` and `neg` applied to source `i` (abs first, as
    /// the interpreter does). Taken only where MODE keeps f64 denormals and rounds to nearest
    /// even, what host arithmetic does.
    F64 {
        op: FloatOp,
        acc: bool,
        abs: u8,
        neg: u8,
    },
    /// A packed-f32 op (`v_pk_fma_f32`, `v_pk_add_f32`, `v_pk_mul_f32`) on register pairs:
    /// source `i` is a VGPR pair or two uniform values (an SGPR pair, or a constant twice),
    /// bit `i` of `sel`/`sel_hi` picks its high dword for the low/high result, bit `i` of
    /// `neg_lo`/`neg_hi` negates it there.
    PkF32 {
        op: FloatOp,
        sel: u8,
        sel_hi: u8,
        neg_lo: u8,
        neg_hi: u8,
    },
    /// `v_mad_u64_u32` without clamp: two 32-bit factors and a 64-bit addend (a register
    /// pair: a VGPR pair, an SGPR pair or a constant) into a VGPR pair, the carry out of
    /// the sum to a lane mask. The address arithmetic of compiled code (`base + i * size`
    /// with a 64-bit base), and HIP's fill kernels.
    MadU64U32,
    /// A 64-bit shift (`v_lshlrev_b64`, `v_lshrrev_b64`, `v_ashrrev_i64`) of the VGPR pair
    /// at source 1 by a constant `amount` (already `& 63`), into a VGPR pair: address
    /// arithmetic.
    Shift64 {
        op: Shift64,
        amount: u8,
    },
}

/// The packed-f32 and f64 operations (the f32 ones have kinds of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Mul,
    Fma,
    /// `1 / a`, correctly rounded (f64 only: `v_rcp_f64` as the interpreter computes it).
    Rcp,
}

impl FloatOp {
    /// How many sources it reads.
    pub fn arity(self) -> usize {
        match self {
            FloatOp::Rcp => 1,
            FloatOp::Add | FloatOp::Mul => 2,
            FloatOp::Fma => 3,
        }
    }
}

/// The division helpers ([`Kind::DivF64`], [`Kind::DivF32`]); [`LaneFn`] numbers them for
/// `jit::f64_lanes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DivOp {
    Scale,
    Fmas,
    Fixup,
}

/// What the per-lane helper of translated code (`jit::f64_lanes`) computes for a chunk its
/// fast test did not clear, numbered as the helper takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneFn {
    DivScale = 0,
    DivFmas = 1,
    DivFixup = 2,
    Ldexp = 3,
    /// The f32 helpers: each lane's value in the low dword of its 64-bit word.
    DivScale32 = 4,
    DivFmas32 = 5,
    DivFixup32 = 6,
}

impl LaneFn {
    /// The per-lane function of the f32 division helper `op`.
    pub fn div32(op: DivOp) -> Self {
        match op {
            DivOp::Scale => LaneFn::DivScale32,
            DivOp::Fmas => LaneFn::DivFmas32,
            DivOp::Fixup => LaneFn::DivFixup32,
        }
    }
}

impl From<DivOp> for LaneFn {
    fn from(op: DivOp) -> Self {
        match op {
            DivOp::Scale => LaneFn::DivScale,
            DivOp::Fmas => LaneFn::DivFmas,
            DivOp::Fixup => LaneFn::DivFixup,
        }
    }
}

/// The 64-bit shifts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shift64 {
    Shl,
    Shr,
    Sar,
}

/// One vector instruction of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub kind: Kind,
    /// The VGPR written (none for a compare).
    pub dst: Option<u8>,
    pub src: [Option<Src>; 3],
    pub mask_in: Option<MaskSrc>,
    /// Index into the segment's output masks, for compares and carry-outs.
    pub mask_out: Option<u8>,
    /// VOP3 abs and neg of an f32 step's sources (bit `i` for source `i`), applied to the
    /// lanes it reads as the interpreter applies them: `v_fma_f32 v, -v, v, v` is in every
    /// f32 division, `|x|` in every maximum of magnitudes.
    pub sign: Sign,
}

/// Sign-bit modifiers of a step's 32-bit sources: bit `i` of `abs` clears source `i`'s sign,
/// then bit `i` of `neg` flips it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sign {
    pub abs: u8,
    pub neg: u8,
}

impl Sign {
    pub const NONE: Sign = Sign { abs: 0, neg: 0 };
}

/// Where a uniform source's value comes from when its segment starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uniform {
    /// A constant or literal, resolved at translation.
    Const(u32),
    Sgpr(u8),
    M0,
    ExecLo,
    ExecHi,
}

/// A lane-mask register: VCC or an aligned SGPR pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskReg {
    Vcc,
    Sgpr(u8),
}

/// Lane-wise vector instructions run four lanes at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segment {
    pub steps: Vec<Step>,
    pub uniforms: Vec<Uniform>,
    /// The lane masks read when the segment starts.
    pub masks_in: Vec<MaskReg>,
    /// The lane masks written when it ends (the last write of each).
    pub masks_out: Vec<MaskReg>,
    /// Whether each of `masks_out` may be read later: false where the run itself writes the
    /// register again before anything can read it ([`mark_unread_masks`]). Such a mask is
    /// neither computed nor stored.
    pub masks_read_later: Vec<bool>,
}

/// One item of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Vector(Segment),
    /// A scalar ALU instruction compiled in.
    Scalar(ScalarOp),
    /// An instruction run by the interpreter's handler: its index in the run and its offset
    /// in bytes from the run's start.
    Interpreted {
        index: u16,
        offset: u32,
    },
    /// A global or FLAT load or store of whole dwords, compiled for the common case (see
    /// [`MemOp`]); any other case goes to the interpreter's handler as an interpreted
    /// instruction would (`index`, `offset`).
    Memory {
        op: MemOp,
        index: u16,
        offset: u32,
    },
    /// A conditional or unconditional branch ending the run, its condition compiled: not
    /// taken, the run ends; taken back to the run's start (`back`), the code loops while the
    /// caller's budget lasts; any other taken branch stops the run with a jump to `target`
    /// (bytes from the run's start, wrapping), as the handler of the instruction (`index`,
    /// `offset`) answers it.
    Branch {
        cond: BranchCond,
        back: bool,
        index: u16,
        offset: u32,
        target: u64,
    },
    /// A scalar load from global memory (`s_load_dword*`), compiled when its dwords lie in
    /// one mapping; the interpreter's handler otherwise (`index`, `offset`).
    ScalarLoad {
        op: ScalarLoad,
        index: u16,
        offset: u32,
    },
}

/// `ds_read_b32..b128` and `ds_write_b32..b128` on the LDS (not the GDS), and the
/// two-address `ds_read2*`/`ds_write2*` of one or two dwords (`offset0`/`offset1` in units of
/// the element, or of 64 elements for `st64`).
fn lds_op(inst: &Inst) -> Option<MemOp> {
    let Ext::Ds(d) = inst.ext else { return None };
    // (store, dwords, two addresses with this many elements per offset unit)
    let (store, dwords, pair) = match inst.op {
        Op::DsReadB32 => (false, 1, None),
        Op::DsReadB64 => (false, 2, None),
        Op::DsReadB96 => (false, 3, None),
        Op::DsReadB128 => (false, 4, None),
        Op::DsWriteB32 => (true, 1, None),
        Op::DsWriteB64 => (true, 2, None),
        Op::DsWriteB96 => (true, 3, None),
        Op::DsWriteB128 => (true, 4, None),
        Op::DsRead2B32 => (false, 1, Some(1)),
        Op::DsRead2st64B32 => (false, 1, Some(64)),
        Op::DsRead2B64 => (false, 2, Some(1)),
        Op::DsRead2st64B64 => (false, 2, Some(64)),
        Op::DsWrite2B32 => (true, 1, Some(1)),
        Op::DsWrite2st64B32 => (true, 1, Some(64)),
        Op::DsWrite2B64 => (true, 2, Some(1)),
        Op::DsWrite2st64B64 => (true, 2, Some(64)),
        _ => return None,
    };
    let data = if store { inst.src[1] } else { inst.dst[0] };
    let (Operand::Vgpr(data), Operand::Vgpr(v), false) = (data, inst.src[0], d.gds) else { return None };
    let Some(elements) = pair else {
        return Some(MemOp {
            store,
            dwords,
            addr: MemAddr::Lds(v),
            offset: d.offset() as i64,
            data,
            flat: false,
            second: None,
        });
    };
    let unit = 4 * dwords as i64 * elements;
    // A read's two results are consecutive registers; a write names its second data.
    let data2 = if store {
        let Operand::Vgpr(data2) = inst.src[2] else { return None };
        data2
    } else {
        u8::try_from(data as u16 + dwords as u16).ok()?
    };
    if data2 as u16 + dwords as u16 > 256 {
        return None;
    }
    Some(MemOp {
        store,
        dwords,
        addr: MemAddr::Lds(v),
        offset: d.offset0 as i64 * unit,
        data,
        flat: false,
        second: Some(Second { offset: d.offset1 as i64 * unit, data: data2 }),
    })
}

/// When a compiled branch is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchCond {
    Always,
    SccZero,
    SccSet,
    VccZero,
    VccSet,
    ExecZero,
    ExecSet,
}

/// The condition of a branch the translated code decides itself.
fn branch_cond(op: Op) -> Option<BranchCond> {
    Some(match op {
        Op::SBranch => BranchCond::Always,
        Op::SCbranchScc0 => BranchCond::SccZero,
        Op::SCbranchScc1 => BranchCond::SccSet,
        Op::SCbranchVccz => BranchCond::VccZero,
        Op::SCbranchVccnz => BranchCond::VccSet,
        Op::SCbranchExecz => BranchCond::ExecZero,
        Op::SCbranchExecnz => BranchCond::ExecSet,
        _ => return None,
    })
}

/// `s_load_dword{,x2,x4,x8,x16}`: `dwords` SGPRs from `sbase + offset (+ soffset)`, the two
/// low address bits ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarLoad {
    pub dst: u8,
    pub dwords: u8,
    pub sbase: u8,
    pub offset: i64,
    pub soffset: Option<u8>,
}

/// The compiled form of a scalar load into SGPRs with SGPR operands.
pub fn scalar_load(inst: &Inst) -> Option<ScalarLoad> {
    if !matches!(inst.op, Op::SLoadDword | Op::SLoadDwordx2 | Op::SLoadDwordx4 | Op::SLoadDwordx8 | Op::SLoadDwordx16) {
        return None;
    }
    let Ext::Smem(m) = inst.ext else { return None };
    let dwords = inst.dst_regs(0);
    let sgprs = crate::gpu::exec::wave::SGPRS;
    let (Operand::Sgpr(dst), Operand::Sgpr(sbase)) = (inst.dst[0], inst.src[0]) else { return None };
    if dst as usize + dwords as usize > sgprs || sbase as usize + 2 > sgprs {
        return None;
    }
    let soffset = match m.soffset {
        Operand::None => None,
        Operand::Sgpr(n) if (n as usize) < sgprs => Some(n),
        _ => return None,
    };
    let offset = if m.has_imm { m.offset as i64 } else { 0 };
    Some(ScalarLoad { dst, dwords, sbase, offset, soffset })
}

/// A global, FLAT or LDS load or store of 1 to 4 dwords per lane. The translated code takes it
/// itself when the whole wave is active and its lanes address one place (a uniform address)
/// or consecutive elements (lane `l` at the first lane's address plus `l` times the access
/// size: `a[threadIdx.x]`) inside one mapping, which one call of the wave's translation
/// cache checks. Every other case — lanes off, other address patterns, a range that
/// crosses a mapping, LDS or private apertures, faults — is the interpreter's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemOp {
    pub store: bool,
    pub dwords: u8,
    pub addr: MemAddr,
    /// The instruction's signed byte offset.
    pub offset: i64,
    /// The first VGPR loaded or stored.
    pub data: u8,
    /// FLAT: the address range must miss the LDS and private apertures.
    pub flat: bool,
    /// `ds_read2*`/`ds_write2*`: the second access of each lane, made after the first.
    pub second: Option<Second>,
}

/// The second access of a two-address LDS instruction: `dwords` at the lane's address plus
/// `offset`, into or from VGPRs from `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Second {
    pub offset: i64,
    pub data: u8,
}

/// How a memory instruction's lane addresses are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemAddr {
    /// A 64-bit address in a VGPR pair (low half in the first).
    Pair(u8),
    /// An SGPR pair base plus a 32-bit VGPR offset (GLOBAL with `saddr`).
    Sbase { sgpr: u8, voffset: u8 },
    /// A byte address in the workgroup's LDS, in a VGPR (DS).
    Lds(u8),
}

impl MemOp {
    /// One more than the highest VGPR it names.
    fn vgprs(&self) -> u16 {
        let addr = match self.addr {
            MemAddr::Pair(v) => v as u16 + 2,
            MemAddr::Sbase { voffset: v, .. } | MemAddr::Lds(v) => v as u16 + 1,
        };
        let second = self.second.map_or(0, |s| s.data as u16 + self.dwords as u16);
        addr.max(self.data as u16 + self.dwords as u16).max(second)
    }
}

/// The compiled form of a global, FLAT or LDS access of whole dwords with VGPR data.
pub fn mem_op(inst: &Inst) -> Option<MemOp> {
    use crate::gpu::exec::ops::vmem::{self, Kind as VKind};
    if inst.enc == Encoding::Ds {
        return lds_op(inst);
    }
    if !matches!(inst.enc, Encoding::Global | Encoding::Flat) {
        return None;
    }
    let Ext::Flat(f) = inst.ext else { return None };
    let (store, bytes, data) = match vmem::kind(inst.op)? {
        VKind::Load(ld) if ld.bytes >= 4 && !f.lds => (false, ld.bytes, inst.dst[0]),
        VKind::Store(st) if st.bytes >= 4 => (true, st.bytes, inst.src[1]),
        _ => return None,
    };
    let Operand::Vgpr(data) = data else { return None };
    let Operand::Vgpr(v) = inst.src[0] else { return None };
    let addr = match (inst.enc, inst.src[2]) {
        (Encoding::Global, Operand::Sgpr(s)) if (s as usize) < crate::gpu::exec::wave::SGPRS - 1 => {
            MemAddr::Sbase { sgpr: s, voffset: v }
        }
        (Encoding::Global, op) if !op.is_none() => return None,
        _ => MemAddr::Pair(v),
    };
    Some(MemOp {
        store,
        dwords: bytes / 4,
        addr,
        offset: f.offset as i64,
        data,
        flat: inst.enc == Encoding::Flat,
        second: None,
    })
}

/// A scalar register the compiled scalar ops read and write (32-bit halves named).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SReg {
    Sgpr(u8),
    VccLo,
    VccHi,
    ExecLo,
    ExecHi,
    M0,
}

/// A scalar source: a register (32 or 64 bits from there), a constant, or SCC (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SVal {
    Reg(SReg),
    Const(u64),
    Scc,
}

/// What a compiled scalar op computes (SCC as the interpreter's handler sets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SKind {
    /// No SCC.
    Mov,
    /// SCC: the carry (unsigned) or the signed overflow.
    Add {
        signed: bool,
    },
    /// SCC: the borrow (unsigned) or the signed overflow.
    Sub {
        signed: bool,
    },
    /// SCC: the result is not zero.
    And,
    Or,
    Xor,
    Andn2,
    /// By `b & 31`; SCC: the result is not zero.
    Lshl,
    Lshr,
    Ashr,
    /// No SCC.
    Mul,
    /// SCC only.
    Cmp {
        cond: Cond,
        signed: bool,
    },
    /// SCC: whether the first source was chosen (`a < b` for the minimum, `a >= b` for the
    /// maximum).
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    /// `a + b + SCC` and `a - b - SCC`; SCC: the carry or borrow.
    AddCarry,
    SubBorrow,
    /// `(a << n) + b`; SCC: the carry out of bit 31.
    ShlAdd(u8),
    /// SCC only: whether bit `b & 31` of `a` is `set` (`s_bitcmp0/1_b32`).
    BitCmp {
        set: bool,
    },
    /// `SCC ? a : b`; no SCC.
    Cselect,
    /// The destination gets EXEC; EXEC becomes `f(a, EXEC)`; SCC: EXEC is not zero.
    Saveexec(SaveexecOp),
}

/// The EXEC update of a `s_*_saveexec_b64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveexecOp {
    And,
    Or,
    Xor,
    Andn2,
}

/// A scalar ALU instruction the translated code runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarOp {
    pub kind: SKind,
    /// 64-bit operands and result (the `_b64` logic ops and `s_mov_b64`).
    pub wide: bool,
    /// `None`: the result is discarded (`null`), or the op has none (compares).
    pub dst: Option<SReg>,
    pub a: SVal,
    pub b: SVal,
}

/// The compiled form of a scalar instruction, if it is one of the common ALU ops with plain
/// register or constant operands.
pub fn scalar_op(inst: &Inst) -> Option<ScalarOp> {
    use SKind as K;
    let wide = matches!(
        inst.op,
        Op::SMovB64
            | Op::SAndB64
            | Op::SOrB64
            | Op::SXorB64
            | Op::SAndn2B64
            | Op::SCselectB64
            | Op::SAndSaveexecB64
            | Op::SOrSaveexecB64
            | Op::SXorSaveexecB64
            | Op::SAndn2SaveexecB64
    );
    let cmp = |cond, signed| K::Cmp { cond, signed };
    let kind = match inst.op {
        Op::SMovB32 | Op::SMovB64 => K::Mov,
        Op::SAddU32 => K::Add { signed: false },
        Op::SAddI32 => K::Add { signed: true },
        Op::SSubU32 => K::Sub { signed: false },
        Op::SSubI32 => K::Sub { signed: true },
        Op::SAndB32 | Op::SAndB64 => K::And,
        Op::SOrB32 | Op::SOrB64 => K::Or,
        Op::SXorB32 | Op::SXorB64 => K::Xor,
        Op::SAndn2B32 | Op::SAndn2B64 => K::Andn2,
        Op::SLshlB32 => K::Lshl,
        Op::SLshrB32 => K::Lshr,
        Op::SAshrI32 => K::Ashr,
        Op::SMulI32 => K::Mul,
        Op::SCmpEqU32 | Op::SCmpEqI32 => cmp(Cond::Eq, false),
        Op::SCmpLgU32 | Op::SCmpLgI32 => cmp(Cond::NeOrLg, false),
        Op::SCmpGtU32 => cmp(Cond::Gt, false),
        Op::SCmpGeU32 => cmp(Cond::Ge, false),
        Op::SCmpLtU32 => cmp(Cond::Lt, false),
        Op::SCmpLeU32 => cmp(Cond::Le, false),
        Op::SCmpGtI32 => cmp(Cond::Gt, true),
        Op::SCmpGeI32 => cmp(Cond::Ge, true),
        Op::SCmpLtI32 => cmp(Cond::Lt, true),
        Op::SCmpLeI32 => cmp(Cond::Le, true),
        Op::SMinU32 => K::Min { signed: false },
        Op::SMinI32 => K::Min { signed: true },
        Op::SMaxU32 => K::Max { signed: false },
        Op::SMaxI32 => K::Max { signed: true },
        Op::SAddcU32 => K::AddCarry,
        Op::SSubbU32 => K::SubBorrow,
        Op::SLshl1AddU32 => K::ShlAdd(1),
        Op::SLshl2AddU32 => K::ShlAdd(2),
        Op::SLshl3AddU32 => K::ShlAdd(3),
        Op::SLshl4AddU32 => K::ShlAdd(4),
        Op::SCselectB32 | Op::SCselectB64 => K::Cselect,
        Op::SBitcmp0B32 => K::BitCmp { set: false },
        Op::SBitcmp1B32 => K::BitCmp { set: true },
        Op::SAndSaveexecB64 => K::Saveexec(SaveexecOp::And),
        Op::SOrSaveexecB64 => K::Saveexec(SaveexecOp::Or),
        Op::SXorSaveexecB64 => K::Saveexec(SaveexecOp::Xor),
        Op::SAndn2SaveexecB64 => K::Saveexec(SaveexecOp::Andn2),
        _ => return None,
    };
    let last = crate::gpu::exec::wave::SGPRS as u8 - if wide { 2 } else { 1 };
    let reg = |op: Operand| -> Option<SReg> {
        Some(match op {
            Operand::Sgpr(n) if n <= last => SReg::Sgpr(n),
            Operand::VccLo => SReg::VccLo,
            Operand::ExecLo => SReg::ExecLo,
            Operand::VccHi if !wide => SReg::VccHi,
            Operand::ExecHi if !wide => SReg::ExecHi,
            Operand::M0 if !wide => SReg::M0,
            _ => return None,
        })
    };
    let scratch = crate::gpu::exec::wave::Wave::new(0, 0);
    let val = |op: Operand| -> Option<SVal> {
        match op {
            Operand::Int(_) | Operand::Float(_) | Operand::Literal => Some(SVal::Const(if wide {
                scratch.read_scalar64(op, crate::isa::Ty::I64, inst.literal).ok()?
            } else {
                scratch.read_scalar32(op, crate::isa::Ty::B32, inst.literal).ok()? as u64
            })),
            Operand::Scc if !wide => Some(SVal::Scc),
            op => reg(op).map(SVal::Reg),
        }
    };
    let a = val(inst.src[0])?;
    let b = match kind {
        K::Mov => SVal::Const(0),
        K::Saveexec(_) => SVal::Reg(SReg::ExecLo),
        _ => val(inst.src[1])?,
    };
    let dst = match (kind, inst.dst[0]) {
        (K::Cmp { .. } | K::BitCmp { .. }, _) | (_, Operand::Null) => None,
        (_, op) => Some(reg(op)?),
    };
    Some(ScalarOp { kind, wide, dst, a, b })
}

/// A run of translatable instructions starting at one address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub items: Vec<Item>,
    /// Instructions in the run.
    pub insts: usize,
    /// Of them, the compiled ones: vector instructions, memory accesses, scalar ALU ops and
    /// branches (a run of interpreted instructions alone is not worth translating; a run of
    /// compiled scalar code is: the `s_and_saveexec`/`s_cbranch_execz` around a branch of
    /// the code, or a barrier's loop counter, cost a fetch and a dispatch each interpreted).
    pub compiled_insts: usize,
    /// Total length in bytes of the run's instructions.
    pub bytes: u32,
    /// One more than the highest VGPR the run names.
    pub vgprs: u16,
    /// Whether a step is a float operation (the run depends on MODE's float controls).
    pub uses_f32: bool,
    /// The indices in the run of its instructions that reach memory, LDS or another wave
    /// (anything but registers), in order: where waves must advance side by side, the
    /// translated code can stop before any of them (`Exit::shared_limit`).
    pub shared: Vec<u16>,
    /// Scalar ops run after the segment that follows them in the code ([`Deferred`]).
    pub deferred: u16,
}

/// Runs no longer than this: the translated code grows with the run, and longer straight
/// lines are rare in compiled kernels.
pub const MAX_STEPS: usize = 96;
/// Most uniform values and lane masks (each way) a segment has.
pub const MAX_UNIFORMS: usize = 64;
pub const MAX_MASKS: usize = 8;

/// Whether the translator takes `inst` (as a compiled vector step, or an instruction handed
/// to the interpreter); a branch ends the run after it.
pub fn takes(inst: &Inst) -> Option<Taken> {
    if kind(inst.op).is_some() {
        return Some(Taken::Vector);
    }
    interpreted(inst)
}

/// How the translator takes an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    Vector,
    Interpreted,
    /// A branch or the end of the program: the last instruction of its run.
    Branch,
}

/// What a run may hand to the interpreter: everything except what moves the PC other than
/// as a branch (`s_setpc`, `s_swappc`, `s_call`, `s_rfe`, the fork/join ops), changes MODE
/// (`s_setreg`: a run's f32 flushing is compiled in) or VGPR indexing (`s_set_gpr_idx_*`),
/// or skips vector instructions (`s_setvskip`).
fn interpreted(inst: &Inst) -> Option<Taken> {
    match inst.op {
        Op::SSetpcB64
        | Op::SSwappcB64
        | Op::SRfeB64
        | Op::SRfeRestoreB64
        | Op::SCbranchJoin
        | Op::SCbranchGFork
        | Op::SCbranchIFork
        | Op::SCallB64
        | Op::SSetregB32
        | Op::SSetregImm32B32
        | Op::SSetGprIdxOn
        | Op::SSetGprIdxIdx
        | Op::SSetGprIdxOff
        | Op::SSetGprIdxMode
        | Op::SSetvskip => None,
        Op::SBranch
        | Op::SCbranchScc0
        | Op::SCbranchScc1
        | Op::SCbranchVccz
        | Op::SCbranchVccnz
        | Op::SCbranchExecz
        | Op::SCbranchExecnz
        | Op::SCbranchCdbgsys
        | Op::SCbranchCdbgsysAndUser
        | Op::SCbranchCdbgsysOrUser
        | Op::SCbranchCdbguser
        | Op::SEndpgm
        | Op::SEndpgmOrderedPsDone
        | Op::SEndpgmSaved => Some(Taken::Branch),
        _ => Some(Taken::Interpreted),
    }
}

/// The instructions a run may hold from some address on, decoded one after the other by
/// `decode` (given the byte offset from the run's start; `None` where nothing decodes): up
/// to [`MAX_STEPS`], the first one the translator does not take, or a branch (included).
pub fn candidates(mut decode: impl FnMut(u64) -> Option<Inst>) -> Vec<Inst> {
    let mut insts = Vec::new();
    let mut at = 0;
    while insts.len() < MAX_STEPS {
        let Some(inst) = decode(at) else { break };
        let Some(taken) = takes(&inst) else { break };
        insts.push(inst);
        at += inst.len as u64;
        if taken == Taken::Branch {
            break;
        }
    }
    insts
}

/// Builds the plan of the longest run at the head of `insts` (the decoded instructions that
/// follow each other from the run's address). `mode` is the wave's MODE register: f32
/// arithmetic is taken only under round-to-nearest-even, the translated rounding.
pub fn plan(insts: &[Inst], mode: u32) -> Plan {
    let mut p = Plan::default();
    let mut seg = Segment::default();
    // Lane masks the current segment wrote so far, with the step that wrote each last.
    let mut written: Vec<(MaskReg, u16)> = Vec::new();
    // Scalar ops met while a segment is open, run after it (see `Deferred`).
    let mut deferred = Deferred::default();
    for inst in insts.iter().take(MAX_STEPS) {
        let taken = takes(inst);
        if taken == Some(Taken::Vector) {
            if deferred.conflicts_with(inst) {
                close_segment(&mut p, &mut seg, &mut written, &mut deferred);
            }
            let mut step = vector_step(inst, mode, &mut seg, &written);
            if step.is_none() && !seg.steps.is_empty() {
                // Perhaps only a conflict with this segment's masks: try a new one.
                close_segment(&mut p, &mut seg, &mut written, &mut deferred);
                step = vector_step(inst, mode, &mut seg, &written);
            }
            if let Some(step) = step {
                let index = seg.steps.len() as u16;
                if let (Some(slot), Some(reg)) = (step.mask_out, mask_dst(inst).and_then(mask_reg)) {
                    written.retain(|(r, _)| *r != reg);
                    written.push((reg, index));
                    if slot as usize == seg.masks_out.len() {
                        seg.masks_out.push(reg);
                    }
                }
                p.uses_f32 |= is_f32(step.kind);
                p.vgprs = p.vgprs.max(step_vgprs(&step));
                p.compiled_insts += 1;
                seg.steps.push(step);
                deferred.moved = deferred.ops.len();
                p.insts += 1;
                p.bytes += inst.len as u32;
                continue;
            }
            // A form the segments do not compile (modifiers, other operands): the
            // interpreter's handler runs it inside the run.
        }
        match taken {
            Some(_) if matches!(inst.op, Op::SNop | Op::SWaitcnt) => {
                // Memory is synchronous here: waits and nops need no code, and they do not
                // end a segment (clang puts an `s_waitcnt` between the address arithmetic
                // and the data arithmetic of almost every load).
                p.insts += 1;
                p.bytes += inst.len as u32;
            }
            Some(taken) => {
                if let Some(op) = scalar_op(inst).filter(|_| !seg.steps.is_empty()) {
                    if deferred.push(inst, op) {
                        p.compiled_insts += 1;
                        p.insts += 1;
                        p.bytes += inst.len as u32;
                        continue;
                    }
                }
                close_segment(&mut p, &mut seg, &mut written, &mut deferred);
                if let Some(op) = scalar_op(inst) {
                    p.items.push(Item::Scalar(op));
                    p.compiled_insts += 1;
                } else if let Some(cond) = branch_cond(inst.op) {
                    // Back to the run's start: the target is the run's address.
                    let target = inst.branch_target(p.bytes as u64);
                    let back = target == 0;
                    p.items.push(Item::Branch { cond, back, index: p.insts as u16, offset: p.bytes, target });
                    p.compiled_insts += 1;
                } else if let Some(op) = scalar_load(inst) {
                    p.items.push(Item::ScalarLoad { op, index: p.insts as u16, offset: p.bytes });
                    p.shared.push(p.insts as u16);
                } else if let Some(op) = mem_op(inst) {
                    p.items.push(Item::Memory { op, index: p.insts as u16, offset: p.bytes });
                    p.vgprs = p.vgprs.max(op.vgprs());
                    p.compiled_insts += 1;
                    p.shared.push(p.insts as u16);
                } else {
                    p.items.push(Item::Interpreted { index: p.insts as u16, offset: p.bytes });
                    if reaches_beyond_registers(inst) {
                        p.shared.push(p.insts as u16);
                    }
                }
                p.insts += 1;
                p.bytes += inst.len as u32;
                if taken == Taken::Branch {
                    break;
                }
            }
            None => break,
        }
    }
    close_segment(&mut p, &mut seg, &mut written, &mut deferred);
    mark_unread_masks(&mut p.items);
    p
}

/// Sets each segment's `masks_read_later`. A mask is unread when, before anything reads it,
/// a later segment writes it or a compiled scalar op writes the whole register, with
/// nothing between that could stop the run other than by failing (an interpreted
/// instruction or a branch could, and the wave would go on with the register; after a
/// memory fault it does not go on). The carry-out of `v_addc_co_u32` in a 64-bit address
/// sum is the common case: the next address sum or compare writes VCC again.
fn mark_unread_masks(items: &mut [Item]) {
    for i in 0..items.len() {
        let Item::Vector(seg) = &items[i] else { continue };
        let read: Vec<bool> = seg.masks_out.iter().map(|reg| read_after(&items[i + 1..], *reg)).collect();
        if let Item::Vector(seg) = &mut items[i] {
            seg.masks_read_later = read;
        }
    }
}

/// Whether the lane mask in `reg` may be read after the run's `items` start.
fn read_after(items: &[Item], reg: MaskReg) -> bool {
    let halves = match reg {
        MaskReg::Vcc => [SReg::VccLo, SReg::VccHi],
        MaskReg::Sgpr(n) => [SReg::Sgpr(n), SReg::Sgpr(n + 1)],
    };
    // The registers a scalar operand of `width` dwords covers.
    let covers = |r: SReg, width: u8| -> Vec<SReg> {
        match (r, width) {
            (SReg::Sgpr(n), 2) => vec![SReg::Sgpr(n), SReg::Sgpr(n + 1)],
            (SReg::VccLo, 2) => vec![SReg::VccLo, SReg::VccHi],
            (SReg::ExecLo, 2) => vec![SReg::ExecLo, SReg::ExecHi],
            (r, _) => vec![r],
        }
    };
    for item in items {
        match item {
            Item::Vector(seg) => {
                let uniform_read = seg.uniforms.iter().any(|u| match (u, reg) {
                    (Uniform::Sgpr(n), MaskReg::Sgpr(m)) => *n == m || *n == m + 1,
                    _ => false,
                });
                if seg.masks_in.contains(&reg) || uniform_read {
                    return true;
                }
                if seg.masks_out.contains(&reg) {
                    return false;
                }
            }
            Item::Scalar(op) => {
                let width = if op.wide { 2 } else { 1 };
                let reads = [op.a, op.b].into_iter().flat_map(|v| match v {
                    SVal::Reg(r) => covers(r, width),
                    SVal::Const(_) | SVal::Scc => Vec::new(),
                });
                if reads.into_iter().any(|r| halves.contains(&r)) {
                    return true;
                }
                let writes = op.dst.map(|d| covers(d, width)).unwrap_or_default();
                if halves.iter().all(|h| writes.contains(h)) {
                    return false;
                }
                if writes.iter().any(|w| halves.contains(w)) {
                    return true;
                }
            }
            // Global and LDS accesses touch no lane mask but fail or go on; an SGPR pair may
            // be an address or a scalar load's destination.
            Item::Memory { .. } | Item::ScalarLoad { .. } if reg == MaskReg::Vcc => {}
            _ => return true,
        }
    }
    true
}

/// Ends the open segment: it goes into the run, then the scalar ops deferred past it.
fn close_segment(p: &mut Plan, seg: &mut Segment, written: &mut Vec<(MaskReg, u16)>, deferred: &mut Deferred) {
    if !seg.steps.is_empty() {
        p.items.push(Item::Vector(std::mem::take(seg)));
    }
    written.clear();
    p.deferred += deferred.moved as u16;
    deferred.moved = 0;
    p.items.extend(deferred.ops.drain(..).map(Item::Scalar));
    deferred.reads.clear();
    deferred.writes.clear();
}

/// Scalar ALU ops that come between the vector instructions of a segment, moved after it.
///
/// Compiled code interleaves scalar bookkeeping (loop counters, compares for the branch) with
/// vector arithmetic; ending the segment at each scalar op would make the translated code go
/// through the wave's lanes once per piece. An op moves past the vector instructions that
/// follow it when none of them reads a register it writes or writes a register it reads or
/// writes (vector instructions read SGPRs, M0 and EXEC halves as uniform values and lane
/// masks, and write lane masks; they never touch SCC). Ops that write EXEC never move: every
/// vector instruction reads it.
#[derive(Default)]
struct Deferred {
    ops: Vec<ScalarOp>,
    /// Register dwords the deferred ops read and write ([`reg_slots`] numbering).
    reads: Vec<u16>,
    writes: Vec<u16>,
    /// How many of them a vector instruction of the segment follows in the code.
    moved: usize,
}

impl Deferred {
    /// Defers `op` (of `inst`) if it may move; false if it may not.
    fn push(&mut self, inst: &Inst, op: ScalarOp) -> bool {
        let width = if op.wide { 2 } else { 1 };
        let writes = reg_slots(inst.dst[0], width);
        let exec = [EXEC_SLOT, EXEC_SLOT + 1];
        if matches!(op.kind, SKind::Saveexec(_)) || writes.iter().any(|w| exec.contains(w)) {
            return false;
        }
        self.reads.extend(inst.src[..2].iter().flat_map(|s| reg_slots(*s, width)));
        self.writes.extend(writes);
        self.ops.push(op);
        true
    }

    /// Whether vector instruction `inst` must stay behind the deferred ops.
    fn conflicts_with(&self, inst: &Inst) -> bool {
        if self.ops.is_empty() {
            return false;
        }
        let (reads, writes) = vector_footprint(inst);
        reads.iter().any(|r| self.writes.contains(r))
            || writes.iter().any(|w| self.writes.contains(w) || self.reads.contains(w))
    }
}

/// [`reg_slots`] numbers of VCC, EXEC and M0 (SGPRs are their own numbers).
const VCC_SLOT: u16 = 1000;
const EXEC_SLOT: u16 = 1002;
const M0_SLOT: u16 = 1004;

/// The register dwords `width` dwords of operand `op` cover (none for constants, VGPRs, SCC).
fn reg_slots(op: Operand, width: u16) -> Vec<u16> {
    let first = match op {
        Operand::Sgpr(n) => n as u16,
        Operand::VccLo => VCC_SLOT,
        Operand::VccHi => VCC_SLOT + 1,
        Operand::ExecLo => EXEC_SLOT,
        Operand::ExecHi => EXEC_SLOT + 1,
        Operand::M0 => M0_SLOT,
        _ => return Vec::new(),
    };
    (first..first + width).collect()
}

/// The scalar register dwords a vector instruction reads (uniform sources, lane masks) and
/// writes (lane masks), generously: 64-bit sources, lane masks and packed-f32 sources count two
/// dwords.
fn vector_footprint(inst: &Inst) -> (Vec<u16>, Vec<u16>) {
    let info = inst.info();
    let pair_kind = kind(inst.op).is_some_and(on_pairs);
    let mut reads = Vec::new();
    for (i, s) in inst.src.iter().enumerate() {
        let width = if pair_kind || i == 2 { 2 } else { info.src[i].regs.max(1) as u16 };
        reads.extend(reg_slots(*s, width));
    }
    if matches!(inst.op, Op::VDivFmasF64 | Op::VDivFmasF32) {
        // Its lane mask, VCC, is not among its operands.
        reads.extend([VCC_SLOT, VCC_SLOT + 1]);
    }
    let writes = inst.dst.iter().flat_map(|d| reg_slots(*d, 2)).collect();
    (reads, writes)
}

/// Whether an interpreted instruction reaches memory, LDS, another wave or the host: memory
/// and LDS instructions (but the lane crossbar ops), and the program-control ops other than
/// `s_nop`, `s_waitcnt` and branches (barriers, sleeps, messages, traps). The workgroup loop
/// keeps waves in step by these after a barrier (`workgroup::run_in_step`).
pub fn reaches_beyond_registers(inst: &Inst) -> bool {
    match inst.enc {
        // The lane crossbar ops move data between the lanes of one wave through the LDS
        // hardware without reading or writing LDS: no other wave can see them, so waves kept
        // in step after a barrier need not take turns at them (a shuffle reduction after a
        // barrier is a row of them).
        Encoding::Ds => !matches!(inst.op, Op::DsSwizzleB32 | Op::DsPermuteB32 | Op::DsBpermuteB32),
        Encoding::Smem
        | Encoding::Flat
        | Encoding::Global
        | Encoding::Scratch
        | Encoding::Mubuf
        | Encoding::Mtbuf
        | Encoding::Mimg => true,
        Encoding::Sopp => !matches!(inst.op, Op::SNop | Op::SWaitcnt) && interpreted(inst) != Some(Taken::Branch),
        _ => false,
    }
}

/// Whether f32 arithmetic under `mode` is what the host's gives: round to nearest even, no
/// other vector mode bits.
fn f32_translatable(mode: u32) -> bool {
    Env::new(mode).rm32() == Rm::Ne && mode & crate::gpu::exec::vector_modes::MODE_BITS == 0
}

/// Whether f16 results under `mode` are what the translated conversion gives: round to
/// nearest even, f16 output denormals kept.
fn f16_translatable(mode: u32) -> bool {
    Env::new(mode).rm64() == Rm::Ne && Env::new(mode).out64()
}

/// Whether the steps of `kind` read VGPR pairs.
fn on_pairs(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Shift64 { .. }
            | Kind::PkMov { .. }
            | Kind::PkF32 { .. }
            | Kind::F64 { .. }
            | Kind::CmpF64 { .. }
            | Kind::DivF64(_)
            | Kind::LdexpF64 { .. }
    )
}

fn step_vgprs(step: &Step) -> u16 {
    // Registers per operand: pairs for the 64-bit ops.
    let width = if on_pairs(step.kind) { 2 } else { 1 };
    let dst_width = if matches!(step.kind, Kind::CvtF64 { .. } | Kind::MadU64U32) { 2 } else { width };
    // (`v_ldexp_f64`'s exponent is one dword; `v_mad_u64_u32`'s addend alone is a pair.)
    let src_width = |i: usize| match step.kind {
        Kind::LdexpF64 { .. } if i == 1 => 1,
        Kind::MadU64U32 => 1 + (i == 2) as u16,
        _ => width,
    };
    let srcs = step.src.iter().enumerate().filter_map(|(i, s)| match s {
        Some(Src::Vgpr(n)) => Some(*n as u16 + src_width(i)),
        _ => None,
    });
    srcs.chain(step.dst.map(|d| d as u16 + dst_width)).max().unwrap_or(0)
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
            | Kind::MinMaxF32 { .. }
            | Kind::PkF32 { .. }
            | Kind::F64 { .. }
            | Kind::CmpF64 { .. }
            | Kind::DivF64(_)
            | Kind::DivF32(_)
            | Kind::LdexpF64 { .. }
            | Kind::RcpF32
            | Kind::RoundF32 { .. }
            | Kind::CvtIntF32 { .. }
            | Kind::MinMax3F32 { .. }
            | Kind::CvtF32U32
            | Kind::CvtF32I32
            | Kind::CvtF16F32
    )
}

/// The lane-mask register an operand names, if it is one a run may read or write.
fn mask_reg(op: Operand) -> Option<MaskReg> {
    match op {
        Operand::VccLo => Some(MaskReg::Vcc),
        Operand::Sgpr(n) if n % 2 == 0 && (n as usize) < crate::gpu::exec::wave::SGPRS - 1 => Some(MaskReg::Sgpr(n)),
        _ => None,
    }
}

/// The step for vector instruction `inst` in segment `seg`, registering its uniform sources
/// and masks there; `None` (and `seg` unchanged) if it cannot be in this segment.
fn vector_step(inst: &Inst, mode: u32, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    if inst.op == Op::VPkMovB32 {
        return pk_mov_step(inst);
    }
    if let Some(Kind::PkF32 { op, .. }) = kind(inst.op) {
        return if f32_translatable(mode) { pk_f32_step(inst, op, seg, written) } else { None };
    }
    let kind = kind(inst.op)?;
    match kind {
        // Host arithmetic: f64 denormals kept on input and output, round to nearest even.
        Kind::F64 { .. } if Env::new(mode).host64() => return f64_step(inst, kind, seg, written),
        Kind::CmpF64 { .. } if Env::new(mode).in64() => return cmp_f64_step(inst, kind, seg, written),
        Kind::DivF64(op) if Env::new(mode).host64() => return div_f64_step(inst, op, seg, written),
        Kind::LdexpF64 { .. } if Env::new(mode).host64() => return ldexp_f64_step(inst, seg, written),
        Kind::MadU64U32 => return mad_u64_step(inst, seg, written),
        Kind::F64 { .. } | Kind::CmpF64 { .. } | Kind::DivF64(_) | Kind::LdexpF64 { .. } => return None,
        _ => {}
    }
    let sign = sign_modifiers(inst, kind)?;
    if is_f32(kind) && !f32_translatable(mode) || kind == Kind::CvtF16F32 && !f16_translatable(mode) {
        return None;
    }
    if let Kind::Shift64 { op, .. } = kind {
        return shift64_step(inst, op);
    }
    let arity = match kind {
        Kind::Mov
        | Kind::Not
        | Kind::CvtF32U32
        | Kind::CvtF32I32
        | Kind::CvtF32Ubyte(_)
        | Kind::CvtF64 { .. }
        | Kind::RcpF32
        | Kind::RoundF32 { .. }
        | Kind::CvtIntF32 { .. }
        | Kind::CvtF16F32 => 1,
        Kind::Tri(_) | Kind::FmaF32 { acc: false } | Kind::DivF32(_) | Kind::MinMax3F32 { .. } => 3,
        _ => 2,
    };
    let dst = match kind {
        Kind::CmpInt { .. } | Kind::CmpF32(_) => None,
        _ => match inst.dst[0] {
            Operand::Vgpr(n) => Some(n),
            _ => return None,
        },
    };
    // Sources: VGPRs, or uniform values no lane mask of this segment has overwritten.
    let mut uniforms = Vec::new();
    let mut src = [None; 3];
    for (i, s) in src.iter_mut().enumerate().take(arity) {
        match dword_source(inst, i, written)? {
            Ok(n) => *s = Some(Src::Vgpr(n)),
            Err(uniform) => {
                uniforms.push(uniform);
                *s = Some(Src::Uniform((seg.uniforms.len() + uniforms.len() - 1) as u8));
            }
        }
    }
    // The lane mask read: VCC or an SGPR pair, from this segment or from before it.
    let needs_mask = matches!(kind, Kind::Cndmask | Kind::Carry { carry_in: true, .. } | Kind::DivF32(DivOp::Fmas));
    let mut new_mask_in = None;
    let mask_in = if needs_mask {
        // (`v_div_fmas_f32` reads VCC whatever its sources.)
        let implicit_vcc = kind == Kind::DivF32(DivOp::Fmas);
        let reg = if implicit_vcc { MaskReg::Vcc } else { mask_reg(inst.src[2])? };
        if let Some((_, n)) = written.iter().rev().find(|(w, _)| *w == reg) {
            Some(MaskSrc::Step(*n))
        } else if !implicit_vcc && written.iter().any(|(w, _)| overlaps(*w, inst.src[2], 2)) {
            return None;
        } else {
            let at = seg.masks_in.iter().position(|m| *m == reg).unwrap_or_else(|| {
                new_mask_in = Some(reg);
                seg.masks_in.len()
            });
            Some(MaskSrc::Input(at as u8))
        }
    } else {
        None
    };
    // The lane mask written: compares and carry-outs.
    let writes_mask =
        matches!(kind, Kind::CmpInt { .. } | Kind::CmpF32(_) | Kind::Carry { .. } | Kind::DivF32(DivOp::Scale));
    let mask_out = if writes_mask { Some(mask_out_slot(inst, seg)?) } else { None };
    if seg.uniforms.len() + uniforms.len() > MAX_UNIFORMS
        || seg.masks_in.len() + new_mask_in.is_some() as usize > MAX_MASKS
        || mask_out.is_some_and(|m| m as usize >= MAX_MASKS)
    {
        return None;
    }
    // Commit.
    seg.uniforms.extend(uniforms);
    if let Some(reg) = new_mask_in {
        seg.masks_in.push(reg);
    }
    Some(Step { kind, dst, src, mask_in, mask_out, sign })
}

/// Source `i` of `inst` as a 32-bit source of a step: `Ok` a VGPR, or `Err` the uniform
/// value it names (an SGPR no lane mask of this segment has overwritten, M0, an EXEC half,
/// or a constant as the interpreter reads it for the operand's type); `None` for anything
/// else.
fn dword_source(inst: &Inst, i: usize, written: &[(MaskReg, u16)]) -> Option<Result<u8, Uniform>> {
    let uniform = match inst.src[i] {
        Operand::Vgpr(n) => return Some(Ok(n)),
        Operand::Sgpr(n) => Uniform::Sgpr(n),
        Operand::M0 => Uniform::M0,
        Operand::ExecLo => Uniform::ExecLo,
        Operand::ExecHi => Uniform::ExecHi,
        op @ (Operand::Int(_) | Operand::Float(_) | Operand::Literal) => {
            let scratch = crate::gpu::exec::wave::Wave::new(0, 0);
            Uniform::Const(scratch.read_scalar32(op, inst.info().src[i].ty, inst.literal).ok()?)
        }
        _ => return None,
    };
    if written.iter().any(|(w, _)| overlaps(*w, inst.src[i], 1)) {
        return None;
    }
    Some(Err(uniform))
}

/// The step of a 64-bit shift by a constant of a VGPR pair into a VGPR pair.
fn shift64_step(inst: &Inst, op: Shift64) -> Option<Step> {
    let (Operand::Vgpr(dst), Operand::Vgpr(src)) = (inst.dst[0], inst.src[1]) else { return None };
    let scratch = crate::gpu::exec::wave::Wave::new(0, 0);
    let amount = match inst.src[0] {
        c @ (Operand::Int(_) | Operand::Literal) => scratch.read_scalar32(c, crate::isa::Ty::B32, inst.literal).ok()?,
        _ => return None,
    };
    let kind = Kind::Shift64 { op, amount: (amount & 63) as u8 };
    Some(Step {
        kind,
        dst: Some(dst),
        src: [None, Some(Src::Vgpr(src)), None],
        mask_in: None,
        mask_out: None,
        sign: Sign::NONE,
    })
}

/// The step of a `v_pk_mov_b32` of VGPR pairs into a VGPR pair: only OP_SEL's two low bits
/// select (the interpreter ignores OP_SEL_HI); negations and clamp are left to it.
fn pk_mov_step(inst: &Inst) -> Option<Step> {
    let Ext::Vop3(m) = inst.ext else { return None };
    if inst.enc != Encoding::Vop3p || m.neg != 0 || m.neg_hi != 0 || m.clamp {
        return None;
    }
    let (Operand::Vgpr(dst), Operand::Vgpr(a), Operand::Vgpr(b)) = (inst.dst[0], inst.src[0], inst.src[1]) else {
        return None;
    };
    let kind = Kind::PkMov { hi0: m.op_sel & 1 != 0, hi1: m.op_sel & 2 != 0 };
    Some(Step {
        kind,
        dst: Some(dst),
        src: [Some(Src::Vgpr(a)), Some(Src::Vgpr(b)), None],
        mask_in: None,
        mask_out: None,
        sign: Sign::NONE,
    })
}

/// The slot in `seg.masks_out` of the lane mask `inst` writes (a compare's or carry's).
fn mask_out_slot(inst: &Inst, seg: &Segment) -> Option<u8> {
    let reg = mask_reg(mask_dst(inst)?)?;
    // A mask this segment read before it is written stays the value read.
    Some(seg.masks_out.iter().position(|m| *m == reg).unwrap_or(seg.masks_out.len()) as u8)
}

/// The sign-bit modifiers of an f64 op's first `arity` sources as bit masks (`abs`, `neg`),
/// as the interpreter applies them; `None` for any other modifier (OP_SEL, clamp, an output
/// modifier, DPP, SDWA), which is left to the interpreter.
fn f64_modifiers(inst: &Inst, arity: usize) -> Option<(u8, u8)> {
    let vector = matches!(inst.enc, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3);
    match inst.ext {
        Ext::None if vector => Some((0, 0)),
        Ext::Vop3(m) if vector && m.op_sel == 0 && !m.clamp && m.omod == 0 => {
            let (mut abs, mut neg) = (0, 0);
            for i in 0..arity {
                let (a, n) = crate::gpu::exec::ops::valu::common::src64_mods(inst, i);
                abs |= ((a != 0) as u8) << i;
                neg |= ((n != 0) as u8) << i;
            }
            Some((abs, neg))
        }
        _ => None,
    }
}

/// The f64 constant of source `i` as the interpreter reads it (the pattern the operand's
/// type gives it), as low and high dwords.
fn pair_constant(inst: &Inst, i: usize) -> Option<[u32; 2]> {
    let scratch = crate::gpu::exec::wave::Wave::new(0, 0);
    let k = scratch.read_scalar64(inst.src[i], inst.info().src[i].ty, inst.literal).ok()?;
    Some([k as u32, (k >> 32) as u32])
}

/// The step of an f64 op: sources as [`pair_sources`] reads them, the destination a VGPR
/// pair.
fn f64_step(inst: &Inst, kind: Kind, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    let Kind::F64 { op, acc, .. } = kind else { return None };
    let Operand::Vgpr(dst) = inst.dst[0] else { return None };
    // (`v_fmac_f64`'s third input is its destination, read by the lowering.)
    let arity = if acc { 2 } else { op.arity() };
    let (abs, neg) = f64_modifiers(inst, arity)?;
    let src = pair_sources(inst, arity, seg, written, |i| pair_constant(inst, i))?;
    Some(Step {
        kind: Kind::F64 { op, acc, abs, neg },
        dst: Some(dst),
        src,
        mask_in: None,
        mask_out: None,
        sign: Sign::NONE,
    })
}

/// The step of an f64 division helper: three register pairs in (no modifiers), a VGPR pair
/// out; `v_div_fmas_f64` reads VCC (from this segment or from before it), `v_div_scale_f64`
/// writes its lane-mask destination.
fn div_f64_step(inst: &Inst, op: DivOp, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    if !plain(inst) {
        return None;
    }
    let Operand::Vgpr(dst) = inst.dst[0] else { return None };
    let mut new_mask_in = None;
    let mask_in = match op {
        DivOp::Fmas => Some(match written.iter().rev().find(|(w, _)| *w == MaskReg::Vcc) {
            Some((_, n)) => MaskSrc::Step(*n),
            None => {
                let at = seg.masks_in.iter().position(|m| *m == MaskReg::Vcc).unwrap_or_else(|| {
                    new_mask_in = Some(MaskReg::Vcc);
                    seg.masks_in.len()
                });
                MaskSrc::Input(at as u8)
            }
        }),
        DivOp::Scale | DivOp::Fixup => None,
    };
    let mask_out = match op {
        DivOp::Scale => Some(mask_out_slot(inst, seg)?).filter(|m| (*m as usize) < MAX_MASKS),
        DivOp::Fmas | DivOp::Fixup => None,
    };
    if (op == DivOp::Scale && mask_out.is_none()) || seg.masks_in.len() + new_mask_in.is_some() as usize > MAX_MASKS {
        return None;
    }
    let src = pair_sources(inst, 3, seg, written, |i| pair_constant(inst, i))?;
    if let Some(reg) = new_mask_in {
        seg.masks_in.push(reg);
    }
    Some(Step { kind: Kind::DivF64(op), dst: Some(dst), src, mask_in, mask_out, sign: Sign::NONE })
}

/// The step of `v_ldexp_f64`: a register pair with its sign-bit modifiers and a 32-bit
/// exponent in (abs/neg bits on the integer exponent are ignored, by the interpreter's
/// operand table as by [`f64_modifiers`]), a VGPR pair out.
fn ldexp_f64_step(inst: &Inst, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    let Operand::Vgpr(dst) = inst.dst[0] else { return None };
    let (abs, neg) = f64_modifiers(inst, 1)?;
    let exponent = dword_source(inst, 1, written)?;
    let mark = seg.uniforms.len();
    let mut src = pair_sources(inst, 1, seg, written, |i| pair_constant(inst, i))?;
    src[1] = Some(match exponent {
        Ok(n) => Src::Vgpr(n),
        Err(uniform) if seg.uniforms.len() < MAX_UNIFORMS => {
            seg.uniforms.push(uniform);
            Src::Uniform((seg.uniforms.len() - 1) as u8)
        }
        Err(_) => {
            seg.uniforms.truncate(mark);
            return None;
        }
    });
    let kind = Kind::LdexpF64 { abs: abs & 1 != 0, neg: neg & 1 != 0 };
    Some(Step { kind, dst: Some(dst), src, mask_in: None, mask_out: None, sign: Sign::NONE })
}

/// The step of `v_mad_u64_u32` without modifiers: factors as [`dword_source`] reads them,
/// the addend as [`pair_sources`] does, a VGPR pair out and the carry to a lane mask.
fn mad_u64_step(inst: &Inst, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    if !plain(inst) {
        return None;
    }
    let Operand::Vgpr(dst) = inst.dst[0] else { return None };
    let mask_out = mask_out_slot(inst, seg).filter(|m| (*m as usize) < MAX_MASKS)?;
    let factors = [0, 1].map(|i| dword_source(inst, i, written));
    let mark = seg.uniforms.len();
    let mut src = [None; 3];
    for (i, factor) in factors.into_iter().enumerate() {
        src[i] = Some(match factor? {
            Ok(n) => Src::Vgpr(n),
            Err(uniform) => {
                seg.uniforms.push(uniform);
                Src::Uniform((seg.uniforms.len() - 1) as u8)
            }
        });
    }
    let addend = match seg.uniforms.len() <= MAX_UNIFORMS {
        true => pair_sources_at(inst, &[2], seg, written, |i| pair_constant(inst, i)),
        false => None,
    };
    let Some(addend) = addend else {
        seg.uniforms.truncate(mark);
        return None;
    };
    src[2] = addend[2];
    Some(Step { kind: Kind::MadU64U32, dst: Some(dst), src, mask_in: None, mask_out: Some(mask_out), sign: Sign::NONE })
}

/// The step of an f64 compare: two register pairs in, a lane mask out.
fn cmp_f64_step(inst: &Inst, kind: Kind, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    let Kind::CmpF64 { cond, .. } = kind else { return None };
    let (abs, neg) = f64_modifiers(inst, 2)?;
    let mask_out = mask_out_slot(inst, seg)?;
    if mask_out as usize >= MAX_MASKS {
        return None;
    }
    let src = pair_sources(inst, 2, seg, written, |i| pair_constant(inst, i))?;
    Some(Step {
        kind: Kind::CmpF64 { cond, abs, neg },
        dst: None,
        src,
        mask_in: None,
        mask_out: Some(mask_out),
        sign: Sign::NONE,
    })
}

/// The first `arity` sources of `inst` as register pairs: a VGPR pair, or two uniform values
/// registered in `seg`: an SGPR pair no lane mask of this segment has overwritten, or the
/// low and high dwords `constant(i)` gives source `i`'s constant.
fn pair_sources(
    inst: &Inst,
    arity: usize,
    seg: &mut Segment,
    written: &[(MaskReg, u16)],
    constant: impl Fn(usize) -> Option<[u32; 2]>,
) -> Option<[Option<Src>; 3]> {
    pair_sources_at(inst, &[0, 1, 2][..arity], seg, written, constant)
}

/// [`pair_sources`] for the sources of `inst` at `indices` (the others `None`).
fn pair_sources_at(
    inst: &Inst,
    indices: &[usize],
    seg: &mut Segment,
    written: &[(MaskReg, u16)],
    constant: impl Fn(usize) -> Option<[u32; 2]>,
) -> Option<[Option<Src>; 3]> {
    let mut uniforms = Vec::new();
    let mut src = [None; 3];
    for &i in indices {
        let s = &mut src[i];
        let pair = match inst.src[i] {
            Operand::Vgpr(n) if n < u8::MAX => {
                *s = Some(Src::Vgpr(n));
                continue;
            }
            Operand::Sgpr(n) if (n as usize) < crate::gpu::exec::wave::SGPRS - 1 => {
                if written.iter().any(|(w, _)| overlaps(*w, inst.src[i], 2)) {
                    return None;
                }
                [Uniform::Sgpr(n), Uniform::Sgpr(n + 1)]
            }
            Operand::Int(_) | Operand::Float(_) | Operand::Literal => constant(i)?.map(Uniform::Const),
            _ => return None,
        };
        *s = Some(Src::Uniform((seg.uniforms.len() + uniforms.len()) as u8));
        uniforms.extend(pair);
    }
    if seg.uniforms.len() + uniforms.len() > MAX_UNIFORMS {
        return None;
    }
    seg.uniforms.extend(uniforms);
    Some(src)
}

/// The step of a packed-f32 op without clamp: each source a VGPR pair, an SGPR pair no lane
/// mask of this segment has overwritten (two uniform values), or a constant (the same
/// dword for both halves, as the interpreter reads it).
fn pk_f32_step(inst: &Inst, op: FloatOp, seg: &mut Segment, written: &[(MaskReg, u16)]) -> Option<Step> {
    let Ext::Vop3(m) = inst.ext else { return None };
    if inst.enc != Encoding::Vop3p || m.clamp {
        return None;
    }
    let Operand::Vgpr(dst) = inst.dst[0] else { return None };
    let arity = if op == FloatOp::Fma { 3 } else { 2 };
    let scratch = crate::gpu::exec::wave::Wave::new(0, 0);
    let constant = |i: usize| {
        let k = scratch.read_scalar32(inst.src[i], crate::isa::Ty::B32, inst.literal).ok()?;
        Some([k, k])
    };
    let src = pair_sources(inst, arity, seg, written, constant)?;
    let bits = |x: u8| x & ((1 << arity) - 1);
    let kind =
        Kind::PkF32 { op, sel: bits(m.op_sel), sel_hi: bits(m.op_sel_hi), neg_lo: bits(m.neg), neg_hi: bits(m.neg_hi) };
    Some(Step { kind, dst: Some(dst), src, mask_in: None, mask_out: None, sign: Sign::NONE })
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

/// Whether a lane mask written at `w` covers any part of the register read at `r`,
/// `dwords` (1 or 2) wide.
fn overlaps(w: MaskReg, r: Operand, dwords: u16) -> bool {
    let w0 = match w {
        MaskReg::Sgpr(n) => n as u16,
        MaskReg::Vcc => 1000,
    };
    let r0 = match r {
        Operand::Sgpr(n) => n as u16,
        Operand::VccLo => 1000,
        Operand::VccHi => 1001,
        _ => return false,
    };
    r0 <= w0 + 1 && w0 < r0 + dwords
}

/// The source modifiers a step of `kind` applies for `inst`: none for a [`plain`]
/// instruction; VOP3's abs and neg (as the interpreter reads them, [`src_mods`]) for the f32
/// arithmetic and compares; `None` for anything else, which is left to the interpreter.
///
/// [`src_mods`]: crate::gpu::exec::ops::valu::common::src_mods
fn sign_modifiers(inst: &Inst, kind: Kind) -> Option<Sign> {
    if plain(inst) {
        return Some(Sign::NONE);
    }
    let arity = match kind {
        Kind::AddF32 | Kind::SubF32 | Kind::SubRevF32 | Kind::MulF32 | Kind::MinMaxF32 { .. } | Kind::CmpF32(_) => 2,
        // (`v_fmac_f32`'s third input is its destination, read without modifiers.)
        Kind::FmaF32 { acc } => 3 - acc as usize,
        Kind::MinMax3F32 { .. } => 3,
        _ => return None,
    };
    let vector = matches!(inst.enc, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3);
    let Ext::Vop3(m) = inst.ext else { return None };
    if !vector || m.op_sel != 0 || m.clamp || m.omod != 0 {
        return None;
    }
    let mut sign = Sign::NONE;
    for i in 0..arity {
        let mods = crate::gpu::exec::ops::valu::common::src_mods(inst, i);
        sign.abs |= ((mods.abs != 0) as u8) << i;
        sign.neg |= ((mods.neg != 0) as u8) << i;
    }
    Some(sign)
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
        Op::VMulHiU32 => Kind::Bin(B::MulHiU),
        Op::VAdd3U32 => Kind::Tri(Tri::Add3),
        Op::VLshlAddU32 => Kind::Tri(Tri::LshlAdd),
        Op::VAddLshlU32 => Kind::Tri(Tri::AddLshl),
        Op::VLshlOrB32 => Kind::Tri(Tri::LshlOr),
        Op::VAndOrB32 => Kind::Tri(Tri::AndOr),
        Op::VOr3B32 => Kind::Tri(Tri::Or3),
        Op::VXadU32 => Kind::Tri(Tri::Xad),
        Op::VMadU32U24 => Kind::Tri(Tri::MadU24),
        Op::VBfiB32 => Kind::Tri(Tri::Bfi),
        Op::VAlignbitB32 => Kind::Tri(Tri::Alignbit),
        Op::VBfeU32 => Kind::Tri(Tri::BfeU),
        Op::VBfeI32 => Kind::Tri(Tri::BfeI),
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
        Op::VMaxF32 => Kind::MinMaxF32 { max: true },
        Op::VRcpF32 => Kind::RcpF32,
        Op::VCvtI32F32 => Kind::CvtIntF32 { signed: true },
        Op::VCvtU32F32 => Kind::CvtIntF32 { signed: false },
        Op::VMax3F32 => Kind::MinMax3F32 { max: true },
        Op::VMin3F32 => Kind::MinMax3F32 { max: false },
        Op::VRndneF32 => Kind::RoundF32 { trunc: false },
        Op::VTruncF32 => Kind::RoundF32 { trunc: true },
        Op::VMinF32 => Kind::MinMaxF32 { max: false },
        Op::VCvtF32U32 => Kind::CvtF32U32,
        Op::VCvtF32I32 => Kind::CvtF32I32,
        Op::VCvtF32Ubyte0 => Kind::CvtF32Ubyte(0),
        Op::VCvtF32Ubyte1 => Kind::CvtF32Ubyte(1),
        Op::VCvtF32Ubyte2 => Kind::CvtF32Ubyte(2),
        Op::VCvtF32Ubyte3 => Kind::CvtF32Ubyte(3),
        Op::VCvtF16F32 => Kind::CvtF16F32,
        Op::VPackB32F16 => Kind::PackB32F16,
        // The amount is resolved from the instruction (`shift64_step`).
        Op::VLshlrevB64 => Kind::Shift64 { op: Shift64::Shl, amount: 0 },
        Op::VMadU64U32 => Kind::MadU64U32,
        Op::VLshrrevB64 => Kind::Shift64 { op: Shift64::Shr, amount: 0 },
        Op::VAshrrevI64 => Kind::Shift64 { op: Shift64::Sar, amount: 0 },
        // The halves are resolved from the instruction (`pk_mov_step`).
        Op::VPkMovB32 => Kind::PkMov { hi0: false, hi1: false },
        // The selections and negations too (`pk_f32_step`).
        Op::VPkAddF32 => pk_f32(FloatOp::Add),
        Op::VPkMulF32 => pk_f32(FloatOp::Mul),
        Op::VPkFmaF32 => pk_f32(FloatOp::Fma),
        // The modifiers are resolved from the instruction (`f64_step`, `cmp_f64_step`).
        Op::VAddF64 => f64_kind(FloatOp::Add, false),
        Op::VMulF64 => f64_kind(FloatOp::Mul, false),
        Op::VFmaF64 => f64_kind(FloatOp::Fma, false),
        Op::VFmacF64 => f64_kind(FloatOp::Fma, true),
        Op::VRcpF64 => f64_kind(FloatOp::Rcp, false),
        Op::VDivScaleF32 => Kind::DivF32(DivOp::Scale),
        Op::VDivFmasF32 => Kind::DivF32(DivOp::Fmas),
        Op::VDivFixupF32 => Kind::DivF32(DivOp::Fixup),
        Op::VDivScaleF64 => Kind::DivF64(DivOp::Scale),
        Op::VDivFmasF64 => Kind::DivF64(DivOp::Fmas),
        Op::VDivFixupF64 => Kind::DivF64(DivOp::Fixup),
        Op::VLdexpF64 => Kind::LdexpF64 { abs: false, neg: false },
        Op::VCvtF64U32 => Kind::CvtF64 { signed: false },
        Op::VCvtF64I32 => Kind::CvtF64 { signed: true },
        _ => return compare(op.name()),
    })
}

/// An f64 kind without modifiers.
fn f64_kind(op: FloatOp, acc: bool) -> Kind {
    Kind::F64 { op, acc, abs: 0, neg: 0 }
}

/// A packed-f32 kind with the default selections (low dwords for the low result, high for
/// the high) and no negation.
fn pk_f32(op: FloatOp) -> Kind {
    Kind::PkF32 { op, sel: 0, sel_hi: 0b111, neg_lo: 0, neg_hi: 0 }
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
        "f64" => Some(Kind::CmpF64 { cond: float(cond)?, abs: 0, neg: 0 }),
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

    fn segments(p: &Plan) -> Vec<&Segment> {
        p.items
            .iter()
            .filter_map(|i| match i {
                Item::Vector(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn f64_conversions_compares_reciprocals_and_sign_modifiers_are_steps() {
        // Encodings by llvm-mc-15 (gfx90a).
        let code = insts(&[
            &[0xd1cc_0012, 0x23ca_1d0c], // v_fma_f64 v[18:19], -v[12:13], v[14:15], 1.0
            &[0x7cd6_0902],              // v_cmp_ngt_f64_e32 vcc, v[2:3], v[4:5]
            &[0x7e14_2c0f],              // v_cvt_f64_u32_e32 v[10:11], s15
            &[0x7e1c_4b0c],              // v_rcp_f64_e32 v[14:15], v[12:13]
            &[0xd06d_0108, 0x0000_0902], // v_cmp_neq_f64_e64 s[8:9], |v[2:3]|, s[4:5]
        ]);
        let p = plan(&code, 0xf0);
        assert_eq!(p.insts, 5);
        let seg = segments(&p)[0];
        let kinds: Vec<Kind> = seg.steps.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::F64 { op: FloatOp::Fma, acc: false, abs: 0, neg: 0b001 },
                Kind::CmpF64 { cond: Cond::Ngt, abs: 0, neg: 0 },
                Kind::CvtF64 { signed: false },
                Kind::F64 { op: FloatOp::Rcp, acc: false, abs: 0, neg: 0 },
                Kind::CmpF64 { cond: Cond::Neq, abs: 0b001, neg: 0 },
            ]
        );
        assert_eq!(seg.masks_out, [MaskReg::Vcc, MaskReg::Sgpr(8)]);
        assert!(p.uses_f32);
        assert_eq!(p.vgprs, 20);
        // f64 denormals flushed on input (MODE bit 6 clear): the interpreter's handlers, in
        // the run, for all but the conversion (exact in every MODE).
        let p = plan(&code, 0x30);
        assert_eq!(p.insts, 5);
        let compiled: Vec<Kind> = segments(&p).iter().flat_map(|s| s.steps.iter().map(|s| s.kind)).collect();
        assert_eq!(compiled, [Kind::CvtF64 { signed: false }]);
    }

    #[test]
    fn ldexp_f64_is_a_step_with_a_one_dword_exponent() {
        // Encodings by llvm-mc-15 (gfx90a); the last one by hand (the assembler refuses a
        // modifier on the integer exponent).
        let code = insts(&[
            &[0xd284_0032, 0x0001_4132], // v_ldexp_f64 v[50:51], v[50:51], 32
            &[0xd284_0104, 0x2003_ff00], // v_ldexp_f64 v[4:5], -|v[0:1]|, v255
            &[0xd284_0004, 0x4002_0500], // v_ldexp_f64 v[4:5], v[0:1], -v2
        ]);
        let p = plan(&code, 0xf0);
        assert_eq!(p.insts, 3);
        let seg = segments(&p)[0];
        let kinds: Vec<Kind> = seg.steps.iter().map(|s| s.kind).collect();
        // (The interpreter ignores a negation of the integer exponent: so does the step.)
        let plain = Kind::LdexpF64 { abs: false, neg: false };
        assert_eq!(kinds, [plain, Kind::LdexpF64 { abs: true, neg: true }, plain]);
        assert_eq!(seg.uniforms, [Uniform::Const(32)]);
        assert_eq!(seg.steps[1].src[..2], [Some(Src::Vgpr(0)), Some(Src::Vgpr(255))]);
        // The exponent is one register: v255 is the last one read.
        assert_eq!(p.vgprs, 256);
        // f64 denormals flushed: the interpreter's handlers.
        let p = plan(&code, 0x30);
        assert!(segments(&p).iter().all(|s| s.steps.is_empty()), "{p:#?}");
    }

    #[test]
    fn mad_u64_u32_is_a_step_with_dword_factors_and_a_pair_addend() {
        // Encodings by llvm-mc-15 (gfx90a).
        let code = insts(&[
            &[0xd1e8_0604, 0x0408_0501], // v_mad_u64_u32 v[4:5], s[6:7], v1, s2, v[2:3]
            &[0xd1e8_6a08, 0x021e_0202], // v_mad_u64_u32 v[8:9], vcc, s2, v1, 7
            &[0xd1e8_8804, 0x002a_0300], // v_mad_u64_u32 v[4:5], s[8:9], v0, v1, s[10:11] clamp
        ]);
        let p = plan(&code, 0xf0);
        assert_eq!(p.insts, 3);
        let seg = segments(&p)[0];
        let kinds: Vec<Kind> = seg.steps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [Kind::MadU64U32, Kind::MadU64U32], "clamp is left to the interpreter");
        assert_eq!(seg.steps[0].src, [Some(Src::Vgpr(1)), Some(Src::Uniform(0)), Some(Src::Vgpr(2))]);
        // The constant addend is a pair of uniform dwords: 7 and its high dword, 0.
        assert_eq!(seg.steps[1].src, [Some(Src::Uniform(1)), Some(Src::Vgpr(1)), Some(Src::Uniform(2))]);
        assert_eq!(seg.uniforms, [Uniform::Sgpr(2), Uniform::Sgpr(2), Uniform::Const(7), Uniform::Const(0)]);
        assert_eq!(seg.masks_out, [MaskReg::Sgpr(6), MaskReg::Vcc]);
        assert_eq!([seg.steps[0].mask_out, seg.steps[1].mask_out], [Some(0), Some(1)]);
        // The destination pair v[8:9] is the last register written.
        assert_eq!(p.vgprs, 10);
    }

    #[test]
    fn a_carry_chain_reads_its_carry_from_the_run_and_writes_vcc_once() {
        let p = plan(&insts(&[&ADD_CO, &ADDC]), 0xf0);
        assert_eq!(p.insts, 2);
        let seg = segments(&p)[0];
        assert_eq!(seg.steps[0].src[0], Some(Src::Uniform(0)));
        assert_eq!(seg.uniforms, vec![Uniform::Sgpr(0)]);
        assert_eq!(seg.steps[1].mask_in, Some(MaskSrc::Step(0)));
        assert_eq!(seg.masks_out, vec![MaskReg::Vcc]);
        assert!(seg.masks_in.is_empty());
        assert_eq!((p.bytes, p.vgprs), (8, 4));
    }

    #[test]
    fn a_mask_read_as_a_uniform_value_after_its_segment_wrote_it_starts_a_new_segment() {
        let p = plan(&insts(&[&CMP_S4, &CNDMASK_S4, &ADD_S4]), 0xf0);
        assert_eq!(p.insts, 3);
        let segs = segments(&p);
        assert_eq!(segs.len(), 2, "v_add_u32 reads s4, which the compare wrote: {p:#?}");
        assert_eq!(segs[0].steps[1].mask_in, Some(MaskSrc::Step(0)));
        assert_eq!(segs[0].masks_out, vec![MaskReg::Sgpr(4)]);
        assert_eq!(segs[1].uniforms, vec![Uniform::Sgpr(4)]);
    }

    #[test]
    fn scalar_ops_move_past_the_vector_instructions_that_do_not_depend_on_them() {
        const S_ADD_S4: [u32; 1] = [0x8104_8104]; // s_add_i32 s4, s4, 1
        const S_AND_VCC: [u32; 1] = [0x8686_066a]; // s_and_b64 s[6:7], vcc, s[6:7]
        const SAVEEXEC: [u32; 1] = [0xbe86_2008]; // s_and_saveexec_b64 s[6:7], s[8:9]
        const S_MOV_S0: [u32; 1] = [0xbe80_0087]; // s_mov_b32 s0, 7
        let shape = |p: &Plan| -> Vec<&'static str> {
            p.items
                .iter()
                .map(|i| match i {
                    Item::Vector(_) => "vector",
                    Item::Scalar(_) => "scalar",
                    _ => "other",
                })
                .collect()
        };
        // The FMA reads neither s0 nor anything the move writes: one segment, then the move.
        let p = plan(&insts(&[&ADD_CO, &S_MOV_S0, &FMA]), 0xf0);
        assert_eq!((shape(&p), p.deferred), (vec!["vector", "scalar"], 1));
        // A vector instruction that reads what the scalar op writes stays behind it.
        let p = plan(&insts(&[&ADD_CO, &S_MOV_S0, &ADD_CO]), 0xf0);
        assert_eq!((shape(&p), p.deferred), (vec!["vector", "scalar", "vector"], 0), "v_add_co reads s0");
        let p = plan(&insts(&[&ADD_S4, &S_ADD_S4, &ADD_S4]), 0xf0);
        assert_eq!(shape(&p), vec!["vector", "scalar", "vector"], "v_add_u32 reads s4");
        // One that writes what it reads: the carry-out into VCC after s_and_b64 read VCC.
        let p = plan(&insts(&[&ADD_CO, &S_AND_VCC, &ADD_CO]), 0xf0);
        assert_eq!(shape(&p), vec!["vector", "scalar", "vector"], "v_add_co writes VCC");
        // Several ops keep their order; the segment is the same one.
        let p = plan(&insts(&[&FMA, &S_ADD, &S_MOV_S0, &FMA, &S_ADD_S4, &FMA]), 0xf0);
        assert_eq!((shape(&p), p.deferred), (vec!["vector", "scalar", "scalar", "scalar"], 3));
        let Item::Scalar(first) = p.items[1] else { unreachable!() };
        assert!(matches!(first.kind, SKind::Add { .. }) && first.dst == Some(SReg::Sgpr(3)));
        // EXEC writers never move: every vector instruction reads EXEC.
        let p = plan(&insts(&[&FMA, &SAVEEXEC, &FMA]), 0xf0);
        assert_eq!((shape(&p), p.deferred), (vec!["vector", "scalar", "vector"], 0));
        // Waits and nops need no code and keep the segment open; a moved op still moves.
        const WAIT_VM: [u32; 1] = [0xbf8c_0f70]; // s_waitcnt vmcnt(0)
        const NOP: [u32; 1] = [0xbf80_0000]; // s_nop 0
        let p = plan(&insts(&[&FMA, &WAIT_VM, &S_MOV_S0, &NOP, &FMA]), 0xf0);
        assert_eq!((shape(&p), p.deferred, p.insts, p.bytes), (vec!["vector", "scalar"], 1, 5, 28));
        assert_eq!(segments(&p)[0].steps.len(), 2);
    }

    #[test]
    fn a_lane_mask_written_again_unread_is_not_kept() {
        const LOAD: [u32; 2] = [0xdc50_8000, 0x047f_0004]; // global_load_dword v4, v[4:5], off
        const S_AND_VCC: [u32; 1] = [0x8686_066a]; // s_and_b64 s[6:7], vcc, s[6:7]
        const S_MOV_VCC: [u32; 1] = [0xbeea_0180]; // s_mov_b64 vcc, 0
        const GETPC: [u32; 1] = [0xbe80_1c00]; // s_getpc_b64 s[0:1]
        let first = |p: &Plan| match &p.items[0] {
            Item::Vector(seg) => seg.masks_read_later.clone(),
            other => panic!("a segment first, not {other:?}"),
        };
        // The next address sum writes VCC again; a failing load in between ends the wave.
        assert_eq!(first(&plan(&insts(&[&ADD_CO, &LOAD, &ADD_CO]), 0xf0)), vec![false]);
        assert_eq!(first(&plan(&insts(&[&ADD_CO, &S_MOV_VCC]), 0xf0)), vec![false]);
        // Read before it is written again, or the run ends first.
        assert_eq!(first(&plan(&insts(&[&ADD_CO, &LOAD, &S_AND_VCC, &ADD_CO]), 0xf0)), vec![true]);
        assert_eq!(first(&plan(&insts(&[&ADD_CO, &LOAD]), 0xf0)), vec![true]);
        // An interpreted instruction may stop the run with the wave going on.
        assert_eq!(first(&plan(&insts(&[&ADD_CO, &GETPC, &ADD_CO]), 0xf0)), vec![true]);
    }

    #[test]
    fn packed_f32_ops_are_steps_on_register_pairs() {
        // v_pk_fma_f32 v[6:7], v[0:1], s[2:3], v[4:5] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_hi:[0,1,0]
        const PK_FMA: [u32; 2] = [0xd3b0_4a06, 0x1410_0500];
        const PK_ADD_ONE: [u32; 2] = [0xd3b2_4006, 0x1801_e500]; // v_pk_add_f32 v[6:7], v[0:1], 1.0
        const PK_MUL_CLAMP: [u32; 2] = [0xd3b1_c006, 0x1802_0500]; // v_pk_mul_f32 v[6:7], v[0:1], v[2:3] clamp
        let p = plan(&insts(&[&PK_FMA, &PK_ADD_ONE]), 0xf0);
        let seg = segments(&p)[0];
        let kind = Kind::PkF32 { op: FloatOp::Fma, sel: 0b001, sel_hi: 0b110, neg_lo: 0, neg_hi: 0b010 };
        assert_eq!(seg.steps[0].kind, kind);
        assert_eq!(seg.steps[0].src, [Some(Src::Vgpr(0)), Some(Src::Uniform(0)), Some(Src::Vgpr(4))]);
        assert_eq!(seg.steps[1].src, [Some(Src::Vgpr(0)), Some(Src::Uniform(2)), None]);
        let one = 1.0f32.to_bits();
        assert_eq!(seg.uniforms, vec![Uniform::Sgpr(2), Uniform::Sgpr(3), Uniform::Const(one), Uniform::Const(one)]);
        assert_eq!((p.vgprs, p.uses_f32), (8, true));
        // Clamp, and any rounding but nearest-even, are the interpreter's.
        let p = plan(&insts(&[&PK_FMA, &PK_MUL_CLAMP]), 0xf0);
        assert_eq!(p.items[1], Item::Interpreted { index: 1, offset: 8 });
        let p = plan(&insts(&[&PK_FMA]), 0xf3);
        assert_eq!(p.items[0], Item::Interpreted { index: 0, offset: 0 });
    }

    #[test]
    fn scalar_code_is_handed_to_the_interpreter_and_f32_code_needs_round_to_nearest_even() {
        let p = plan(&insts(&[&FMA, &S_ADD, &FMA]), 0xf0);
        assert_eq!((p.insts, p.compiled_insts, p.items.len()), (3, 3, 2));
        // s_add_i32 is compiled in, after both FMAs (neither reads s3); s_getpc is not.
        assert_eq!(segments(&p)[0].steps.len(), 2);
        assert!(matches!(p.items[1], Item::Scalar(ScalarOp { kind: SKind::Add { signed: true }, .. })));
        assert_eq!(p.deferred, 1);
        const GETPC: [u32; 1] = [0xbe80_1c00]; // s_getpc_b64 s[0:1]
        let p = plan(&insts(&[&FMA, &GETPC, &FMA]), 0xf0);
        assert_eq!(p.items[1], Item::Interpreted { index: 1, offset: 8 });
        assert!(p.uses_f32);
        // Round toward zero: the translated host arithmetic rounds to nearest, so the
        // interpreter's handler runs the FMA inside the run, and the run does not depend on
        // MODE.
        let p = plan(&insts(&[&FMA, &ADD_S4]), 0xf3);
        assert_eq!((p.insts, p.compiled_insts), (2, 1));
        assert_eq!(p.items[0], Item::Interpreted { index: 0, offset: 0 });
        assert!(!p.uses_f32);
        // Integer code does not depend on MODE.
        assert_eq!(plan(&insts(&[&ADD_CO, &ADDC]), 0xf3).insts, 2);
    }

    #[test]
    fn pk_mov_of_vgpr_pairs_is_a_step_and_other_forms_are_interpreted_in_the_run() {
        const PK_MOV: [u32; 2] = [0xd3b3_4800, 0x1802_0902]; // v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[1,0]
        const PK_MOV_S: [u32; 2] = [0xd3b3_4000, 0x1802_0802]; // v_pk_mov_b32 v[0:1], s[2:3], v[4:5]
        let p = plan(&insts(&[&PK_MOV, &PK_MOV_S, &ADD_S4]), 0xf0);
        assert_eq!((p.insts, p.compiled_insts, p.vgprs), (3, 2, 6));
        let segs = segments(&p);
        assert_eq!(segs[0].steps[0].kind, Kind::PkMov { hi0: true, hi1: false });
        assert_eq!(segs[0].steps[0].src, [Some(Src::Vgpr(2)), Some(Src::Vgpr(4)), None]);
        assert_eq!(p.items[1], Item::Interpreted { index: 1, offset: 8 });
    }

    #[test]
    fn lane_crossbar_ops_stay_within_the_wave_and_lds_accesses_do_not() {
        // Encodings by llvm-mc-15 (gfx90a).
        let crossbar: [(&str, [u32; 2]); 3] = [
            ("ds_bpermute_b32 v1, v2, v3", [0xd87e_0000, 0x0100_0302]),
            ("ds_permute_b32 v1, v2, v3 offset:4", [0xd87c_0004, 0x0100_0302]),
            ("ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,16)", [0xd87a_401f, 0x0100_0002]),
        ];
        let lds: [(&str, [u32; 2]); 2] =
            [("ds_read_b32 v1, v2", [0xd86c_0000, 0x0100_0002]), ("ds_write_b32 v1, v2", [0xd81a_0000, 0x0000_0201])];
        for (name, words) in crossbar {
            let inst = decode(&words, Target::Gfx90a).expect(name);
            assert!(!reaches_beyond_registers(&inst), "{name}");
            let p = plan(&insts(&[&FMA, &words, &FMA]), 0xf0);
            assert_eq!(p.insts, 3, "{name} is interpreted inside the run");
            assert!(p.shared.is_empty(), "{name}: nothing for waves in step to take turns at");
        }
        for (name, words) in lds {
            assert!(reaches_beyond_registers(&decode(&words, Target::Gfx90a).expect(name)), "{name}");
        }
    }

    #[test]
    fn a_branch_or_the_end_ends_a_run_and_what_a_run_must_not_hold_ends_it_before() {
        const BRANCH: [u32; 1] = [0xbf84_fff3]; // s_cbranch_scc0 65523
        const ENDPGM: [u32; 1] = [0xbf81_0000]; // s_endpgm
        const SETREG: [u32; 2] = [0xba00_0001, 0x0000_0003]; // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 1), 3
        let p = plan(&insts(&[&FMA, &S_ADD, &BRANCH, &FMA]), 0xf0);
        assert_eq!(p.insts, 3);
        assert!(p.shared.is_empty(), "registers only");
        assert_eq!(plan(&insts(&[&FMA, &ENDPGM, &FMA]), 0xf0).insts, 2);
        assert_eq!(plan(&insts(&[&FMA, &SETREG, &FMA]), 0xf0).insts, 1);
    }
}
