//! Matrix fused multiply-add (`v_mfma_*`, and the 4:2-sparse `v_smfmac_*` of gfx942): a
//! whole-wave matrix product whose operands are spread over the lanes of the A, B and C
//! registers.
//!
//! An instruction is executed in three steps, so that the arithmetic is a plain dense
//! loop the host compiler vectorises: gather A, B and C out of the registers into dense
//! row-major blocks (through a per-op table of register positions, built once), compute
//! `D = A·B + C` block by block, and scatter D back. The layouts are in [`layout`], the
//! shapes in [`shape`], element conversions in [`elem`].
//!
//! Choices where AMD's documents are silent:
//! - EXEC does not mask an MFMA: the compiler only issues them with a full EXEC, and the
//!   operation is defined on the whole wave, so every lane of D is written.
//! - How products are summed follows the hardware where it is known ([`accum`]): f32
//!   inputs by one fused multiply-add per product in `k` order; gfx90a's f16 and bf16 in
//!   groups of two or four products summed pairwise, with denormals flushed. Elsewhere
//!   (gfx942/gfx950 f16, bf16, xf32, fp8) products are formed exactly where the accumulator
//!   type allows and summed in `k` order with round-to-nearest-even and denormals kept;
//!   that hardware sums a group in a wider fixed-point form, so sums of many terms may
//!   differ from it in the last bits.
//! - i8 products accumulate in i32 with wrap-around (gfx950 with MODE.FP16_OVFL: each
//!   multiply-add saturates, and f32 infinities become ±MAX; see `exec`).
//! - gfx950 reads fp8/bf8 inputs as OCP E4M3/E5M2 (gfx942: FNUZ), see [`elem`].
//! - Block scaling (`v_mfma_scale_*`): each product is formed exactly, multiplied exactly by
//!   its row's and column's E8M0 scales (`2^(sa-127) * 2^(sb-127)`), rounded once to f32 and
//!   summed in `k` order; a NaN scale (0xff) makes the products it scales NaN. The guide
//!   says hardware adds the scales to the product exponents, which is the same up to the
//!   rounding of sums.
//! - A standalone `v_mfma_ld_scale_b32` changes no state: the guide says scales are used by
//!   the one fused instruction and do not carry forward to other MFMAs.

mod accum;
mod dense;
pub mod elem;
pub mod layout;
#[cfg(target_arch = "x86_64")]
mod pairs_avx2;
pub mod shape;

use self::accum::{Accum, Cdna2Bf16, Cdna2Exact, FusedF32, SatI32};
use self::elem::{Input, Small};
use self::layout::Pos;
use self::shape::{Acc, Elem, Shape};
use crate::gpu::exec::ops::valu::minifloat::e8m0;
use crate::gpu::exec::wave::{Lanes, Wave, LANES};
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler};
use crate::isa::{Ext, Inst, Mfma, MfmaScale, Op, OpClass, Operand, Target, Ty};
use std::sync::OnceLock;

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    if op == Op::VMfmaLdScaleB32 {
        return Some(ld_scale as Handler);
    }
    (op.info().class == OpClass::Mfma && plan(op).is_some()).then_some(exec as Handler)
}

/// A standalone `v_mfma_ld_scale_b32` (not fused with the MFMA after it): no effect.
fn ld_scale(_: &mut Wave, _: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    Ok(Flow::Next)
}

/// Register positions of one op's operands, in the dense order the arithmetic reads them.
struct Plan {
    shape: Shape,
    /// `A[b][i][k]` at index `(b*k + k)*m + i`: k-major, each `k` a column of A, which the
    /// registers hold as `m` consecutive lanes.
    a: Box<[Pos]>,
    /// `B[b][k][j]` at index `(b*k + k)*n + j`.
    b: Box<[Pos]>,
    /// `C/D[b][i][j]` at index `(b*m + i)*n + j`.
    d: Box<[Pos]>,
    /// Mixed-format (`*_f8f6f4`) ops: A's row `i` (B's column `i`), element `k` at index
    /// `i*k + k`, for 8-, 6- and 4-bit elements.
    small: [Box<[Pos]>; 3],
    /// `small` k-major (`k*m + i`) as runs of `m` consecutive lanes, where no element
    /// straddles two registers (8- and 4-bit elements).
    small_runs: [Option<Box<[LaneRun]>>; 3],
    /// `a` and `b` as runs of consecutive lanes ([`LaneRun`]), one per `(b, k)`, when
    /// every element lies inside one register (8-, 16- and 32-bit elements): a gather is then
    /// a shift and a conversion of consecutive words, which the host does several at once.
    a_runs: Option<Box<[LaneRun]>>,
    b_runs: Option<Box<[LaneRun]>>,
}

/// `len` elements (the operand's `m` or `n`) in consecutive lanes from `lane` of one
/// register, each at bit `bit` of its lane's word (64-bit elements: of the register pair
/// `reg`, `reg + 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LaneRun {
    reg: usize,
    lane: usize,
    bit: u32,
}

/// `positions` (`len` at a time) as runs of consecutive lanes, if each group is one.
fn lane_runs(positions: &[Pos], len: usize, bits: usize) -> Option<Box<[LaneRun]>> {
    if !matches!(bits, 4 | 8 | 16 | 32 | 64) {
        return None;
    }
    positions
        .chunks_exact(len)
        .map(|group| {
            let p = group[0];
            let consecutive =
                group.iter().enumerate().all(|(t, q)| q.reg == p.reg && q.bit == p.bit && q.lane == p.lane + t);
            // A 64-bit element is a register pair: low word in `reg`, high in `reg + 1`.
            let in_word = if bits == 64 { p.bit == 0 } else { p.bit + bits <= 32 };
            (consecutive && p.lane + len <= LANES && in_word).then_some(LaneRun {
                reg: p.reg,
                lane: p.lane,
                bit: p.bit as u32,
            })
        })
        .collect()
}

impl Plan {
    fn new(shape: Shape) -> Plan {
        let Shape { m, n, k, blocks, .. } = shape;
        let mut a = Vec::with_capacity(blocks * m * k);
        let mut b = Vec::with_capacity(blocks * k * n);
        let mut d = Vec::with_capacity(blocks * m * n);
        for blk in 0..blocks {
            for i in 0..m {
                d.extend((0..n).map(|j| shape.d_pos(blk, i, j)));
            }
            for kk in 0..k {
                a.extend((0..m).map(|i| shape.a_pos(blk, i, kk)));
                b.extend((0..n).map(|j| shape.b_pos(blk, kk, j)));
            }
        }
        // `run_in_registers` relies on each D row being `n` consecutive lanes of a register.
        debug_assert!(
            shape.acc == Acc::F64
                || d.chunks_exact(n)
                    .all(|row| row.iter().enumerate().all(|(j, p)| p.reg == row[0].reg && p.lane == row[0].lane + j))
        );
        let small = [8, 6, 4].map(|bits| {
            if !shape.mixed {
                return Box::default();
            }
            (0..m).flat_map(|i| (0..k).map(move |kk| layout::f8f6f4_pos(m, i, kk, bits))).collect()
        });
        let (a_runs, b_runs) = (lane_runs(&a, m, shape.a.bits()), lane_runs(&b, n, shape.b.bits()));
        let small_runs = [8, 6, 4].map(|bits| {
            if !shape.mixed {
                return None;
            }
            let k_major: Vec<Pos> =
                (0..k).flat_map(|kk| (0..m).map(move |i| layout::f8f6f4_pos(m, i, kk, bits))).collect();
            lane_runs(&k_major, m, bits)
        });
        Plan { shape, a: a.into(), b: b.into(), d: d.into(), small, small_runs, a_runs, b_runs }
    }

    /// The mixed-format positions of `bits`-wide elements.
    fn small(&self, bits: usize) -> &[Pos] {
        &self.small[Self::small_index(bits)]
    }

    /// The mixed-format runs of `bits`-wide elements, if they have them.
    fn small_runs(&self, bits: usize) -> Option<&[LaneRun]> {
        self.small_runs[Self::small_index(bits)].as_deref()
    }

    fn small_index(bits: usize) -> usize {
        match bits {
            8 => 0,
            6 => 1,
            _ => 2,
        }
    }
}

/// The plan of `op`, by its index (a hash lookup per instruction was a few percent of a
/// short op's time).
fn plan(op: Op) -> Option<&'static Plan> {
    static PLANS: OnceLock<Vec<Option<Plan>>> = OnceLock::new();
    PLANS
        .get_or_init(|| {
            (0..)
                .map_while(Op::from_index)
                .map(|op| (op.info().class == OpClass::Mfma).then(|| Shape::of(op).map(Plan::new)).flatten())
                .collect()
        })
        .get(op as usize)?
        .as_ref()
}

/// The broadcast and negation controls of one instruction, validated for its op.
#[derive(Debug, Clone, Copy, Default)]
struct Controls {
    /// A of block `b` is read from block `(b & !group_mask) | abid`.
    a_group_mask: usize,
    abid: usize,
    /// `blgp`: which lanes B is read from.
    blgp: u8,
    /// gfx942 f64: negate A, B, C (bits 0..2; the `blgp` field).
    neg: u8,
}

impl Controls {
    fn of(inst: &Inst, shape: &Shape) -> Result<Controls, ExecError> {
        let Ext::Mfma(f) = inst.ext else { return Ok(Controls::default()) };
        let name = inst.op.name();
        let refuse =
            |what: &str| Err(ExecError::Invalid(format!("{name}: {what} is not supported by this instruction")));
        let mut c = Controls::default();
        if f.cbsz != 0 || f.abid != 0 {
            let groups_log2 = shape.blocks.trailing_zeros() as u8;
            if shape.blocks == 1 || f.cbsz > groups_log2 || usize::from(f.abid) >= 1 << f.cbsz {
                return refuse(&format!("cbsz:{} abid:{}", f.cbsz, f.abid));
            }
            c.a_group_mask = (1 << f.cbsz) - 1;
            c.abid = usize::from(f.abid);
        }
        if f.blgp != 0 {
            let gfx942 = inst.target.is_gfx94x_family();
            match shape.a {
                Elem::F64 if gfx942 => c.neg = f.blgp,
                Elem::F64 => return refuse(&format!("blgp:{}", f.blgp)),
                _ if !gfx942 || shape.a == Elem::F32 || shape.blocks > 1 => c.blgp = f.blgp,
                _ => return refuse(&format!("blgp:{}", f.blgp)),
            }
        }
        Ok(c)
    }

    /// The lane B's value for lane `l` comes from.
    fn b_lane(&self, l: usize) -> usize {
        match self.blgp {
            0 => l,
            1 => l % 32,
            2 => 32 + l % 32,
            3 => (l + 16) % 64,
            g => 16 * usize::from(g - 4) + l % 16,
        }
    }
}

/// The registers of one source operand (up to 32), or a constant for every element.
enum Regs<'w> {
    File(&'w [Lanes]),
    Constant(u64),
}

impl<'w> Regs<'w> {
    fn read(w: &'w Wave, inst: &Inst, i: usize) -> Result<Regs<'w>, ExecError> {
        let slot = inst.info().src[i];
        let op = inst.src[i];
        match op {
            Operand::Vgpr(_) | Operand::Agpr(_) => Ok(Regs::File(registers(w, op, usize::from(inst.src_regs(i)))?)),
            // 64-bit elements: A and B are register pairs, an f64 C is wider (its type says).
            _ if slot.regs == 2 || slot.ty == Ty::F64 => {
                Ok(Regs::Constant(w.read_scalar64(op, slot.ty, inst.literal)?))
            }
            _ => Ok(Regs::Constant(u64::from(w.read_scalar32(op, slot.ty, inst.literal)?))),
        }
    }

    /// The `bits`-wide elements at `positions` (each read from lane `lane(p)`), into `out`.
    #[inline(always)]
    fn elements(&self, positions: &[Pos], lane: impl Fn(Pos) -> usize, bits: usize, out: &mut [u64]) {
        match self {
            // Elements within one register (all but 6-bit ones and 64-bit pairs).
            Regs::File(r) if bits <= 32 && positions.iter().all(|p| p.bit + bits <= 32) => {
                let mask = (1u64 << bits) - 1;
                for (o, &p) in out.iter_mut().zip(positions) {
                    *o = u64::from(r[p.reg][lane(p)] >> p.bit) & mask;
                }
            }
            _ => {
                for (o, &p) in out.iter_mut().zip(positions) {
                    *o = self.get(p, lane(p), bits);
                }
            }
        }
    }

    /// The `bits`-wide element at `p` (read from lane `lane` instead of `p.lane`); a 6-bit
    /// element may continue in the next register.
    #[inline]
    fn get(&self, p: Pos, lane: usize, bits: usize) -> u64 {
        match self {
            Regs::File(r) if bits == 64 => u64::from(r[p.reg][lane]) | u64::from(r[p.reg + 1][lane]) << 32,
            Regs::File(r) if p.bit + bits > 32 => {
                let v = u64::from(r[p.reg][lane] >> p.bit) | u64::from(r[p.reg + 1][lane]) << (32 - p.bit);
                v & ((1u64 << bits) - 1)
            }
            Regs::File(r) => u64::from(r[p.reg][lane] >> p.bit) & ((1u64 << bits) - 1),
            Regs::Constant(v) => *v,
        }
    }
}

/// MODE bit 23, FP16_OVFL (set by dispatch from the kernel descriptor).
const MODE_FP16_OVFL: u32 = 1 << 23;

fn exec(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let plan = plan(inst.op).ok_or(ExecError::Unimplemented(inst.op))?;
    let shape = plan.shape;
    // CDNA4 guide 7.1.2/7.1.5 ("Clamp ... uses the FP16_OVFL bit from MODE"): with the bit
    // set an f32 result that overflows is ±MAX instead of ±inf, an i32 one saturates.
    let saturate = inst.target == Target::Gfx950 && w.mode & MODE_FP16_OVFL != 0;
    if shape.mixed {
        run_mixed(w, inst, plan)?;
    } else if shape.sparse {
        match shape.acc {
            Acc::F32 => run_sparse::<f32>(w, inst, plan),
            Acc::I32 if saturate => run_sparse::<SatI32>(w, inst, plan),
            Acc::I32 => run_sparse::<i32>(w, inst, plan),
            Acc::F64 => Err(ExecError::Unimplemented(inst.op)),
        }?;
    } else {
        let controls = Controls::of(inst, &shape)?;
        match shape.acc {
            Acc::F32 => match (inst.target, shape.a) {
                (_, Elem::F32) => run_in_registers::<FusedF32>(w, inst, plan, &controls),
                (Target::Gfx90a, Elem::F16) => run_in_registers::<Cdna2Exact<4>>(w, inst, plan, &controls),
                (Target::Gfx90a, Elem::Bf16) if inst.op.name().ends_with("_1k") => {
                    run_in_registers::<Cdna2Bf16<4>>(w, inst, plan, &controls)
                }
                (Target::Gfx90a, Elem::Bf16) => run_in_registers::<Cdna2Bf16<2>>(w, inst, plan, &controls),
                _ if FusedF32::exact_products(shape.a, shape.b) => {
                    run_in_registers::<FusedF32>(w, inst, plan, &controls)
                }
                _ => run_in_registers::<f32>(w, inst, plan, &controls),
            },
            Acc::I32 if saturate => run_in_registers::<SatI32>(w, inst, plan, &controls),
            Acc::I32 => run_in_registers::<i32>(w, inst, plan, &controls),
            Acc::F64 => run_f64(w, inst, plan, &controls),
        }?;
    }
    if saturate && shape.acc == Acc::F32 {
        // Every infinity becomes ±MAX, also one that comes from an infinite input (as the
        // guide's FP16_OVFL table says for the conversions); NaN stays NaN.
        for r in registers_mut(w, inst.dst[0], shape.acc_regs())? {
            for v in r.iter_mut().filter(|v| **v & 0x7fff_ffff == 0x7f80_0000) {
                *v = (*v & 0x8000_0000) | f32::MAX.to_bits();
            }
        }
    }
    Ok(Flow::Next)
}

/// Largest A or B: 64 lanes × 16 elements (gfx950's 4-register i8 operands).
const MAX_AB: usize = 64 * 16;

/// Gathers A and B into dense row-major blocks (`A[b][i][k]`, `B[b][k][j]`), applying the
/// broadcast controls.
fn gather_ab<T: Accum>(
    w: &Wave,
    inst: &Inst,
    plan: &Plan,
    c: &Controls,
    a: &mut [T],
    b: &mut [T],
) -> Result<(), ExecError> {
    let s = &plan.shape;
    let (ra, rb) = (Regs::read(w, inst, 0)?, Regs::read(w, inst, 1)?);
    let (ia, ib) = (Input::of(s.a, inst.target), Input::of(s.b, inst.target));
    let block_a = s.m * s.k;
    match (&ra, plan.a_runs.as_deref()) {
        (Regs::File(r), Some(runs)) if s.a.bits() <= 32 => {
            for (blk, out) in a.chunks_exact_mut(block_a).enumerate() {
                let from = (blk & !c.a_group_mask) | c.abid;
                gather_runs(ia, r, &runs[from * s.k..][..s.k], s.m, s.a.bits(), out);
            }
        }
        _ => {
            // Raw elements first, converted after: two plain loops the compiler specialises
            // (the register access and the input format are the same for every element).
            let mut raw = vec![0u64; a.len()];
            if c.a_group_mask == 0 {
                ra.elements(&plan.a, |p| p.lane, s.a.bits(), &mut raw);
            } else {
                let at = |idx: usize| plan.a[(((idx / block_a) & !c.a_group_mask) | c.abid) * block_a + idx % block_a];
                let positions: Vec<Pos> = (0..a.len()).map(at).collect();
                ra.elements(&positions, |p| p.lane, s.a.bits(), &mut raw);
            }
            convert(ia, &raw, a);
        }
    }
    match (&rb, plan.b_runs.as_deref()) {
        (Regs::File(r), Some(runs)) if c.blgp == 0 && s.b.bits() <= 32 => gather_runs(ib, r, runs, s.n, s.b.bits(), b),
        _ => {
            let mut raw = vec![0u64; b.len()];
            rb.elements(&plan.b, |p| c.b_lane(p.lane), s.b.bits(), &mut raw);
            convert(ib, &raw, b);
        }
    }
    Ok(())
}

/// The elements of `runs` (`len` lanes each) of `regs`, converted into `out` run by run.
#[inline(always)]
fn gather_runs<T: Accum>(input: Input, regs: &[Lanes], runs: &[LaneRun], len: usize, bits: usize, out: &mut [T]) {
    for (run, out) in runs.iter().zip(out.chunks_exact_mut(len)) {
        T::from_words(input, &regs[run.reg][run.lane..run.lane + len], run.bit, bits, out);
    }
}

/// `out[i] = T::input(input, raw[i])`.
#[inline(always)]
fn convert<T: Accum>(input: Input, raw: &[u64], out: &mut [T]) {
    T::convert(input, raw, out);
}

/// 32-bit accumulators: every row of a D block is a run of `n` consecutive lanes of one
/// register, so C is copied into D's registers and the product accumulates straight into
/// them (no gather or scatter of the largest operand).
fn run_in_registers<T: Accum + bytemuck::Pod>(
    w: &mut Wave,
    inst: &Inst,
    plan: &Plan,
    c: &Controls,
) -> Result<(), ExecError> {
    let s = &plan.shape;
    OPERANDS.with_borrow_mut(|scratch| {
        // Every element is written by the gather before it is read.
        let elements = plan.a.len() + plan.b.len();
        let words = (elements * size_of::<T>()).div_ceil(size_of::<u64>());
        if scratch.len() < words {
            scratch.resize(words, 0);
        }
        let all: &mut [T] = bytemuck::cast_slice_mut(&mut scratch[..words]);
        let (a, b) = all.split_at_mut(plan.a.len());
        let b = &mut b[..plan.b.len()];
        gather_ab(w, inst, plan, c, a, b)?;
        let d = c_into_d(w, inst, s)?;
        T::mac_into_registers(d, &plan.d, s, a, b);
        Ok(())
    })
}

thread_local! {
    /// A and B of the instruction being executed, reused: a fresh zeroed buffer per
    /// instruction (or a fixed array for the largest op, a 16 KiB memset) cost a tenth of a
    /// short op's time.
    static OPERANDS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Copies C into D's registers (unless they are the same) and returns D's registers.
fn c_into_d<'w>(w: &'w mut Wave, inst: &Inst, s: &Shape) -> Result<&'w mut [Lanes], ExecError> {
    let (dst, src_c, regs) = (inst.dst[0], inst.src[2], s.acc_regs());
    if src_c != dst {
        match Regs::read(w, inst, 2)? {
            Regs::File(rc) => {
                let copy: Vec<Lanes> = rc.to_vec();
                registers_mut(w, dst, regs)?.copy_from_slice(&copy);
            }
            Regs::Constant(v) => registers_mut(w, dst, regs)?.iter_mut().for_each(|r| *r = [v as u32; 64]),
        }
    }
    registers_mut(w, dst, regs)
}

/// Scale blocks of the mixed-format ops: 32 consecutive k share a scale.
const SCALE_BLOCK: usize = 32;

/// gfx950 `*_f8f6f4` MFMAs and their block-scaled forms: A's format from cbsz, B's from blgp
/// (which therefore neither broadcast nor permute), layouts from [`layout::f8f6f4_pos`].
fn run_mixed(w: &mut Wave, inst: &Inst, plan: &Plan) -> Result<(), ExecError> {
    let s = &plan.shape;
    let (f, scale) = match inst.ext {
        Ext::Mfma(f) => (f, None),
        Ext::MfmaScale(x) => (x.mfma, Some(x)),
        _ => (Mfma::default(), None),
    };
    let format = |code: u8| {
        Small::from_code(code).ok_or_else(|| {
            ExecError::Invalid(format!("{}: format code {code} is not one of 0..=4 (cbsz/blgp)", inst.op.name()))
        })
    };
    let (fa, fb) = (format(f.cbsz)?, format(f.blgp)?);
    let (m, n, k) = (s.m, s.n, s.k);
    let scales = match scale {
        Some(x) => Some(read_scales(w, inst, &x, s)?),
        None => None,
    };
    OPERANDS.with_borrow_mut(|scratch| {
        let words = (m * k + k * n).div_ceil(2);
        if scratch.len() < words {
            scratch.resize(words, 0);
        }
        let (a, b) = bytemuck::cast_slice_mut::<u64, f32>(&mut scratch[..words]).split_at_mut(m * k);
        let b = &mut b[..k * n];
        // A k-major (`a[kk*m + i]`), B row-major (`b[kk*n + j]`); A's rows and B's columns
        // have the same layout (the ops are square), so one set of runs serves both.
        {
            let (ra, rb) = (Regs::read(w, inst, 0)?, Regs::read(w, inst, 1)?);
            small_operand(&ra, plan, fa, k, a, |i, kk| kk * m + i);
            small_operand(&rb, plan, fb, k, b, |j, kk| kk * n + j);
        }
        let d = c_into_d(w, inst, s)?;
        match &scales {
            // Products of two small floats are exact in f32 and far from its limits (at most
            // 8 significant bits, magnitudes between 2^-32 and 2^32), as `FusedF32`
            // needs.
            None => {
                dense::mac_into_registers::<FusedF32>(d, &plan.d, s, bytemuck::cast_slice(a), bytemuck::cast_slice(b))
            }
            Some((sa, sb)) => {
                for i in 0..m {
                    let p = plan.d[i * n];
                    let d_row: &mut [f32] = bytemuck::cast_slice_mut(&mut d[p.reg][p.lane..p.lane + n]);
                    for (kk, b_row) in b.chunks_exact(n).enumerate() {
                        let (av, blk) = (a[kk * m + i], kk / SCALE_BLOCK);
                        let fa = sa[i + m * blk];
                        for (j, (dv, &bv)) in d_row.iter_mut().zip(b_row).enumerate() {
                            // Exact: a product of two small floats, and powers of two in f64.
                            *dv += (f64::from(av * bv) * fa * sb[j + n * blk]) as f32;
                        }
                    }
                }
            }
        }
        Ok(())
    })
}

/// A mixed-format A (or B) in format `f`: element `kk` of row `i` (B: column `i`) into
/// `out[at(i, kk)]`, by lane runs where the format has them, else by positions.
fn small_operand(
    regs: &Regs<'_>,
    plan: &Plan,
    f: Small,
    k: usize,
    out: &mut [f32],
    at: impl Fn(usize, usize) -> usize,
) {
    let (table, bits) = (f.table(), f.bits());
    match (regs, plan.small_runs(bits)) {
        (Regs::File(r), Some(runs)) => gather_runs(Input::Table(table), r, runs, plan.shape.m, bits, out),
        _ => {
            let mut raw = vec![0u64; out.len()];
            regs.elements(plan.small(bits), |p| p.lane, bits, &mut raw);
            // Positions run along each row (column) in k.
            for (idx, &r) in raw.iter().enumerate() {
                out[at(idx / k, idx % k)] = table[r as usize];
            }
        }
    }
}

/// The E8M0 scales of a block-scaled MFMA, as f64 factors: A's row `i`, k block `blk` at
/// `i + m*blk` (the lane holding it, CDNA4 guide section 7.2.1), B's column `j` likewise.
fn read_scales(w: &Wave, inst: &Inst, x: &MfmaScale, s: &Shape) -> Result<([f64; 64], [f64; 64]), ExecError> {
    let mut out = [[0f64; 64]; 2];
    for (src, factors) in out.iter_mut().enumerate() {
        let byte = ((x.op_sel_hi >> src) & 1) << 1 | ((x.op_sel >> src) & 1);
        let lanes = s.m * s.k / SCALE_BLOCK;
        let op = x.scale[src];
        let values: Lanes = match op {
            Operand::Vgpr(_) | Operand::Agpr(_) => registers(w, op, 1)?[0].map(|v| v >> (8 * byte)),
            // "Inline constants (floats, using only the exponent portion)": 2.0 is scale 2.
            Operand::Float(f) => [f.bits32() >> 23; 64],
            _ => [w.read_scalar32(op, Ty::B32, inst.literal)? >> (8 * byte); 64],
        };
        for (f, &v) in factors.iter_mut().zip(&values).take(lanes) {
            *f = f64::from(e8m0(v));
        }
    }
    let [a, b] = out;
    Ok((a, b))
}

/// Sparse ops (`v_smfmac_*`): expand the compressed A into a dense block using the
/// index nibbles of the third source, then accumulate into D in place like a dense op.
///
/// Lane `l` holds row `l % m` of A for the logical k items of lane group `g = l / m`, laid
/// out like B's (`Shape::k_of`; gfx950's 8-register B come in two 4-register chunks): its
/// stored elements come in pairs, pair `q` being the two kept values of logical items
/// `4q .. 4q+4`; nibble `q` of the index set (bits `[1:0]` place the first value,
/// `[3:2]` the second) says where. A lane's indices take `per_lane` bits, so the index
/// register holds `32 / per_lane` sets; ABID chooses one when CBSZ is 0, else set 0 (gfx942:
/// one of four bytes for 16-bit types, one of two half-words for 8-bit ones, as AMD's
/// matrix instruction calculator lays them out; gfx950's K-doubled ops: two half-words for
/// 16-bit types and the one set for 8-bit ones, which ignore ABID, CDNA4 guide 7.5).
#[inline(never)] // Its 16 KiB of arrays stay out of `exec`'s frame (stack probes on every op).
fn run_sparse<T: Accum + bytemuck::Pod>(w: &mut Wave, inst: &Inst, plan: &Plan) -> Result<(), ExecError> {
    let s = &plan.shape;
    let per_lane = s.per_lane();
    // Logical A and B hold up to 32 elements per lane (gfx950's 8-bit ops).
    let (mut a, mut b) = ([T::default(); 2 * MAX_AB], [T::default(); 2 * MAX_AB]);
    let (a, b) = (&mut a[..s.m * s.k], &mut b[..plan.b.len()]);
    {
        let (ra, rb) = (Regs::read(w, inst, 0)?, Regs::read(w, inst, 1)?);
        let Operand::Vgpr(_) = inst.src[2] else { return Err(ExecError::Register(inst.src[2])) };
        let index = registers(w, inst.src[2], 1)?[0];
        let (cbsz, abid) = match inst.ext {
            Ext::Mfma(f) => (f.cbsz, usize::from(f.abid)),
            _ => (0, 0),
        };
        let set = if cbsz == 0 { abid % (32 / per_lane) } else { 0 };
        let (ia, ib) = (Input::of(s.a, inst.target), Input::of(s.b, inst.target));
        let bits = s.a.bits();
        for (lane, &idx) in index.iter().enumerate() {
            let (row, group) = (lane % s.m, lane / s.m);
            let nibbles = idx >> (set * per_lane);
            for q in 0..per_lane / 4 {
                let nibble = nibbles >> (4 * q);
                for kept in 0..2 {
                    let offset = (2 * q + kept) * bits;
                    let p = Pos { lane, reg: offset / 32, bit: offset % 32 };
                    let pos = (nibble >> (2 * kept)) as usize & 3;
                    a[row * s.k + s.k_of(group, 4 * q + pos, bits)] = T::input(ia, ra.get(p, lane, bits));
                }
            }
        }
        for (v, &p) in b.iter_mut().zip(plan.b.iter()) {
            *v = T::input(ib, rb.get(p, p.lane, s.b.bits()));
        }
    }
    let d = registers_mut(w, inst.dst[0], s.acc_regs())?;
    for (i, a_row) in a.chunks_exact(s.k).enumerate() {
        let p = plan.d[i * s.n];
        let d_row: &mut [T] = bytemuck::cast_slice_mut(&mut d[p.reg][p.lane..p.lane + s.n]);
        dense::mac_rows([d_row], a_row, dense::ARows::ROW, b);
    }
    Ok(())
}

/// Largest f64 A or B: 64 lanes × one element.
const MAX_F64: usize = 64;

/// f64 ops: A and B read by runs of register pairs, each row of D (`n` consecutive lanes of
/// a register pair) summed in place; [`run_gathered`] where the operands do not allow it (a
/// constant source).
fn run_f64(w: &mut Wave, inst: &Inst, plan: &Plan, c: &Controls) -> Result<(), ExecError> {
    let s = &plan.shape;
    let (m, n, k) = (s.m, s.n, s.k);
    let (mut a, mut b) = ([0f64; MAX_F64], [0f64; MAX_F64]);
    let (a, b) = (&mut a[..s.blocks * m * k], &mut b[..s.blocks * k * n]);
    {
        let (Some(a_runs), Some(b_runs)) = (plan.a_runs.as_deref(), plan.b_runs.as_deref()) else {
            return run_gathered::<f64>(w, inst, plan, c);
        };
        let (Regs::File(ra), Regs::File(rb), Regs::File(_)) =
            (Regs::read(w, inst, 0)?, Regs::read(w, inst, 1)?, Regs::read(w, inst, 2)?)
        else {
            return run_gathered::<f64>(w, inst, plan, c);
        };
        for (blk, out) in a.chunks_exact_mut(m * k).enumerate() {
            let from = (blk & !c.a_group_mask) | c.abid;
            gather_pairs(ra, &a_runs[from * k..][..k], m, out);
        }
        gather_pairs(rb, b_runs, n, b);
    }
    for (bit, values) in [(1, &mut *a), (2, &mut *b)] {
        if c.neg & bit != 0 {
            values.iter_mut().for_each(|v| *v = -*v);
        }
    }
    let d = c_into_d(w, inst, s)?;
    for blk in 0..s.blocks {
        let (a, b) = (&a[blk * m * k..][..m * k], &b[blk * k * n..][..k * n]);
        for i in 0..m {
            let p = plan.d[(blk * m + i) * n];
            let [lo, hi] = d.get_disjoint_mut([p.reg, p.reg + 1]).map_err(|_| ExecError::Register(inst.dst[0]))?;
            let (lo, hi) = (&mut lo[p.lane..p.lane + n], &mut hi[p.lane..p.lane + n]);
            let mut row = [0f64; 16];
            let row = &mut row[..n];
            for ((v, &l), &h) in row.iter_mut().zip(&*lo).zip(&*hi) {
                let from_c = f64::from_bits(u64::from(l) | u64::from(h) << 32);
                *v = if c.neg & 4 != 0 { -from_c } else { from_c };
            }
            for (kk, b_row) in b.chunks_exact(n).enumerate() {
                let av = a[kk * m + i];
                for (v, &bv) in row.iter_mut().zip(b_row) {
                    *v = v.mac(av, bv);
                }
            }
            for ((v, l), h) in row.iter().zip(lo).zip(hi) {
                let bits = v.to_bits();
                (*l, *h) = (bits as u32, (bits >> 32) as u32);
            }
        }
    }
    Ok(())
}

/// The f64 elements of `runs` (`len` lanes of a register pair each) of `regs`, into `out`.
fn gather_pairs(regs: &[Lanes], runs: &[LaneRun], len: usize, out: &mut [f64]) {
    for (run, out) in runs.iter().zip(out.chunks_exact_mut(len)) {
        let (lo, hi) = (&regs[run.reg][run.lane..run.lane + len], &regs[run.reg + 1][run.lane..run.lane + len]);
        for ((o, &l), &h) in out.iter_mut().zip(lo).zip(hi) {
            *o = f64::from_bits(u64::from(l) | u64::from(h) << 32);
        }
    }
}

/// 64-bit accumulators (split over register pairs): gather C, compute, scatter D.
fn run_gathered<T: Accum>(w: &mut Wave, inst: &Inst, plan: &Plan, c: &Controls) -> Result<(), ExecError> {
    let s = &plan.shape;
    let mut a = vec![T::default(); plan.a.len()];
    let mut b = vec![T::default(); plan.b.len()];
    let mut d = vec![T::default(); plan.d.len()];
    let (a, b, d) = (&mut a[..], &mut b[..], &mut d[..]);
    gather_ab(w, inst, plan, c, a, b)?;
    {
        let rc = Regs::read(w, inst, 2)?;
        for (v, &p) in d.iter_mut().zip(plan.d.iter()) {
            *v = T::from_bits(rc.get(p, p.lane, 64));
        }
    }
    for (bit, m) in [(1, &mut *a), (2, &mut *b), (4, &mut *d)] {
        if c.neg & bit != 0 {
            m.iter_mut().for_each(|v| *v = v.neg());
        }
    }
    multiply_accumulate(s, a, b, d);
    let dst = registers_mut(w, inst.dst[0], s.acc_regs())?;
    for (v, &p) in d.iter().zip(plan.d.iter()) {
        let bits = v.to_bits();
        dst[p.reg][p.lane] = bits as u32;
        dst[p.reg + 1][p.lane] = (bits >> 32) as u32;
    }
    Ok(())
}

/// The `count` consecutive VGPRs or AGPRs starting at `op`.
fn registers(w: &Wave, op: Operand, count: usize) -> Result<&[Lanes], ExecError> {
    match op {
        Operand::Vgpr(n) => w.vgpr.get(usize::from(n)..usize::from(n) + count),
        Operand::Agpr(n) => w.agpr.get(usize::from(n)..usize::from(n) + count),
        _ => None,
    }
    .ok_or(ExecError::Register(op))
}

fn registers_mut(w: &mut Wave, op: Operand, count: usize) -> Result<&mut [Lanes], ExecError> {
    match op {
        Operand::Vgpr(n) => w.vgpr.get_mut(usize::from(n)..usize::from(n) + count),
        Operand::Agpr(n) => w.agpr.get_mut(usize::from(n)..usize::from(n) + count),
        _ => None,
    }
    .ok_or(ExecError::Register(op))
}

/// `D += A·B` for every block, over dense blocks (A k-major, B and D row-major). The
/// innermost loop runs along a row of B and D so it vectorises.
fn multiply_accumulate<T: Accum>(s: &Shape, a: &[T], b: &[T], d: &mut [T]) {
    debug_assert_eq!(T::GROUP, 1, "grouped sums are only for dense f16/bf16 in registers");
    let (m, n, k) = (s.m, s.n, s.k);
    for blk in 0..s.blocks {
        let a = &a[blk * m * k..][..m * k];
        let b = &b[blk * k * n..][..k * n];
        let d = &mut d[blk * m * n..][..m * n];
        for (i, d_row) in d.chunks_exact_mut(n).enumerate() {
            for (kk, b_row) in b.chunks_exact(n).enumerate() {
                let av = a[kk * m + i];
                for (dv, &bv) in d_row.iter_mut().zip(b_row) {
                    *dv = dv.mac(av, bv);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::accum::low_bits;
    use super::*;
    use crate::gpu::exec::wave::LANES;

    fn shape(name: &str) -> Shape {
        let op = (0..).map_while(Op::from_index).find(|op| op.name() == name).expect(name);
        Shape::of(op).expect(name)
    }

    #[test]
    fn shapes_follow_the_names() {
        let s = shape("v_mfma_f32_32x32x1f32");
        assert_eq!((s.m, s.n, s.k, s.blocks, s.acc_regs()), (32, 32, 1, 2, 32));
        let s = shape("v_mfma_f32_4x4x4_16b_f16");
        assert_eq!((s.m, s.k, s.blocks, s.per_lane(), s.a), (4, 4, 16, 4, Elem::F16));
        let s = shape("v_mfma_f32_32x32x4bf16_1k");
        assert_eq!((s.blocks, s.per_lane(), s.a), (2, 4, Elem::Bf16));
        let s = shape("v_mfma_f32_32x32x4bf16");
        assert_eq!((s.blocks, s.per_lane()), (1, 2));
        let s = shape("v_mfma_f64_4x4x4f64");
        assert_eq!((s.blocks, s.acc, s.acc_regs()), (4, Acc::F64, 2));
        let s = shape("v_mfma_f32_16x16x32_fp8_bf8");
        assert_eq!((s.a, s.b, s.per_lane(), s.macs()), (Elem::Fp8, Elem::Bf8, 8, 8192));
        let s = shape("v_mfma_f32_16x16x8_xf32");
        assert_eq!((s.a, s.per_lane(), s.blocks), (Elem::Xf32, 2, 1));
    }

    #[test]
    fn f8f6f4_layouts_fill_their_registers_once_per_format() {
        for name in ["v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4"] {
            let s = shape(name);
            assert!(s.mixed && s.blocks == 1 && s.per_lane() == 32, "{name}");
            let plan = plan((0..).map_while(Op::from_index).find(|op| op.name() == name).unwrap()).unwrap();
            for (bits, regs) in [(8, 8), (6, 6), (4, 4)] {
                let mut seen = std::collections::HashSet::new();
                for p in plan.small(bits) {
                    assert!(p.lane < LANES && p.reg * 32 + p.bit + bits <= regs * 32, "{name} {bits} {p:?}");
                    assert!(seen.insert((p.lane, p.reg * 32 + p.bit)), "{name} {bits}: {p:?} twice");
                }
                assert_eq!(seen.len() * bits, regs * 32 * LANES, "{name} {bits}");
            }
        }
        // The guide's examples: 16x16x128 fp8 lane 16 (k 16..31) and lane 0's second half
        // (k 64..79, v4); fp6 item 5 (k = 5) straddles v0/v1 at bit 30.
        assert_eq!(layout::f8f6f4_pos(16, 0, 16, 8), Pos { lane: 16, reg: 0, bit: 0 });
        assert_eq!(layout::f8f6f4_pos(16, 3, 64, 8), Pos { lane: 3, reg: 4, bit: 0 });
        assert_eq!(layout::f8f6f4_pos(32, 0, 47, 8), Pos { lane: 0, reg: 7, bit: 24 });
        assert_eq!(layout::f8f6f4_pos(16, 0, 5, 6), Pos { lane: 0, reg: 0, bit: 30 });
        assert_eq!(layout::f8f6f4_pos(32, 31, 63, 4), Pos { lane: 63, reg: 3, bit: 28 });
    }

    #[test]
    fn gfx950_eight_register_b_operands_come_in_two_chunks() {
        // CDNA4 guide 7.5.1.3: the B tables of the sparse ops.
        let s = shape("v_smfmac_f32_16x16x128_fp8_fp8");
        assert_eq!(s.b_pos(0, 16, 3), Pos { lane: 19, reg: 0, bit: 0 });
        assert_eq!(s.b_pos(0, 64, 3), Pos { lane: 3, reg: 4, bit: 0 });
        assert_eq!(s.b_pos(0, 127, 15), Pos { lane: 63, reg: 7, bit: 24 });
        let s = shape("v_smfmac_f32_16x16x64_f16");
        assert_eq!(s.b_pos(0, 8, 0), Pos { lane: 16, reg: 0, bit: 0 });
        assert_eq!(s.b_pos(0, 33, 0), Pos { lane: 0, reg: 4, bit: 16 });
        let s = shape("v_smfmac_f32_32x32x32_bf16");
        assert_eq!(s.b_pos(0, 8, 5), Pos { lane: 37, reg: 0, bit: 0 });
        assert_eq!(s.b_pos(0, 16, 5), Pos { lane: 5, reg: 4, bit: 0 });
        assert_eq!(s.b_pos(0, 30, 5), Pos { lane: 37, reg: 7, bit: 0 });
        for item in 0..32 {
            for g in 0..4 {
                let s = shape("v_smfmac_i32_16x16x128_i8");
                assert_eq!(s.group_item(s.k_of(g, item, 8), 8), (g, item));
            }
        }
        // Four-register operands keep the general rule.
        let s = shape("v_smfmac_f32_16x16x64_fp8_fp8");
        assert_eq!(s.b_pos(0, 16, 2), Pos { lane: 18, reg: 0, bit: 0 });
    }

    #[test]
    fn every_dense_mfma_has_a_bijective_layout() {
        // Not products of one fixed shape: `v_mfma_ld_scale_b32` (a scale prefix) and the
        // gfx950 `*_f8f6f4` ops, whose element formats come from cbsz/blgp.
        let fixed_shape = |op: &Op| op.name() != "v_mfma_ld_scale_b32" && !op.name().ends_with("_f8f6f4");
        for op in (0..).map_while(Op::from_index).filter(|op| op.info().class == OpClass::Mfma).filter(fixed_shape) {
            let plan = plan(op).unwrap_or_else(|| panic!("{} has no plan", op.name()));
            let s = plan.shape;
            for (what, positions, regs, bits) in [
                ("A", &plan.a, usize::from(op.info().src[0].regs), s.a.bits()),
                ("B", &plan.b, usize::from(op.info().src[1].regs), s.b.bits()),
                ("D", &plan.d, s.acc_regs(), if s.acc == Acc::F64 { 64 } else { 32 }),
            ] {
                // A sparse op's stored A is half its logical A; `run_sparse` places it.
                if s.sparse && what == "A" {
                    continue;
                }
                let mut seen = std::collections::HashSet::new();
                for p in positions.iter() {
                    assert!(p.lane < LANES && p.reg < regs && p.bit + bits.min(32) <= 32, "{} {what} {p:?}", op.name());
                    assert!(seen.insert((p.lane, p.reg, p.bit)), "{} {what}: {p:?} used twice", op.name());
                }
                assert_eq!(seen.len() * bits, regs * 32 * LANES, "{} {what} does not fill its registers", op.name());
            }
        }
    }

    /// The run gather reads the same elements as the positions: every op whose A and B have
    /// lane runs, on registers holding distinct values; every dense op with 8-, 16- or 32-bit
    /// inputs has them.
    #[test]
    fn lane_runs_read_the_elements_at_their_positions() {
        let regs: Vec<Lanes> =
            (0..32u32).map(|r| std::array::from_fn(|l| (r * 64 + l as u32).wrapping_mul(0x9e37_79b1))).collect();
        let file = Regs::File(&regs);
        let mut run_ops = 0;
        for op in (0..).map_while(Op::from_index).filter(|op| op.info().class == OpClass::Mfma) {
            let Some(plan) = plan(op) else { continue };
            let s = plan.shape;
            for (positions, runs, len, bits) in
                [(&plan.a, &plan.a_runs, s.m, s.a.bits()), (&plan.b, &plan.b_runs, s.n, s.b.bits())]
            {
                let Some(runs) = runs else {
                    assert!(s.mixed || positions.is_empty(), "{} has no lane runs", op.name());
                    continue;
                };
                run_ops += 1;
                let mut want = vec![0u64; positions.len()];
                file.elements(positions, |p| p.lane, bits, &mut want);
                // Raw elements (the conversions are tested on their own).
                let mut got = vec![0u64; positions.len()];
                for (run, out) in runs.iter().zip(got.chunks_exact_mut(len)) {
                    for (t, o) in out.iter_mut().enumerate() {
                        let word = |reg: usize| u64::from(regs[reg][run.lane + t]);
                        *o = match bits {
                            64 => word(run.reg) | word(run.reg + 1) << 32,
                            _ => (word(run.reg) >> run.bit) & u64::from(low_bits(bits)),
                        };
                    }
                }
                assert_eq!(got, want, "{}", op.name());
            }
        }
        assert!(run_ops > 80, "only {run_ops} operands have lane runs");
    }
}
