//! Cranelift code for a [`Plan`]: vector segments four lanes at a time, everything else
//! through the interpreter's handlers.
//!
//! A vector segment loops over the sixteen 4-lane chunks of the wave. Within a chunk it runs
//! every step of the segment with the VGPRs it touches held as SSA values (loaded on first
//! use, stored once at the end of the chunk), so a chain of dependent instructions never goes
//! back to memory between steps. That order is exact because every step is lane-wise: a lane's
//! results depend only on that lane's sources ([`super::select`]). Uniform sources, input
//! lane masks and EXEC are read from the wave when the segment starts; the lane masks it
//! writes are stored when it ends. Lanes outside EXEC keep their old values; lane masks have
//! 0 there.
//!
//! An interpreted instruction is a call of [`super::interpret_step`] with its entry (instruction and
//! handler): the interpreter's own semantics, without its fetch and dispatch. A branch back
//! to the run's start (answer 2) loops inside the function while the caller's budget lasts;
//! any other non-zero answer (a branch elsewhere, a barrier, an error) returns at once.
//!
//! The function's arguments are `(wave, vgprs, ctx, exit, pc)`: the wave, its VGPR file
//! (64 lanes × 4 bytes per register), the instruction context and exit record handed on to
//! `interpret_step`, and the run's address. It returns 0 when the run ended, 1 when an
//! interpreted instruction stopped it.
//!
//! Float semantics follow the interpreter's fast paths bit for bit: host arithmetic rounds to
//! nearest even (the only f32 rounding translated), denormals are flushed on input and output
//! when MODE says so, and a NaN result carries the first NaN input, quieted.

use super::select::{
    Bin, BranchCond, CarryOp, Cond, DivOp, FloatOp, Item, Kind, LaneFn, MaskReg, MaskSrc, Plan, SKind, SReg, SVal,
    SaveexecOp, ScalarOp, Segment, Shift64, Sign, Src, Tri, Uniform,
};
use super::{EXIT_BEFORE_SHARED, EXIT_INDEX, EXIT_JUMP, EXIT_JUMPED, EXIT_SHARED_LIMIT};
use crate::gpu::exec::ops::valu::{float_div, fp::Env};
use crate::gpu::exec::wave::Wave;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I32, I32X4, I64, I64X2, I8, I8X16};
use cranelift_codegen::ir::Signature;
use cranelift_codegen::ir::{
    AbiParam, BlockArg, Endianness, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::Module;
use std::collections::HashMap;

mod memory;

/// Bytes of one VGPR (64 lanes of 4 bytes).
const VGPR_BYTES: i32 = 256;
/// Lanes per chunk, and chunks per wave.
const CHUNK_LANES: i64 = 4;
const CHUNKS: i64 = 16;

/// The address of each interpreted instruction's entry (what [`super::interpret_step`] needs), by
/// the instruction's index in the run.
pub type Entries<'a> = &'a dyn Fn(u16) -> u64;

/// The host functions translated code calls, by address.
#[derive(Clone, Copy)]
pub struct Helpers {
    /// [`super::interpret_step`].
    pub step: u64,
    /// [`super::span_host`].
    pub span: u64,
    /// [`super::prefetch_ahead`].
    pub prefetch: u64,
    /// [`super::f64_lanes`].
    pub f64_lanes: u64,
}

/// Compiles `plan` into `module`; returns the finalized function's address. `entries` gives
/// the address of each interpreted instruction's entry, passed to `helpers.step`.
pub fn compile(
    module: &mut JITModule,
    plan: &Plan,
    mode: u32,
    helpers: Helpers,
    entries: Entries<'_>,
) -> Result<*const u8, String> {
    let mut ctx = module.make_context();
    // (wave, vgprs, ctx, exit, pc) -> stopped
    for _ in 0..5 {
        ctx.func.signature.params.push(AbiParam::new(I64));
    }
    ctx.func.signature.returns.push(AbiParam::new(I32));
    // interpret_step(wave, ctx, entry, pc, exit) -> answer
    let mut step_sig = module.make_signature();
    for _ in 0..5 {
        step_sig.params.push(AbiParam::new(I64));
    }
    step_sig.returns.push(AbiParam::new(I32));
    // span_host(ctx, start, len, flags) -> host address or 0
    let mut span_sig = module.make_signature();
    for _ in 0..4 {
        span_sig.params.push(AbiParam::new(I64));
    }
    span_sig.returns.push(AbiParam::new(I64));
    // prefetch_ahead(ctx, start, len, site)
    let mut prefetch_sig = module.make_signature();
    for _ in 0..4 {
        prefetch_sig.params.push(AbiParam::new(I64));
    }
    // f64_lanes(op, mode, io)
    let mut lanes_sig = module.make_signature();
    for _ in 0..3 {
        lanes_sig.params.push(AbiParam::new(I64));
    }
    let mut fbc = FunctionBuilderContext::new();
    {
        let b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
        Lowering::new(b, Env::new(mode)).emit(
            plan,
            module.target_config(),
            [step_sig, span_sig, prefetch_sig, lanes_sig],
            helpers,
            entries,
        );
    }
    let id = module.declare_anonymous_function(&ctx.func.signature).map_err(|e| e.to_string())?;
    // `ROCJITSU_JIT_DISASM=1` prints the host code of each translation (for tuning the
    // lowering: profilers see translated code only as addresses).
    static DISASM: std::sync::LazyLock<bool> =
        std::sync::LazyLock::new(|| std::env::var_os("ROCJITSU_JIT_DISASM").is_some_and(|v| v != "0"));
    ctx.set_disasm(*DISASM);
    module.define_function(id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    if let Some(text) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()).filter(|_| *DISASM) {
        eprintln!("rocjitsu: translation {id} ({} items):\n{text}", plan.items.len());
    }
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(|e| e.to_string())?;
    Ok(module.get_finalized_function(id))
}

/// The index of `item`'s instruction if it reaches beyond the wave's registers.
fn shared_index(plan: &Plan, item: &Item) -> Option<u16> {
    let index = match item {
        Item::Interpreted { index, .. } | Item::Memory { index, .. } | Item::ScalarLoad { index, .. } => *index,
        Item::Vector(_) | Item::Scalar(_) | Item::Branch { .. } => return None,
    };
    plan.shared.contains(&index).then_some(index)
}

/// Where the scalar state lives in a [`Wave`].
const SGPR: i32 = std::mem::offset_of!(Wave, sgpr) as i32;
const VCC: i32 = std::mem::offset_of!(Wave, vcc) as i32;
const EXEC: i32 = std::mem::offset_of!(Wave, exec) as i32;
const M0: i32 = std::mem::offset_of!(Wave, m0) as i32;
const SCC: i32 = std::mem::offset_of!(Wave, scc) as i32;

/// The loop counters of the exit record (see [`super::Exit`]).
const EXIT_LOOPS_LEFT: i32 = std::mem::offset_of!(super::Exit, loops_left) as i32;
const EXIT_LOOPS: i32 = std::mem::offset_of!(super::Exit, loops) as i32;

/// Scalar registers: 4-byte aligned, so a 64-bit pair may not be 8-byte aligned.
fn scalar_mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// VGPR accesses: in the wave's register file, which is only 4-byte aligned (so not
/// `aligned`, which would let SSE encodings that fault on unaligned vectors use them).
fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

fn lanes() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

/// The function's arguments and the places every item may reach.
struct Frame {
    wave: Value,
    vgpr: Value,
    ctx: Value,
    exit: Value,
    pc: Value,
    step_sig: cranelift_codegen::ir::SigRef,
    span_sig: cranelift_codegen::ir::SigRef,
    prefetch_sig: cranelift_codegen::ir::SigRef,
    helpers: Helpers,
    /// Returns 1: an interpreted instruction stopped the run.
    stopped: cranelift_codegen::ir::Block,
    /// The run's first instruction.
    top: cranelift_codegen::ir::Block,
}

struct Lowering<'a> {
    b: FunctionBuilder<'a>,
    env: Env,
    /// While a chunk's fast body is emitted: its float results' NaN lanes, noted instead of
    /// fixed up in place.
    nan_note: Option<NanNote>,
    /// The signature and address of [`super::f64_lanes`].
    lanes_helper: Option<(cranelift_codegen::ir::SigRef, u64)>,
}

/// The float results of a chunk's fast body that may be NaNs: they are compared in pairs of
/// one type (one unordered compare notes both).
#[derive(Default)]
struct NanNote {
    /// All ones in the lanes where a result compared so far is a NaN.
    lanes: Option<Value>,
    /// A result waiting for a partner.
    pending: Option<Value>,
}

/// The state of one chunk while its steps are emitted.
struct Chunk {
    base: Value,
    shift: Value,
    /// Current value of each VGPR touched, and whether it was written. Written values are
    /// the step's result in every lane: lanes outside EXEC get their old value back once, when
    /// the chunk stores the register (every step is lane-wise, so an inactive lane's value
    /// never reaches an active one).
    regs: HashMap<u8, (Value, bool)>,
    /// The lane mask each step wrote (compares, carries), in every lane (EXEC is applied when
    /// the segment stores its masks).
    step_masks: Vec<Option<Value>>,
    /// The latest value of each output mask.
    out_masks: Vec<Option<Value>>,
}

impl<'a> Lowering<'a> {
    fn new(b: FunctionBuilder<'a>, env: Env) -> Self {
        Lowering { b, env, nan_note: None, lanes_helper: None }
    }

    fn emit(
        mut self,
        plan: &Plan,
        target: cranelift_codegen::isa::TargetFrontendConfig,
        [step_sig, span_sig, prefetch_sig, lanes_sig]: [Signature; 4],
        helpers: Helpers,
        entries: Entries<'_>,
    ) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        self.b.seal_block(entry);
        self.lanes_helper = Some((self.b.import_signature(lanes_sig), helpers.f64_lanes));
        let p = self.b.block_params(entry).to_vec();
        let f = Frame {
            wave: p[0],
            vgpr: p[1],
            ctx: p[2],
            exit: p[3],
            pc: p[4],
            step_sig: self.b.import_signature(step_sig),
            span_sig: self.b.import_signature(span_sig),
            prefetch_sig: self.b.import_signature(prefetch_sig),
            helpers,
            stopped: self.b.create_block(),
            // The run's start, where a branch back to it continues (`interpret_step` answers 2).
            top: self.b.create_block(),
        };
        self.b.ins().jump(f.top, &[]);
        self.b.switch_to_block(f.top);
        // Stops before a shared instruction (its index the parameter) at or past the bound.
        let before_shared = self.b.create_block();
        for item in &plan.items {
            if let Some(index) = shared_index(plan, item) {
                self.bound_shared(&f, index, before_shared);
            }
            match item {
                Item::Vector(seg) => self.segment(seg, f.wave, f.vgpr),
                Item::Scalar(op) => self.scalar(op, f.wave),
                Item::Interpreted { index, offset } => self.interpret(&f, entries(*index), *offset),
                Item::Memory { op, index, offset } => self.memory(&f, op, entries(*index), *offset),
                Item::ScalarLoad { op, index, offset } => self.scalar_load(&f, op, entries(*index), *offset),
                Item::Branch { cond, back, index, target, .. } => self.branch(&f, *cond, *back, *index, *target),
            }
        }
        let zero = self.b.ins().iconst(I32, 0);
        self.b.ins().return_(&[zero]);
        self.b.seal_block(f.top);
        self.b.switch_to_block(f.stopped);
        self.b.seal_block(f.stopped);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
        let index = self.b.append_block_param(before_shared, I32);
        self.b.switch_to_block(before_shared);
        self.b.seal_block(before_shared);
        self.b.ins().store(scalar_mem(), index, f.exit, EXIT_INDEX);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().store(scalar_mem(), one, f.exit, EXIT_BEFORE_SHARED);
        self.b.ins().return_(&[one]);
        self.b.finalize(target);
    }

    /// Goes to `before_shared` (with `index`) instead of on when the shared instruction at
    /// `index` is at or past the exit record's bound.
    fn bound_shared(&mut self, f: &Frame, index: u16, before_shared: cranelift_codegen::ir::Block) {
        let limit = self.b.ins().load(I64, scalar_mem(), f.exit, EXIT_SHARED_LIMIT);
        let stop = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, limit, index as i64);
        let at = self.b.ins().iconst(I32, index as i64);
        let go_on = self.b.create_block();
        self.b.ins().brif(stop, before_shared, &[at.into()], go_on, &[]);
        self.b.switch_to_block(go_on);
        self.b.seal_block(go_on);
    }

    /// The interpreter's handler for the instruction of `entry` (at `offset` in the run),
    /// through `interpret_step`; a non-zero answer (a branch taken, an error, a wait) ends the
    /// run here, or starts it again (a branch back to its start).
    fn interpret(&mut self, f: &Frame, entry: u64, offset: u32) {
        let step = self.b.ins().iconst(I64, f.helpers.step as i64);
        let e = self.b.ins().iconst(I64, entry as i64);
        let at = self.b.ins().iadd_imm_u(f.pc, offset as i64);
        let call = self.b.ins().call_indirect(f.step_sig, step, &[f.wave, f.ctx, e, at, f.exit]);
        let r = self.b.inst_results(call)[0];
        let next = self.b.create_block();
        let not_next = self.b.create_block();
        self.b.ins().brif(r, not_next, &[], next, &[]);
        self.b.switch_to_block(not_next);
        self.b.seal_block(not_next);
        let again = self.b.ins().icmp_imm_u(IntCC::Equal, r, 2);
        self.b.ins().brif(again, f.top, &[], f.stopped, &[]);
        self.b.switch_to_block(next);
        self.b.seal_block(next);
    }

    /// A branch at the end of the run (its instruction the run's `index`th): not taken, the
    /// run ends; taken back to the start with budget left, the code loops (counted in the
    /// exit record as `interpret_step` counts); otherwise the run stops with a jump to
    /// `target` (bytes from the run's start), as the handler would answer.
    fn branch(&mut self, f: &Frame, cond: BranchCond, back: bool, index: u16, target: u64) {
        let reg = |me: &mut Self, ty, at| me.b.ins().load(ty, scalar_mem(), f.wave, at);
        let taken = match cond {
            BranchCond::Always => self.b.ins().iconst(I8, 1),
            BranchCond::SccZero | BranchCond::SccSet => {
                let scc = reg(self, I8, SCC);
                let cc = if cond == BranchCond::SccZero { IntCC::Equal } else { IntCC::NotEqual };
                self.b.ins().icmp_imm_u(cc, scc, 0)
            }
            BranchCond::VccZero | BranchCond::VccSet | BranchCond::ExecZero | BranchCond::ExecSet => {
                let at = if matches!(cond, BranchCond::VccZero | BranchCond::VccSet) { VCC } else { EXEC };
                let mask = reg(self, I64, at);
                let cc = if matches!(cond, BranchCond::VccZero | BranchCond::ExecZero) {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                self.b.ins().icmp_imm_u(cc, mask, 0)
            }
        };
        let (jump, end) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(taken, jump, &[], end, &[]);
        self.b.switch_to_block(jump);
        self.b.seal_block(jump);
        if back {
            let left = self.b.ins().load(I64, scalar_mem(), f.exit, EXIT_LOOPS_LEFT);
            let (again, handler) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(left, again, &[], handler, &[]);
            self.b.switch_to_block(again);
            self.b.seal_block(again);
            let left = self.b.ins().iadd_imm_s(left, -1);
            self.b.ins().store(scalar_mem(), left, f.exit, EXIT_LOOPS_LEFT);
            let loops = self.b.ins().load(I64, scalar_mem(), f.exit, EXIT_LOOPS);
            let loops = self.b.ins().iadd_imm_u(loops, 1);
            self.b.ins().store(scalar_mem(), loops, f.exit, EXIT_LOOPS);
            self.b.ins().jump(f.top, &[]);
            self.b.switch_to_block(handler);
            self.b.seal_block(handler);
        }
        let to = self.b.ins().iadd_imm_u(f.pc, target as i64);
        self.b.ins().store(scalar_mem(), to, f.exit, EXIT_JUMP);
        let at = self.b.ins().iconst(I32, index as i64);
        self.b.ins().store(scalar_mem(), at, f.exit, EXIT_INDEX);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().store(scalar_mem(), one, f.exit, EXIT_JUMPED);
        self.b.ins().jump(f.stopped, &[]);
        self.b.switch_to_block(end);
        self.b.seal_block(end);
    }

    /// A scalar ALU instruction on the wave's registers, as its interpreter handler does it:
    /// both sources read, then the result and SCC written.
    fn scalar(&mut self, op: &ScalarOp, wave: Value) {
        let ty = if op.wide { I64 } else { I32 };
        let offset = |r: SReg| match r {
            SReg::Sgpr(n) => SGPR + 4 * n as i32,
            SReg::VccLo => VCC,
            SReg::VccHi => VCC + 4,
            SReg::ExecLo => EXEC,
            SReg::ExecHi => EXEC + 4,
            SReg::M0 => M0,
        };
        let mut read = |v: SVal| match v {
            SVal::Const(k) => self.b.ins().iconst(ty, if op.wide { k as i64 } else { k as u32 as i64 }),
            SVal::Reg(r) => self.b.ins().load(ty, scalar_mem(), wave, offset(r)),
            SVal::Scc => {
                let b = self.b.ins().load(I8, scalar_mem(), wave, SCC);
                self.b.ins().uextend(ty, b)
            }
        };
        let (a, b) = (read(op.a), read(op.b));
        let (r, scc) = match op.kind {
            SKind::Mov => (Some(a), None),
            SKind::Add { signed } | SKind::Sub { signed } => {
                let add = matches!(op.kind, SKind::Add { .. });
                let r = if add { self.b.ins().iadd(a, b) } else { self.b.ins().isub(a, b) };
                let scc = if signed {
                    // Signed overflow: the result's sign differs from what the operands' signs
                    // allow (both addends' for a sum; the minuend's, unlike the subtrahend's).
                    let x = self.b.ins().bxor(a, r);
                    let y = if add { self.b.ins().bxor(b, r) } else { self.b.ins().bxor(a, b) };
                    let both = self.b.ins().band(x, y);
                    self.b.ins().icmp_imm_u(IntCC::SignedLessThan, both, 0)
                } else if add {
                    self.b.ins().icmp(IntCC::UnsignedLessThan, r, a)
                } else {
                    self.b.ins().icmp(IntCC::UnsignedLessThan, a, b)
                };
                (Some(r), Some(scc))
            }
            SKind::And | SKind::Or | SKind::Xor | SKind::Andn2 | SKind::Lshl | SKind::Lshr | SKind::Ashr => {
                let r = match op.kind {
                    SKind::And => self.b.ins().band(a, b),
                    SKind::Or => self.b.ins().bor(a, b),
                    SKind::Xor => self.b.ins().bxor(a, b),
                    SKind::Andn2 => self.b.ins().band_not(a, b),
                    // Cranelift takes a shift amount modulo the width, as `b & 31` does.
                    SKind::Lshl => self.b.ins().ishl(a, b),
                    SKind::Lshr => self.b.ins().ushr(a, b),
                    _ => self.b.ins().sshr(a, b),
                };
                let scc = self.b.ins().icmp_imm_u(IntCC::NotEqual, r, 0);
                (Some(r), Some(scc))
            }
            SKind::Mul => (Some(self.b.ins().imul(a, b)), None),
            SKind::Cmp { cond, signed } => (None, Some(self.b.ins().icmp(int_cc(cond, signed), a, b))),
            SKind::Min { signed } | SKind::Max { signed } => {
                let cc = match (op.kind, signed) {
                    (SKind::Min { .. }, false) => IntCC::UnsignedLessThan,
                    (SKind::Min { .. }, true) => IntCC::SignedLessThan,
                    (_, false) => IntCC::UnsignedGreaterThanOrEqual,
                    (_, true) => IntCC::SignedGreaterThanOrEqual,
                };
                let first = self.b.ins().icmp(cc, a, b);
                (Some(self.b.ins().select(first, a, b)), Some(first))
            }
            SKind::AddCarry | SKind::SubBorrow | SKind::ShlAdd(_) => {
                // In 64 bits: the carry or borrow is what lands above bit 31.
                let (x, y) = (self.b.ins().uextend(I64, a), self.b.ins().uextend(I64, b));
                let t = match op.kind {
                    SKind::ShlAdd(n) => {
                        let x = self.b.ins().ishl_imm_u(x, n as i64);
                        self.b.ins().iadd(x, y)
                    }
                    _ => {
                        let c = self.b.ins().load(I8, scalar_mem(), wave, SCC);
                        let c = self.b.ins().uextend(I64, c);
                        if op.kind == SKind::AddCarry {
                            let s = self.b.ins().iadd(x, y);
                            self.b.ins().iadd(s, c)
                        } else {
                            let s = self.b.ins().isub(x, y);
                            self.b.ins().isub(s, c)
                        }
                    }
                };
                let high = self.b.ins().ushr_imm_u(t, 32);
                let carry = self.b.ins().icmp_imm_u(IntCC::NotEqual, high, 0);
                (Some(self.b.ins().ireduce(I32, t)), Some(carry))
            }
            SKind::BitCmp { set } => {
                // Cranelift takes the shift amount modulo 32, as `b & 31` does.
                let bit = self.b.ins().ushr(a, b);
                let bit = self.b.ins().band_imm_u(bit, 1);
                let cc = if set { IntCC::NotEqual } else { IntCC::Equal };
                (None, Some(self.b.ins().icmp_imm_u(cc, bit, 0)))
            }
            SKind::Cselect => {
                let c = self.b.ins().load(I8, scalar_mem(), wave, SCC);
                (Some(self.b.ins().select(c, a, b)), None)
            }
            SKind::Saveexec(f) => {
                // `b` is EXEC: the destination gets it, as the handler writes it, before EXEC.
                let exec = match f {
                    SaveexecOp::And => self.b.ins().band(a, b),
                    SaveexecOp::Or => self.b.ins().bor(a, b),
                    SaveexecOp::Xor => self.b.ins().bxor(a, b),
                    SaveexecOp::Andn2 => self.b.ins().band_not(a, b),
                };
                if let Some(d) = op.dst {
                    self.b.ins().store(scalar_mem(), b, wave, offset(d));
                }
                self.b.ins().store(scalar_mem(), exec, wave, EXEC);
                let scc = self.b.ins().icmp_imm_u(IntCC::NotEqual, exec, 0);
                self.b.ins().store(scalar_mem(), scc, wave, SCC);
                return;
            }
        };
        if let (Some(r), Some(d)) = (r, op.dst) {
            self.b.ins().store(scalar_mem(), r, wave, offset(d));
        }
        if let Some(scc) = scc {
            self.b.ins().store(scalar_mem(), scc, wave, SCC);
        }
    }

    /// A lane mask register's address in the wave.
    fn mask_addr(&mut self, wave: Value, reg: MaskReg) -> (Value, i32) {
        match reg {
            MaskReg::Vcc => (wave, VCC),
            MaskReg::Sgpr(n) => (wave, SGPR + 4 * n as i32),
        }
    }

    /// A vector segment: the chunk loop over the wave.
    fn segment(&mut self, seg: &Segment, wave: Value, vgpr: Value) {
        // Uniform values (as scalars, for shift amounts, and splatted), input masks and EXEC
        // as they are when the segment starts.
        let uniforms: Vec<(Value, Value)> = seg
            .uniforms
            .iter()
            .map(|u| {
                let x = match *u {
                    Uniform::Const(k) => self.b.ins().iconst(I32, k as i64),
                    Uniform::Sgpr(n) => self.b.ins().load(I32, scalar_mem(), wave, SGPR + 4 * n as i32),
                    Uniform::M0 => self.b.ins().load(I32, scalar_mem(), wave, M0),
                    Uniform::ExecLo => self.b.ins().load(I32, scalar_mem(), wave, EXEC),
                    Uniform::ExecHi => self.b.ins().load(I32, scalar_mem(), wave, EXEC + 4),
                };
                (x, self.b.ins().splat(I32X4, x))
            })
            .collect();
        let masks_in: Vec<Value> = seg
            .masks_in
            .iter()
            .map(|r| {
                let (base, off) = self.mask_addr(wave, *r);
                self.b.ins().load(I64, scalar_mem(), base, off)
            })
            .collect();
        let exec = self.b.ins().load(I64, scalar_mem(), wave, EXEC);
        let exec_full = self.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
        let lane_bits = self.vconst([1, 2, 4, 8]);
        // The chunk loop: `c` and the output masks' accumulators are loop variables.
        let c_var = self.b.declare_var(I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(c_var, zero);
        let acc_vars: Vec<Variable> = (0..seg.masks_out.len())
            .map(|_| {
                let v = self.b.declare_var(I64);
                self.b.def_var(v, zero);
                v
            })
            .collect();
        let header = self.b.create_block();
        let exit = self.b.create_block();
        let (body, latch) = (self.b.create_block(), self.b.create_block());
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let c = self.b.use_var(c_var);
        let shift = self.b.ins().imul_imm_u(c, CHUNK_LANES);
        // A chunk without a lane on is left as it is (its registers keep their values, its
        // mask bits stay 0): one lane on (an MT19937 state's step, a wave's leader) costs one
        // chunk, not sixteen. (A loop over the chunks with a lane on, found with `ctz`, made
        // the FMA-bound kernel 9% slower; this test and branch cost it nothing measurable.)
        let on = self.b.ins().ushr(exec, shift);
        let on = self.b.ins().band_imm_u(on, (1 << CHUNK_LANES) - 1);
        self.b.ins().brif(on, body, &[], latch, &[]);
        self.b.switch_to_block(body);
        self.b.seal_block(body);
        let offset = self.b.ins().imul_imm_u(c, CHUNK_LANES * 4);
        let base = self.b.ins().iadd(vgpr, offset);
        let new_chunk = || Chunk {
            base,
            shift,
            regs: HashMap::new(),
            step_masks: vec![None; seg.steps.len()],
            out_masks: vec![None; seg.masks_out.len()],
        };
        // The fast body: no NaN fix-ups, only a note of the lanes with a NaN result. Nothing
        // is stored before the chunk's end, so if there was one the exact body (each NaN
        // result fixed up where it is made) runs the chunk again from the same registers.
        // Both hand their results to the store block.
        self.nan_note = Some(NanNote::default());
        let mut fast = new_chunk();
        self.steps(&mut fast, seg, &uniforms, &masks_in, lane_bits);
        let nan_lanes = self.nan_note.take().and_then(|note| match note.pending {
            Some(last) => Some(self.note_nans(note.lanes, last, last)),
            None => note.lanes,
        });
        let mut written: Vec<u8> = fast.regs.iter().filter(|(_, (_, w))| *w).map(|(r, _)| *r).collect();
        written.sort();
        let store = self.b.create_block();
        for _ in &written {
            self.b.append_block_param(store, I32X4);
        }
        // (A mask the run writes again unread is not gathered: its compare or carry is then
        // not computed either, unless a later step reads it.)
        let read_later = |slot: usize| seg.masks_read_later.get(slot).copied().unwrap_or(true);
        let mask_slots: Vec<usize> =
            (0..seg.masks_out.len()).filter(|s| fast.out_masks[*s].is_some() && read_later(*s)).collect();
        for _ in &mask_slots {
            self.b.append_block_param(store, I32X4);
        }
        let results = |ch: &Chunk| -> Vec<BlockArg> {
            let mut regs: Vec<(u8, Value)> =
                ch.regs.iter().filter(|(_, (_, w))| *w).map(|(r, (v, _))| (*r, *v)).collect();
            regs.sort_by_key(|(r, _)| *r);
            let masks = mask_slots.iter().map(|s| ch.out_masks[*s].expect("a mask the fast body wrote"));
            regs.into_iter().map(|(_, v)| v).chain(masks).map(BlockArg::from).collect()
        };
        let fast_results = results(&fast);
        match nan_lanes {
            Some(nan) => {
                let exact = self.b.create_block();
                let any = self.b.ins().vany_true(nan);
                self.b.ins().brif(any, exact, &[], store, &fast_results);
                self.b.switch_to_block(exact);
                self.b.seal_block(exact);
                let mut ch = new_chunk();
                self.steps(&mut ch, seg, &uniforms, &masks_in, lane_bits);
                let exact_results = results(&ch);
                debug_assert_eq!(exact_results.len(), fast_results.len());
                self.b.ins().jump(store, &exact_results);
            }
            None => {
                self.b.ins().jump(store, &fast_results);
            }
        }
        self.b.switch_to_block(store);
        self.b.seal_block(store);
        let params = self.b.block_params(store).to_vec();
        // End of the chunk: store what was written (with EXEC not full, lanes outside it as
        // they were), gather the mask bits.
        let done = self.b.create_block();
        if !written.is_empty() {
            let (direct, blend) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(exec_full, direct, &[], blend, &[]);
            self.b.switch_to_block(direct);
            self.b.seal_block(direct);
            for (r, v) in written.iter().zip(&params) {
                self.b.ins().store(mem(), *v, base, *r as i32 * VGPR_BYTES);
            }
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(blend);
            self.b.seal_block(blend);
            let exec_vec = self.mask_vector(exec, shift, lane_bits);
            for (r, v) in written.iter().zip(&params) {
                // The old value is loaded again (from L1) rather than kept from the body:
                // values live across the body run out of the host's sixteen vector registers.
                let at = *r as i32 * VGPR_BYTES;
                let old = self.b.ins().load(I32X4, mem(), base, at);
                let v = self.b.ins().bitselect(exec_vec, *v, old);
                self.b.ins().store(mem(), v, base, at);
            }
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        for (slot, m) in mask_slots.iter().zip(&params[written.len()..]) {
            let var = acc_vars[*slot];
            let bits = self.b.ins().vhigh_bits(I64, *m);
            let bits = self.b.ins().ishl(bits, shift);
            let acc = self.b.use_var(var);
            let acc = self.b.ins().bor(acc, bits);
            self.b.def_var(var, acc);
        }
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        self.b.seal_block(latch);
        let next = self.b.ins().iadd_imm_u(c, 1);
        self.b.def_var(c_var, next);
        let more = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, CHUNKS);
        self.b.ins().brif(more, header, &[], exit, &[]);
        self.b.seal_block(header);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
        for (slot, var) in acc_vars.iter().enumerate().filter(|(slot, _)| read_later(*slot)) {
            let acc = self.b.use_var(*var);
            let acc = self.b.ins().band(acc, exec);
            let (base, off) = self.mask_addr(wave, seg.masks_out[slot]);
            self.b.ins().store(scalar_mem(), acc, base, off);
        }
    }

    /// The segment's vector instructions on one chunk.
    fn steps(
        &mut self,
        ch: &mut Chunk,
        seg: &Segment,
        uniforms: &[(Value, Value)],
        masks_in: &[Value],
        lane_bits: Value,
    ) {
        for (n, step) in seg.steps.iter().enumerate() {
            self.step(ch, n, step, uniforms, masks_in, lane_bits);
        }
    }

    /// One vector instruction on one chunk.
    fn step(
        &mut self,
        ch: &mut Chunk,
        n: usize,
        step: &super::select::Step,
        uniforms: &[(Value, Value)],
        masks_in: &[Value],
        lane_bits: Value,
    ) {
        // (A packed op reads the halves it picks itself.)
        let src: Vec<Value> = match step.kind {
            Kind::PkF32 { .. } | Kind::F64 { .. } | Kind::CmpF64 { .. } | Kind::DivF64(_) => Vec::new(),
            _ => step.src.iter().flatten().map(|s| self.read(ch, *s, uniforms)).collect(),
        };
        // (Only f32 steps have them; their sources are all present, so `src[i]` is source i.)
        let src: Vec<Value> = if step.sign == Sign::NONE {
            src
        } else {
            let (abs, neg) = (step.sign.abs, step.sign.neg);
            src.into_iter()
                .enumerate()
                .map(|(i, v)| self.sign_modifiers(v, abs >> i & 1 != 0, neg >> i & 1 != 0))
                .collect()
        };
        let mask_in = step.mask_in.map(|m| match m {
            MaskSrc::Input(i) => self.mask_vector(masks_in[i as usize], ch.shift, lane_bits),
            MaskSrc::Step(k) => ch.step_masks[k as usize].expect("a mask-writing step"),
        });
        let amount = |i: usize| match step.src[i] {
            Some(Src::Uniform(u)) => Amount::Scalar(uniforms[u as usize].0),
            _ => Amount::Lanes(src[i]),
        };
        let (value, mask) = match step.kind {
            Kind::Mov => (Some(src[0]), None),
            Kind::Not => (Some(self.b.ins().bnot(src[0])), None),
            Kind::Bin(op) => (Some(self.bin(op, src[0], src[1], amount(0))), None),
            Kind::Tri(op) => (Some(self.tri(op, src[0], src[1], src[2], amount(1), amount(2))), None),
            Kind::Carry { op, carry_in } => {
                let (r, carry) = self.carry(op, src[0], src[1], if carry_in { mask_in } else { None });
                (Some(r), Some(carry))
            }
            Kind::Cndmask => (Some(self.b.ins().bitselect(mask_in.expect("a selector"), src[1], src[0])), None),
            Kind::CmpInt { cond, signed } => (None, Some(self.cmp_int(cond, signed, src[0], src[1]))),
            Kind::CmpF32(cond) => {
                let (a, b) = (self.flush_in(src[0]), self.flush_in(src[1]));
                (None, Some(self.cmp_f32(cond, a, b)))
            }
            Kind::CmpF64 { cond, abs, neg } => {
                let [a, b] = [0, 1].map(|i| {
                    let s = step.src[i].expect("a compare's source");
                    self.f64_lanes(ch, s, uniforms, abs >> i & 1 != 0, neg >> i & 1 != 0)
                });
                // Lanes 0 and 1, then 2 and 3, as 64-bit masks: their low dwords are the
                // four 32-bit mask lanes.
                let [m01, m23] = [0, 1].map(|h| self.cmp_float(cond, a[h], b[h]));
                (None, Some(self.low_dwords(m01, m23)))
            }
            Kind::AddF32 => (Some(self.farith(src[0], src[1], |b, x, y| b.ins().fadd(x, y))), None),
            Kind::SubF32 => (Some(self.farith(src[0], src[1], |b, x, y| b.ins().fsub(x, y))), None),
            Kind::SubRevF32 => (Some(self.farith(src[1], src[0], |b, x, y| b.ins().fsub(x, y))), None),
            Kind::MulF32 => (Some(self.farith(src[0], src[1], |b, x, y| b.ins().fmul(x, y))), None),
            Kind::FmaF32 { acc } => {
                let c = if acc { self.read(ch, Src::Vgpr(step.dst.expect("a destination")), uniforms) } else { src[2] };
                (Some(self.fma(src[0], src[1], c)), None)
            }
            Kind::MinMaxF32 { max } => (Some(self.minmax_f32(src[0], src[1], max)), None),
            Kind::RcpF32 => {
                let x = self.flush(src[0]);
                let x = self.b.ins().bitcast(F32X4, lanes(), x);
                let one = self.b.ins().f32const(1.0);
                let one = self.b.ins().splat(F32X4, one);
                let r = self.b.ins().fdiv(one, x);
                let r = self.nan_inputs(r, &[x]);
                (Some(self.flush(r)), None)
            }
            Kind::CvtIntF32 { signed } => {
                let x = self.b.ins().bitcast(F32X4, lanes(), src[0]);
                let r = if signed {
                    self.b.ins().fcvt_to_sint_sat(I32X4, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(I32X4, x)
                };
                (Some(r), None)
            }
            Kind::MinMax3F32 { max } => {
                let first = self.minmax_f32(src[0], src[1], max);
                (Some(self.minmax_f32(first, src[2], max)), None)
            }
            Kind::RoundF32 { trunc } => {
                let x = self.flush_in(src[0]);
                let x = self.b.ins().bitcast(F32X4, lanes(), x);
                let r = if trunc { self.b.ins().trunc(x) } else { self.b.ins().nearest(x) };
                (Some(self.nan_inputs(r, &[x])), None)
            }
            Kind::CvtF32U32 => {
                let f = self.b.ins().fcvt_from_uint(F32X4, src[0]);
                (Some(self.b.ins().bitcast(I32X4, lanes(), f)), None)
            }
            Kind::CvtF32I32 => {
                let f = self.b.ins().fcvt_from_sint(F32X4, src[0]);
                (Some(self.b.ins().bitcast(I32X4, lanes(), f)), None)
            }
            Kind::DivF64(op) => {
                let pairs = [0, 1, 2].map(|i| {
                    let s = step.src[i].expect("three sources");
                    (self.read(ch, s, uniforms), self.read(ch, next_dword(s), uniforms))
                });
                let (lo, hi, mask) = self.div_f64(op, pairs, mask_in, lane_bits);
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), mask)
            }
            Kind::DivF32(op) => {
                let (value, mask) = self.div_f32(op, [src[0], src[1], src[2]], mask_in, lane_bits);
                (Some(value), mask)
            }
            Kind::LdexpF64 { abs, neg } => {
                let pair = step.src[0].expect("a register pair");
                let hi = self.read(ch, next_dword(pair), uniforms);
                let hi = self.sign_modifiers(hi, abs, neg);
                let (lo, hi) = self.ldexp_f64(src[0], hi, src[1], lane_bits);
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), None)
            }
            Kind::CvtF64 { signed } => {
                // The host converts the two low lanes of a vector of signed dwords; the high
                // two are moved down first. An unsigned dword is its signed value with the top
                // bit flipped, plus 2^31 (exact in f64).
                let v = if signed {
                    src[0]
                } else {
                    let top = self.splat(0x8000_0000);
                    self.b.ins().bxor(src[0], top)
                };
                let high = self.b.ins().bitcast(I8X16, lanes(), v);
                let order: Vec<u8> = (8u8..16).chain(8..16).collect();
                let order = self.b.func.dfg.immediates.push(order.as_slice().into());
                let high = self.b.ins().shuffle(high, high, order);
                let high = self.b.ins().bitcast(I32X4, lanes(), high);
                let mut r = [v, high].map(|x| {
                    // (Cranelift matches this pair to one `cvtdq2pd`.)
                    let wide = self.b.ins().swiden_low(x);
                    self.b.ins().fcvt_from_sint(F64X2, wide)
                });
                if !signed {
                    let two31 = self.b.ins().f64const(2147483648.0);
                    let two31 = self.b.ins().splat(F64X2, two31);
                    r = r.map(|x| self.b.ins().fadd(x, two31));
                }
                let (lo, hi) = self.f64_lanes_to_pair(r);
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), None)
            }
            Kind::CvtF32Ubyte(n) => {
                let by = self.b.ins().iconst(I32, 8 * n as i64);
                let x = self.b.ins().ushr(src[0], by);
                let mask = self.splat(0xff);
                let byte = self.b.ins().band(x, mask);
                // Signed conversion: a byte is a small positive integer, exact either way,
                // and the signed one is a single host instruction.
                let f = self.b.ins().fcvt_from_sint(F32X4, byte);
                (Some(self.b.ins().bitcast(I32X4, lanes(), f)), None)
            }
            Kind::CvtF16F32 => (Some(self.cvt_f16_f32(src[0])), None),
            Kind::PackB32F16 => {
                let low_half = self.splat(0xffff);
                let low = self.b.ins().band(src[0], low_half);
                let sixteen = self.b.ins().iconst(I32, 16);
                let high = self.b.ins().ishl(src[1], sixteen);
                (Some(self.b.ins().bor(low, high)), None)
            }
            Kind::PkMov { hi0, hi1 } => {
                let (Some(Src::Vgpr(a)), Some(Src::Vgpr(b))) = (step.src[0], step.src[1]) else {
                    unreachable!("a move of VGPR pairs")
                };
                // Both sources are read before either destination dword is written: the
                // pairs may overlap.
                let low = if hi0 { self.read(ch, Src::Vgpr(a + 1), uniforms) } else { src[0] };
                let high = if hi1 { self.read(ch, Src::Vgpr(b + 1), uniforms) } else { src[1] };
                ch.regs.insert(step.dst.expect("a destination") + 1, (high, true));
                (Some(low), None)
            }
            Kind::PkF32 { op, sel, sel_hi, neg_lo, neg_hi } => {
                // Every source half is read before either destination dword is written: the
                // pairs may overlap.
                let mut halves = [[None; 3]; 2];
                for (half, (sel, neg)) in [(sel, neg_lo), (sel_hi, neg_hi)].into_iter().enumerate() {
                    for (i, s) in step.src.iter().enumerate() {
                        let Some(s) = *s else { continue };
                        let hi = sel >> i & 1;
                        let dword = match s {
                            Src::Vgpr(n) => Src::Vgpr(n + hi),
                            Src::Uniform(u) => Src::Uniform(u + hi),
                        };
                        let mut v = self.read(ch, dword, uniforms);
                        if neg >> i & 1 != 0 {
                            let sign = self.splat(0x8000_0000);
                            v = self.b.ins().bxor(v, sign);
                        }
                        halves[half][i] = Some(v);
                    }
                }
                let [lo, hi] = halves.map(|x| {
                    let (a, b) = (x[0].expect("source 0"), x[1].expect("source 1"));
                    match op {
                        FloatOp::Add => self.farith(a, b, |b, x, y| b.ins().fadd(x, y)),
                        FloatOp::Mul => self.farith(a, b, |b, x, y| b.ins().fmul(x, y)),
                        FloatOp::Fma => self.fma(a, b, x[2].expect("source 2")),
                        FloatOp::Rcp => unreachable!("no packed-f32 reciprocal"),
                    }
                });
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), None)
            }
            Kind::F64 { op, acc, abs, neg } => {
                // Two f64 lanes per host vector: lanes 0 and 1, then 2 and 3.
                let dst = step.dst.expect("a destination");
                let mut x = [[None; 2]; 3];
                for (i, s) in step.src.iter().enumerate() {
                    if let Some(s) = *s {
                        x[i] = self.f64_lanes(ch, s, uniforms, abs >> i & 1 != 0, neg >> i & 1 != 0).map(Some);
                    }
                }
                if acc {
                    x[2] = self.f64_lanes(ch, Src::Vgpr(dst), uniforms, false, false).map(Some);
                }
                let r = [0, 1].map(|h| {
                    let src = [x[0][h], x[1][h], x[2][h]];
                    self.f64_arith(op, src)
                });
                let (lo, hi) = self.f64_lanes_to_pair(r);
                ch.regs.insert(dst + 1, (hi, true));
                (Some(lo), None)
            }
            Kind::MadU64U32 => {
                let addend = step.src[2].expect("an addend");
                let addend_hi = self.read(ch, next_dword(addend), uniforms);
                let (lo, hi, carry) = self.mad_u64_u32(src[0], src[1], src[2], addend_hi);
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), Some(carry))
            }
            Kind::Shift64 { op, amount } => {
                let Some(Src::Vgpr(s)) = step.src[1] else { unreachable!("a 64-bit shift of a VGPR pair") };
                let hi = self.read(ch, Src::Vgpr(s + 1), uniforms);
                let (lo, hi) = self.shift64(op, amount, src[0], hi);
                // The high half here; the low half below, like any result.
                ch.regs.insert(step.dst.expect("a destination") + 1, (hi, true));
                (Some(lo), None)
            }
        };
        if let (Some(v), Some(d)) = (value, step.dst) {
            ch.regs.insert(d, (v, true));
        }
        if let Some(m) = mask {
            // Lanes outside EXEC are left as they come: a later step reads this mask only
            // lane-wise (a carry-in, a selector), its results in those lanes are not kept, and
            // the mask goes to its register ANDed with EXEC when the segment ends.
            ch.step_masks[n] = Some(m);
            if let Some(slot) = step.mask_out {
                ch.out_masks[slot as usize] = Some(m);
            }
        }
    }

    /// The current value of a source in this chunk.
    fn read(&mut self, ch: &mut Chunk, s: Src, uniforms: &[(Value, Value)]) -> Value {
        match s {
            Src::Uniform(u) => uniforms[u as usize].1,
            Src::Vgpr(r) => {
                if let Some((v, _)) = ch.regs.get(&r) {
                    return *v;
                }
                let v = self.b.ins().load(I32X4, mem(), ch.base, r as i32 * VGPR_BYTES);
                ch.regs.insert(r, (v, false));
                v
            }
        }
    }

    fn vconst(&mut self, v: [u32; 4]) -> Value {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(I32X4, c)
    }

    /// `x` in all four lanes, from the constant pool: one load (often folded into the
    /// instruction that uses it) where a splat of an immediate takes three instructions.
    fn splat(&mut self, x: u32) -> Value {
        self.vconst([x; 4])
    }

    /// The 4-lane mask (all ones where set) of bits `shift..shift+4` of a 64-bit lane mask.
    fn mask_vector(&mut self, bits: Value, shift: Value, lane_bits: Value) -> Value {
        let x = self.b.ins().ushr(bits, shift);
        let x = self.b.ins().ireduce(I32, x);
        let x = self.b.ins().splat(I32X4, x);
        let x = self.b.ins().band(x, lane_bits);
        self.b.ins().icmp(IntCC::Equal, x, lane_bits)
    }

    /// `value` shifted by `amount` (masked to 0..31) per lane.
    fn shift(&mut self, kind: Shift, value: Value, amount: Amount) -> Value {
        let op = |b: &mut FunctionBuilder, x: Value, s: Value| match kind {
            Shift::Shl => b.ins().ishl(x, s),
            Shift::Shr => b.ins().ushr(x, s),
            Shift::Sar => b.ins().sshr(x, s),
        };
        match amount {
            // Cranelift masks a shift amount to the lane width, as the hardware does.
            Amount::Scalar(s) => op(&mut self.b, value, s),
            Amount::Lanes(s) => {
                // No per-lane shift in Cranelift's SIMD: lane by lane.
                let mut r = value;
                for l in 0..4u8 {
                    let x = self.b.ins().extractlane(value, l);
                    let n = self.b.ins().extractlane(s, l);
                    let y = op(&mut self.b, x, n);
                    r = self.b.ins().insertlane(r, y, l);
                }
                r
            }
        }
    }

    /// `hi:lo` shifted by `amount` (0..63), as (low, high) halves.
    fn shift64(&mut self, op: Shift64, amount: u8, lo: Value, hi: Value) -> (Value, Value) {
        let k = amount as i64;
        let by = |me: &mut Self, n: i64| me.b.ins().iconst(I32, n);
        if k == 0 {
            return (lo, hi);
        }
        match (op, k < 32) {
            (Shift64::Shl, true) => {
                let (n, m) = (by(self, k), by(self, 32 - k));
                let l = self.b.ins().ishl(lo, n);
                let h = self.b.ins().ishl(hi, n);
                let carried = self.b.ins().ushr(lo, m);
                (l, self.b.ins().bor(h, carried))
            }
            (Shift64::Shl, false) => {
                let n = by(self, k - 32);
                (self.splat(0), self.b.ins().ishl(lo, n))
            }
            (Shift64::Shr | Shift64::Sar, true) => {
                let (n, m) = (by(self, k), by(self, 32 - k));
                let l = self.b.ins().ushr(lo, n);
                let carried = self.b.ins().ishl(hi, m);
                let h = if op == Shift64::Shr { self.b.ins().ushr(hi, n) } else { self.b.ins().sshr(hi, n) };
                (self.b.ins().bor(l, carried), h)
            }
            (Shift64::Shr, false) => {
                let n = by(self, k - 32);
                (self.b.ins().ushr(hi, n), self.splat(0))
            }
            (Shift64::Sar, false) => {
                let (n, sign) = (by(self, k - 32), by(self, 31));
                (self.b.ins().sshr(hi, n), self.b.ins().sshr(hi, sign))
            }
        }
    }

    fn bin(&mut self, op: Bin, a: Value, b: Value, amount_a: Amount) -> Value {
        match op {
            Bin::Add => self.b.ins().iadd(a, b),
            Bin::Sub => self.b.ins().isub(a, b),
            Bin::SubRev => self.b.ins().isub(b, a),
            Bin::And => self.b.ins().band(a, b),
            Bin::Or => self.b.ins().bor(a, b),
            Bin::Xor => self.b.ins().bxor(a, b),
            Bin::ShlRev => self.shift(Shift::Shl, b, amount_a),
            Bin::ShrRev => self.shift(Shift::Shr, b, amount_a),
            Bin::SarRev => self.shift(Shift::Sar, b, amount_a),
            Bin::MulLo => self.b.ins().imul(a, b),
            Bin::MulU24 => {
                let m = self.splat(0xff_ffff);
                let (x, y) = (self.b.ins().band(a, m), self.b.ins().band(b, m));
                self.b.ins().imul(x, y)
            }
            Bin::MaxU => self.b.ins().umax(a, b),
            Bin::MinU => self.b.ins().umin(a, b),
            Bin::MaxI => self.b.ins().smax(a, b),
            Bin::MinI => self.b.ins().smin(a, b),
            Bin::MulHiU => self.mul_hi_u32(a, b),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tri(&mut self, op: Tri, a: Value, b: Value, c: Value, amount_b: Amount, amount_c: Amount) -> Value {
        match op {
            Tri::Add3 => {
                let s = self.b.ins().iadd(a, b);
                self.b.ins().iadd(s, c)
            }
            Tri::LshlAdd => {
                let s = self.shift(Shift::Shl, a, amount_b);
                self.b.ins().iadd(s, c)
            }
            Tri::AddLshl => {
                let s = self.b.ins().iadd(a, b);
                self.shift(Shift::Shl, s, amount_c)
            }
            Tri::LshlOr => {
                let s = self.shift(Shift::Shl, a, amount_b);
                self.b.ins().bor(s, c)
            }
            Tri::AndOr => {
                let s = self.b.ins().band(a, b);
                self.b.ins().bor(s, c)
            }
            Tri::Or3 => {
                let s = self.b.ins().bor(a, b);
                self.b.ins().bor(s, c)
            }
            Tri::Xad => {
                let s = self.b.ins().bxor(a, b);
                self.b.ins().iadd(s, c)
            }
            Tri::MadU24 => {
                let p = self.bin(Bin::MulU24, a, b, Amount::Lanes(a));
                self.b.ins().iadd(p, c)
            }
            Tri::Bfi => self.b.ins().bitselect(a, b, c),
            Tri::Alignbit => {
                // `b >> s | a << (32 - s)` with `s = c & 31`, written so that no shift is by 32
                // (Cranelift masks amounts to 0..31): `(a << 1) << (31 - s)`, and
                // `31 - s == !c & 31`.
                let low = self.shift(Shift::Shr, b, amount_c);
                let not_c = match amount_c {
                    Amount::Scalar(s) => Amount::Scalar(self.b.ins().bnot(s)),
                    Amount::Lanes(v) => Amount::Lanes(self.b.ins().bnot(v)),
                };
                let one = self.b.ins().iconst(I32, 1);
                let a2 = self.b.ins().ishl(a, one);
                let high = self.shift(Shift::Shl, a2, not_c);
                self.b.ins().bor(low, high)
            }
            Tri::BfeU => {
                let field = self.shift(Shift::Shr, a, amount_b);
                let one = self.splat(1);
                let bit = self.shift(Shift::Shl, one, amount_c);
                let mask = self.b.ins().isub(bit, one);
                self.b.ins().band(field, mask)
            }
            Tri::BfeI => {
                // `(a >> off) << (32 - w) >> (32 - w)` arithmetic, with `32 - w == -w & 31`;
                // a width of 0 gives 0.
                let field = self.shift(Shift::Sar, a, amount_b);
                let neg_w = match amount_c {
                    Amount::Scalar(s) => Amount::Scalar(self.b.ins().ineg(s)),
                    Amount::Lanes(v) => Amount::Lanes(self.b.ins().ineg(v)),
                };
                let up = self.shift(Shift::Shl, field, neg_w);
                let r = self.shift(Shift::Sar, up, neg_w);
                let low_bits = self.splat(31);
                let width = self.b.ins().band(c, low_bits);
                let zero = self.splat(0);
                let empty = self.b.ins().icmp(IntCC::Equal, width, zero);
                self.b.ins().band_not(r, empty)
            }
        }
    }

    /// A register pair's four lanes as two f64 vectors (lanes 0 and 1, lanes 2 and 3): the
    /// low dwords in one 32-bit register, the high ones in the next, interleaved; with the
    /// sign cleared (`abs`), then flipped (`neg`).
    fn f64_lanes(
        &mut self,
        ch: &mut Chunk,
        pair: Src,
        uniforms: &[(Value, Value)],
        abs: bool,
        neg: bool,
    ) -> [Value; 2] {
        let lo = self.read(ch, pair, uniforms);
        let hi = self.read(ch, next_dword(pair), uniforms);
        let hi = self.sign_modifiers(hi, abs, neg);
        self.interleave(lo, hi)
    }

    /// 32-bit lanes (f32 values, or the high dwords of f64 ones) with `abs`, then `neg`,
    /// applied to their sign bits, as the interpreter applies its source modifiers.
    fn sign_modifiers(&mut self, mut hi: Value, abs: bool, neg: bool) -> Value {
        if abs || neg {
            let sign = self.splat(0x8000_0000);
            if abs {
                hi = self.b.ins().band_not(hi, sign);
            }
            if neg {
                hi = self.b.ins().bxor(hi, sign);
            }
        }
        hi
    }

    /// Four lanes' low and high dwords as two f64 vectors (lanes 0 and 1, lanes 2 and 3).
    fn interleave(&mut self, lo: Value, hi: Value) -> [Value; 2] {
        let lo = self.b.ins().bitcast(I8X16, lanes(), lo);
        let hi = self.b.ins().bitcast(I8X16, lanes(), hi);
        // Dword k of the low register is bytes 4k.., of the high one 16 + 4k.. .
        [[0u8, 16, 4, 20], [8, 24, 12, 28]].map(|words| {
            let order: Vec<u8> = words.iter().flat_map(|&w| w..w + 4).collect();
            let order = self.b.func.dfg.immediates.push(order.as_slice().into());
            let v = self.b.ins().shuffle(lo, hi, order);
            self.b.ins().bitcast(F64X2, lanes(), v)
        })
    }

    /// `v_mad_u64_u32` on one chunk: `a * b + c` of 32-bit factors and a 64-bit addend (its
    /// low and high dwords), as the result's low and high dwords and the carry out of the
    /// sum (all ones in a lane where the 64-bit sum wrapped). Two 64-bit lanes per host
    /// vector, lanes 0 and 1 then 2 and 3, as the f64 ops do.
    fn mad_u64_u32(&mut self, a: Value, b: Value, c_lo: Value, c_hi: Value) -> (Value, Value, Value) {
        let addend = self.interleave(c_lo, c_hi);
        let [(sum01, carry01), (sum23, carry23)] = [0, 1].map(|h| {
            let c = self.b.ins().bitcast(I64X2, lanes(), addend[h]);
            // The factors' lanes widened with zeros: Cranelift makes the product one
            // `pmuludq` (32 x 32 -> 64 bits, exact).
            let (wa, wb) = if h == 0 {
                (self.b.ins().uwiden_low(a), self.b.ins().uwiden_low(b))
            } else {
                (self.b.ins().uwiden_high(a), self.b.ins().uwiden_high(b))
            };
            let product = self.b.ins().imul(wa, wb);
            let sum = self.b.ins().iadd(product, c);
            // The sum wrapped exactly where it is below the addend.
            (sum, self.b.ins().icmp(IntCC::UnsignedLessThan, sum, c))
        });
        let (lo, hi) = self.f64_lanes_to_pair([sum01, sum23]);
        (lo, hi, self.low_dwords(carry01, carry23))
    }

    /// Two vectors of 64-bit lanes (lanes 0 and 1, 2 and 3; f64 or integer) as a register
    /// pair's low and high dwords.
    fn f64_lanes_to_pair(&mut self, r: [Value; 2]) -> (Value, Value) {
        let [a, b] = r.map(|v| self.b.ins().bitcast(I8X16, lanes(), v));
        let [lo, hi] = [[0u8, 8, 16, 24], [4, 12, 20, 28]].map(|words| {
            let order: Vec<u8> = words.iter().flat_map(|&w| w..w + 4).collect();
            let order = self.b.func.dfg.immediates.push(order.as_slice().into());
            let v = self.b.ins().shuffle(a, b, order);
            self.b.ins().bitcast(I32X4, lanes(), v)
        });
        (lo, hi)
    }

    /// An f64 division helper on one chunk (sources as low and high dwords): the low and
    /// high dwords of the result, and `v_div_scale_f64`'s lane mask. The common case — every
    /// lane's exponent fields inside the interpreter's fast-path bounds (`float_div`), or for
    /// `v_div_fmas_f64` no lane's VCC bit set — is computed here; otherwise the four lanes go
    /// to the interpreter's per-lane functions through `f64_lanes`.
    fn div_f64(
        &mut self,
        op: DivOp,
        x: [(Value, Value); 3],
        mask_in: Option<Value>,
        lane_bits: Value,
    ) -> (Value, Value, Option<Value>) {
        let ((fast_lo, fast_hi), ok) = match op {
            DivOp::Scale | DivOp::Fixup => {
                let [e0, e1, e2] = [0, 1, 2].map(|i| self.exponent_field(x[i].1));
                let diff = self.b.ins().isub(e2, e1);
                // The interpreter's fast-path bounds: e0 is source 0's or the estimate's
                // field, e1 the denominator's, e2 the numerator's.
                let bounds = match op {
                    DivOp::Scale => float_div::SCALE64_FAST,
                    _ => float_div::FIXUP64_FAST,
                };
                let ok = self.all_within([e0, e1, e2, diff].into_iter().zip(bounds));
                let result = if op == DivOp::Scale {
                    x[0]
                } else {
                    // The estimate with the quotient's sign.
                    let sign = self.splat(0x8000_0000);
                    let q = self.b.ins().band_not(x[0].1, sign);
                    let dn = self.b.ins().bxor(x[1].1, x[2].1);
                    let s = self.b.ins().band(dn, sign);
                    (x[0].0, self.b.ins().bor(q, s))
                };
                (result, ok)
            }
            DivOp::Fmas => {
                let [a, b, c] = x.map(|(lo, hi)| self.interleave(lo, hi));
                let r = [0, 1].map(|h| self.f64_arith(FloatOp::Fma, [Some(a[h]), Some(b[h]), Some(c[h])]));
                let ok = self.b.ins().bnot(mask_in.expect("VCC"));
                (self.f64_lanes_to_pair(r), ok)
            }
        };
        let fast_mask = (op == DivOp::Scale).then(|| self.splat(0));
        self.fast_or_lanes(ok, (fast_lo, fast_hi, fast_mask), op.into(), x, mask_in, lane_bits)
    }

    /// An f32 division helper on one chunk: the result and `v_div_scale_f32`'s lane mask.
    /// Where every lane is a case decided here — exponent fields inside the interpreter's
    /// fast-path bounds (`float_div::SCALE32_FAST`, `FIXUP32_FAST`), a zero numerator or
    /// denominator, an infinite denominator over a finite numerator, and for
    /// `v_div_fmas_f32` a lane without its VCC bit or with a NaN input (then it is
    /// `v_fma_f32`) — the chunk is computed here; otherwise its four lanes go to the
    /// interpreter's per-lane functions through `f64_lanes`, one value per low dword.
    fn div_f32(
        &mut self,
        op: DivOp,
        x: [Value; 3],
        mask_in: Option<Value>,
        lane_bits: Value,
    ) -> (Value, Option<Value>) {
        let mut fast_mask = None;
        let (fast, ok) = match op {
            DivOp::Scale | DivOp::Fixup => {
                let [e0, e1, e2] = x.map(|v| {
                    let e = self.b.ins().ushr_imm_u(v, 23);
                    let field = self.splat(0xff);
                    self.b.ins().band(e, field)
                });
                let diff = self.b.ins().isub(e2, e1);
                // Source 0 (or the estimate), the denominator, the numerator.
                let bounds = match op {
                    DivOp::Scale => float_div::SCALE32_FAST,
                    _ => float_div::FIXUP32_FAST,
                };
                let inside = self.all_within([e0, e1, e2, diff].into_iter().zip(bounds));
                // A zero numerator or denominator, decided on bits as the interpreter does
                // (padded or empty inputs make whole waves of them).
                let magnitude = self.splat(0x7fff_ffff);
                let [m0, md, mn] = x.map(|v| self.b.ins().band(v, magnitude));
                let zero = self.splat(0);
                let [d_zero, n_zero] = [md, mn].map(|m| self.b.ins().icmp(IntCC::Equal, m, zero));
                let sign = self.splat(0x8000_0000);
                let dn = self.b.ins().bxor(x[1], x[2]);
                let quotient_sign = self.b.ins().band(dn, sign);
                // An infinite denominator over a finite numerator: ggml's `1 / d` where an
                // all-zero block made `d` infinite (whole waves of them).
                let inf = self.splat(0x7f80_0000);
                let d_inf = self.b.ins().icmp(IntCC::Equal, md, inf);
                let n_finite = self.b.ins().icmp(IntCC::SignedLessThan, mn, inf);
                let by_inf = self.b.ins().band(d_inf, n_finite);
                if op == DivOp::Scale {
                    // Either zero, no NaN operand: the NaN that makes the quotient one.
                    let [n0, nd, nn] = [m0, md, mn].map(|m| self.b.ins().icmp(IntCC::SignedGreaterThan, m, inf));
                    let any_nan = self.b.ins().bor(n0, nd);
                    let any_nan = self.b.ins().bor(any_nan, nn);
                    let either_zero = self.b.ins().bor(d_zero, n_zero);
                    let zeros = self.b.ins().band_not(either_zero, any_nan);
                    let nan = self.splat(0x7fc0_0000);
                    let result = self.b.ins().bitselect(zeros, nan, x[0]);
                    // A nonzero finite numerator over an infinite denominator, source 0 not
                    // a NaN: the quotient is tiny, source 0 comes out as it is (an infinite
                    // one scaled down stays infinite) and the lane's VCC bit is set.
                    let tiny = self.b.ins().band_not(by_inf, n_zero);
                    let tiny = self.b.ins().band_not(tiny, n0);
                    fast_mask = Some(tiny);
                    let special = self.b.ins().bor(zeros, tiny);
                    (result, self.b.ins().bor(inside, special))
                } else {
                    // The estimate (flushed per MODE) with the quotient's sign; a zero
                    // numerator over a normal denominator gives the signed zero, a number or
                    // an infinity over a zero the signed infinity.
                    let q = self.flush_out(x[0]);
                    let q = self.b.ins().band_not(q, sign);
                    let estimate = self.b.ins().bor(q, quotient_sign);
                    let d_normal = self.all_within([(e1, (1, 254))]);
                    let n_not_nan = self.all_within([(mn, (0, 0x7f80_0000))]);
                    let n_nonzero = self.all_within([(e2, (1, 255))]);
                    let zero_by = self.b.ins().band(n_zero, d_normal);
                    let by_zero = self.b.ins().band(d_zero, n_nonzero);
                    let by_zero = self.b.ins().band(by_zero, n_not_nan);
                    let signed_inf = self.b.ins().bor(inf, quotient_sign);
                    // A finite numerator over an infinite denominator: the signed zero.
                    let zero_by = self.b.ins().bor(zero_by, by_inf);
                    let result = self.b.ins().bitselect(zero_by, quotient_sign, estimate);
                    let result = self.b.ins().bitselect(by_zero, signed_inf, result);
                    let special = self.b.ins().bor(zero_by, by_zero);
                    (result, self.b.ins().bor(inside, special))
                }
            }
            DivOp::Fmas => {
                // Lanes without their VCC bit, and lanes with a NaN input (the first NaN
                // input, quieted, scaled or not: the FMA's own NaN rule).
                let inf = self.splat(0x7f80_0000);
                let magnitude = self.splat(0x7fff_ffff);
                let mut any_nan = None;
                for v in x {
                    let m = self.b.ins().band(v, magnitude);
                    let nan = self.b.ins().icmp(IntCC::SignedGreaterThan, m, inf);
                    any_nan = Some(any_nan.map_or(nan, |so_far| self.b.ins().bor(so_far, nan)));
                }
                let r = self.fma(x[0], x[1], x[2]);
                let unscaled = self.b.ins().bnot(mask_in.expect("VCC"));
                (r, self.b.ins().bor(unscaled, any_nan.expect("three sources")))
            }
        };
        let zero = self.splat(0);
        let pairs = x.map(|v| (v, zero));
        let (value, _, mask) =
            self.fast_or_lanes(ok, (fast, zero, fast_mask), LaneFn::div32(op), pairs, mask_in, lane_bits);
        (value, mask)
    }

    /// `v_ldexp_f64` on one chunk (source as low and high dwords, its modifiers applied; `n`
    /// the exponents): the result's low and high dwords. A chunk whose lanes are all zeros or
    /// normal numbers that stay normal (exponent field in 1..=2046 before and after) is
    /// scaled here by adding to the exponent field, exactly what the interpreter's rounding
    /// gives; any other goes to its per-lane function.
    fn ldexp_f64(&mut self, lo: Value, hi: Value, n: Value, lane_bits: Value) -> (Value, Value) {
        let e = self.exponent_field(hi);
        // (An exponent near i32::MAX wraps the sum negative: out of range, as it should be.)
        let scaled = self.b.ins().iadd(e, n);
        let normal = self.all_within([(e, (1, 2046)), (scaled, (1, 2046))]);
        let magnitude = self.splat(0x7fff_ffff);
        let magnitude = self.b.ins().band(hi, magnitude);
        let bits = self.b.ins().bor(magnitude, lo);
        let zero = self.splat(0);
        let zero = self.b.ins().icmp(IntCC::Equal, bits, zero);
        let ok = self.b.ins().bor(normal, zero);
        let by = self.b.ins().iconst(I32, 20);
        let step = self.b.ins().ishl(n, by);
        let moved = self.b.ins().iadd(hi, step);
        let fast_hi = self.b.ins().bitselect(zero, hi, moved);
        let none = self.splat(0);
        let x = [(lo, hi), (n, none), (none, none)];
        let (lo, hi, _) = self.fast_or_lanes(ok, (lo, fast_hi, None), LaneFn::Ldexp, x, None, lane_bits);
        (lo, hi)
    }

    /// The 11-bit exponent fields of f64 lanes, from their high dwords.
    fn exponent_field(&mut self, hi: Value) -> Value {
        let by = self.b.ins().iconst(I32, 20);
        let e = self.b.ins().ushr(hi, by);
        let field = self.splat(0x7ff);
        self.b.ins().band(e, field)
    }

    /// All ones in the lanes where every value `v` of `checks` is within its inclusive
    /// signed bounds `(lo, hi)`.
    fn all_within(&mut self, checks: impl IntoIterator<Item = (Value, (i32, i32))>) -> Value {
        let mut all = None;
        for (v, (lo, hi)) in checks {
            let (l, h) = (self.splat(lo as u32), self.splat(hi as u32));
            let a = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, l);
            let b = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, v, h);
            let both = self.b.ins().band(a, b);
            all = Some(match all {
                Some(so_far) => self.b.ins().band(so_far, both),
                None => both,
            });
        }
        all.expect("at least one check")
    }

    /// Where every lane of `ok` is set, the `fast` results (low and high dwords, and a lane
    /// mask if `op` makes one); otherwise the four lanes through the interpreter's per-lane
    /// function `op` (`super::f64_lanes`), sources `x` as low and high dwords and `mask_in`
    /// as its mask bits.
    fn fast_or_lanes(
        &mut self,
        ok: Value,
        fast: (Value, Value, Option<Value>),
        op: LaneFn,
        x: [(Value, Value); 3],
        mask_in: Option<Value>,
        lane_bits: Value,
    ) -> (Value, Value, Option<Value>) {
        let all = self.b.ins().vall_true(ok);
        let (slow, merge) = (self.b.create_block(), self.b.create_block());
        let results = if fast.2.is_some() { 3 } else { 2 };
        for _ in 0..results {
            self.b.append_block_param(merge, I32X4);
        }
        let mut fast_args: Vec<BlockArg> = vec![fast.0.into(), fast.1.into()];
        fast_args.extend(fast.2.map(BlockArg::from));
        self.b.ins().brif(all, merge, &fast_args, slow, &[]);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        // [a0..a3, b0..b3, c0..c3, mask bits]; the results come back in the first four words.
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 13 * 8, 3));
        for (i, (lo, hi)) in x.into_iter().enumerate() {
            let [l01, l23] = self.interleave(lo, hi);
            self.b.ins().stack_store(I64, l01, slot, 32 * i as i32);
            self.b.ins().stack_store(I64, l23, slot, 32 * i as i32 + 16);
        }
        let bits = match mask_in {
            Some(m) => self.b.ins().vhigh_bits(I64, m),
            None => self.b.ins().iconst(I64, 0),
        };
        self.b.ins().stack_store(I64, bits, slot, 96);
        let (sig, helper) = self.lanes_helper.expect("the helper's signature");
        let helper = self.b.ins().iconst(I64, helper as i64);
        let code = self.b.ins().iconst(I64, op as i64);
        let mode = self.b.ins().iconst(I64, self.env.mode as i64);
        let io = self.b.ins().stack_addr(I64, slot, 0);
        self.b.ins().call_indirect(sig, helper, &[code, mode, io]);
        let r = [0, 16].map(|at| self.b.ins().stack_load(I64, I64X2, slot, at));
        let (lo, hi) = self.f64_lanes_to_pair(r);
        let mut out: Vec<BlockArg> = vec![lo.into(), hi.into()];
        if fast.2.is_some() {
            let bits = self.b.ins().stack_load(I64, I64, slot, 96);
            let zero = self.b.ins().iconst(I64, 0);
            out.push(self.mask_vector(bits, zero, lane_bits).into());
        }
        self.b.ins().jump(merge, &out);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        let p = self.b.block_params(merge).to_vec();
        (p[0], p[1], p.get(2).copied())
    }

    /// An f64 operation on two lanes by host arithmetic (taken only where MODE keeps f64
    /// denormals and rounds to nearest even); a NaN result carries the first NaN input,
    /// quieted, as the interpreter's do.
    fn f64_arith(&mut self, op: FloatOp, x: [Option<Value>; 3]) -> Value {
        let a = x[0].expect("source 0");
        let b = || x[1].expect("source 1");
        let r = match op {
            FloatOp::Add => self.b.ins().fadd(a, b()),
            FloatOp::Mul => self.b.ins().fmul(a, b()),
            FloatOp::Fma => {
                let c = x[2].expect("source 2");
                self.b.ins().fma(a, b(), c)
            }
            FloatOp::Rcp => {
                let one = self.b.ins().f64const(1.0);
                let one = self.b.ins().splat(F64X2, one);
                self.b.ins().fdiv(one, a)
            }
        };
        self.nan_inputs(r, &x.into_iter().flatten().collect::<Vec<_>>())
    }

    /// The high halves of the four lanes' unsigned 64-bit products: two `pmuludq` (products
    /// of lanes 0, 1 and of 2, 3) and the odd words of both.
    fn mul_hi_u32(&mut self, a: Value, b: Value) -> Value {
        let (al, bl) = (self.b.ins().uwiden_low(a), self.b.ins().uwiden_low(b));
        let low = self.b.ins().imul(al, bl);
        let (ah, bh) = (self.b.ins().uwiden_high(a), self.b.ins().uwiden_high(b));
        let high = self.b.ins().imul(ah, bh);
        let low = self.b.ins().bitcast(I8X16, lanes(), low);
        let high = self.b.ins().bitcast(I8X16, lanes(), high);
        // Bytes 4..8 and 12..16 of each product vector (the second vector's bytes are 16..32).
        let order: Vec<u8> = [4u8, 12, 20, 28].iter().flat_map(|&w| w..w + 4).collect();
        let order = self.b.func.dfg.immediates.push(order.as_slice().into());
        let r = self.b.ins().shuffle(low, high, order);
        self.b.ins().bitcast(I32X4, lanes(), r)
    }

    /// The result and the carry (borrow) out, as a lane mask. `cin` is the carry-in mask.
    fn carry(&mut self, op: CarryOp, a: Value, b: Value, cin: Option<Value>) -> (Value, Value) {
        let (x, y) = match op {
            CarryOp::Add | CarryOp::Sub => (a, b),
            CarryOp::SubRev => (b, a),
        };
        let add = op == CarryOp::Add;
        let t = if add { self.b.ins().iadd(x, y) } else { self.b.ins().isub(x, y) };
        // Out of [0, 2^32) before the carry-in: the sum wrapped, or the difference is negative.
        let out = if add {
            self.b.ins().icmp(IntCC::UnsignedLessThan, t, x)
        } else {
            self.b.ins().icmp(IntCC::UnsignedLessThan, x, y)
        };
        let Some(cin) = cin else { return (t, out) };
        // The carry-in mask is -1 where set: adding 1 is subtracting it.
        let r = if add { self.b.ins().isub(t, cin) } else { self.b.ins().iadd(t, cin) };
        // It carries out on its own only from 0xffffffff (add) or 0 (subtract).
        let edge = self.splat(if add { u32::MAX } else { 0 });
        let at_edge = self.b.ins().icmp(IntCC::Equal, t, edge);
        let more = self.b.ins().band(at_edge, cin);
        (r, self.b.ins().bor(out, more))
    }

    fn cmp_int(&mut self, cond: Cond, signed: bool, a: Value, b: Value) -> Value {
        match cond {
            Cond::False => self.splat(0),
            Cond::True => self.splat(u32::MAX),
            _ => self.b.ins().icmp(int_cc(cond, signed), a, b),
        }
    }

    fn cmp_f32(&mut self, cond: Cond, a: Value, b: Value) -> Value {
        let (x, y) = (self.b.ins().bitcast(F32X4, lanes(), a), self.b.ins().bitcast(F32X4, lanes(), b));
        self.cmp_float(cond, x, y)
    }

    /// The low dwords of two vectors of 64-bit lanes, as one vector of four 32-bit lanes.
    fn low_dwords(&mut self, a: Value, b: Value) -> Value {
        let (a, b) = (self.b.ins().bitcast(I8X16, lanes(), a), self.b.ins().bitcast(I8X16, lanes(), b));
        let order: Vec<u8> = [0u8, 8, 16, 24].iter().flat_map(|&w| w..w + 4).collect();
        let order = self.b.func.dfg.immediates.push(order.as_slice().into());
        let v = self.b.ins().shuffle(a, b, order);
        self.b.ins().bitcast(I32X4, lanes(), v)
    }

    /// A compare of two float vectors of one type (F32X4 or F64X2): an integer vector of
    /// their lane width, all ones where `cond` holds.
    fn cmp_float(&mut self, cond: Cond, x: Value, y: Value) -> Value {
        let int = if self.b.func.dfg.value_type(x) == F64X2 { I64X2 } else { I32X4 };
        let constant = |me: &mut Self, v: i64| {
            let k = me.b.ins().iconst(int.lane_type(), v);
            me.b.ins().splat(int, k)
        };
        // x64 has no single compare for these two: ordered and unequal, unordered or equal.
        let pair = match cond {
            Cond::NeOrLg => Some((FloatCC::Ordered, FloatCC::NotEqual, true)),
            Cond::Nlg => Some((FloatCC::Unordered, FloatCC::Equal, false)),
            _ => None,
        };
        if let Some((c1, c2, both)) = pair {
            let (m1, m2) = (self.b.ins().fcmp(c1, x, y), self.b.ins().fcmp(c2, x, y));
            return if both { self.b.ins().band(m1, m2) } else { self.b.ins().bor(m1, m2) };
        }
        let cc = match cond {
            Cond::False => return constant(self, 0),
            Cond::True => return constant(self, -1),
            Cond::Lt => FloatCC::LessThan,
            Cond::Eq => FloatCC::Equal,
            Cond::Le => FloatCC::LessThanOrEqual,
            Cond::Gt => FloatCC::GreaterThan,
            Cond::NeOrLg | Cond::Nlg => unreachable!("composed above"),
            Cond::Ge => FloatCC::GreaterThanOrEqual,
            Cond::O => FloatCC::Ordered,
            Cond::U => FloatCC::Unordered,
            Cond::Nge => FloatCC::UnorderedOrLessThan,
            Cond::Ngt => FloatCC::UnorderedOrLessThanOrEqual,
            Cond::Nle => FloatCC::UnorderedOrGreaterThan,
            Cond::Neq => FloatCC::NotEqual,
            Cond::Nlt => FloatCC::UnorderedOrGreaterThanOrEqual,
        };
        // A vector compare gives an integer vector: all ones where it holds.
        self.b.ins().fcmp(cc, x, y)
    }

    /// A denormal becomes a signed zero.
    fn flush(&mut self, v: Value) -> Value {
        let exp_mask = self.splat(0x7f80_0000);
        let sign_mask = self.splat(0x8000_0000);
        let zero = self.splat(0);
        let exp = self.b.ins().band(v, exp_mask);
        let tiny = self.b.ins().icmp(IntCC::Equal, exp, zero);
        let sign = self.b.ins().band(v, sign_mask);
        self.b.ins().bitselect(tiny, sign, v)
    }

    fn flush_in(&mut self, v: Value) -> Value {
        if self.env.in32() {
            v
        } else {
            self.flush(v)
        }
    }

    fn flush_out(&mut self, v: Value) -> Value {
        if self.env.out32() {
            v
        } else {
            self.flush(v)
        }
    }

    /// `v_cvt_f16_f32` ([`Kind::CvtF16F32`]) without branches, every lane by each rule and
    /// the rule of its magnitude selected: a NaN keeps its top ten mantissa bits, quieted;
    /// from 65520 (halfway from the largest finite f16 to 2^16, a tie that rounds to the
    /// even infinity) up, infinity; from 2^-14 up, the exponent rebiased and the mantissa
    /// rounded to nearest even on the bits themselves (a carry correctly moves the
    /// exponent); below, an f16 denormal, rounded by the host's f32 addition to 0.5, whose
    /// unit in the last place is the f16 denormals' 2^-24 (so the sum's low bits are the
    /// result, 1024 being the smallest normal's encoding).
    fn cvt_f16_f32(&mut self, a: Value) -> Value {
        let a = self.flush_in(a);
        let sign_bit = self.splat(0x8000_0000);
        let sign = self.b.ins().band(a, sign_bit);
        let abs = self.b.ins().bxor(a, sign);
        let thirteen = self.b.ins().iconst(I32, 13);
        let shifted = self.b.ins().ushr(abs, thirteen);
        // NaN.
        let ten_bits = self.splat(0x3ff);
        let payload = self.b.ins().band(shifted, ten_bits);
        let quiet_nan = self.splat(0x7e00);
        let nan_half = self.b.ins().bor(payload, quiet_nan);
        // Normal: (abs - (112 << 23) + 0xfff + the kept mantissa's last bit) >> 13.
        let one = self.splat(1);
        let odd = self.b.ins().band(shifted, one);
        let rebias = self.splat(0xfffu32.wrapping_sub(112 << 23));
        let biased = self.b.ins().iadd(abs, rebias);
        let biased = self.b.ins().iadd(biased, odd);
        let normal_half = self.b.ins().ushr(biased, thirteen);
        // Denormal or zero.
        let x = self.b.ins().bitcast(F32X4, lanes(), abs);
        let half = self.b.ins().f32const(0.5);
        let half = self.b.ins().splat(F32X4, half);
        let sum = self.b.ins().fadd(x, half);
        let sum = self.b.ins().bitcast(I32X4, lanes(), sum);
        let half_bits = self.splat(0x3f00_0000);
        let small_half = self.b.ins().isub(sum, half_bits);
        let [smallest_normal, overflow, inf] = [0x3880_0000, 0x477f_f000, 0x7f80_0000].map(|v| self.splat(v));
        let is_normal = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, abs, smallest_normal);
        let overflows = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, abs, overflow);
        let is_nan = self.b.ins().icmp(IntCC::SignedGreaterThan, abs, inf);
        let inf_half = self.splat(0x7c00);
        let r = self.b.ins().bitselect(is_normal, normal_half, small_half);
        let r = self.b.ins().bitselect(overflows, inf_half, r);
        let r = self.b.ins().bitselect(is_nan, nan_half, r);
        let sixteen = self.b.ins().iconst(I32, 16);
        let sign_half = self.b.ins().ushr(sign, sixteen);
        self.b.ins().bor(r, sign_half)
    }

    /// A two-source f32 operation by host arithmetic, flushing per MODE.
    fn farith(&mut self, a: Value, b: Value, f: impl Fn(&mut FunctionBuilder, Value, Value) -> Value) -> Value {
        let (a, b) = (self.flush_in(a), self.flush_in(b));
        let (x, y) = (self.b.ins().bitcast(F32X4, lanes(), a), self.b.ins().bitcast(F32X4, lanes(), b));
        let r = f(&mut self.b, x, y);
        let r = self.nan_inputs(r, &[x, y]);
        self.flush_out(r)
    }

    /// `v_max_f32` (`max`) or `v_min_f32` as the interpreter computes it (`float::minmax32`,
    /// `float_fast::host_minmax`): inputs flushed per MODE; numbers ordered on their bits
    /// made signed-comparable, which puts -0 below +0; a NaN operand by the ISA's rule — in
    /// IEEE mode a signalling NaN wins, quieted, else the other operand is the result, and two
    /// NaNs give the second, quieted. Branch-free: a lane of each rule, then selects.
    fn minmax_f32(&mut self, a: Value, b: Value, max: bool) -> Value {
        let (a, b) = (self.flush_in(a), self.flush_in(b));
        let magnitude = self.splat(0x7fff_ffff);
        let key = |me: &mut Self, x: Value| {
            let sign = me.b.ins().sshr_imm_u(x, 31);
            let flip = me.b.ins().band(sign, magnitude);
            me.b.ins().bxor(x, flip)
        };
        let (ka, kb) = (key(self, a), key(self, b));
        let pick_b = if max {
            self.b.ins().icmp(IntCC::SignedLessThan, ka, kb)
        } else {
            self.b.ins().icmp(IntCC::SignedLessThan, kb, ka)
        };
        let mut r = self.b.ins().bitselect(pick_b, b, a);
        let (inf, quiet) = (self.splat(0x7f80_0000), self.splat(0x0040_0000));
        let nan = |me: &mut Self, x: Value| {
            let m = me.b.ins().band(x, magnitude);
            me.b.ins().icmp(IntCC::SignedGreaterThan, m, inf)
        };
        let (na, nb) = (nan(self, a), nan(self, b));
        let (qa, qb) = (self.b.ins().bor(a, quiet), self.b.ins().bor(b, quiet));
        r = self.b.ins().bitselect(nb, a, r);
        let b_or_quiet = self.b.ins().bitselect(nb, qb, b);
        r = self.b.ins().bitselect(na, b_or_quiet, r);
        if self.env.ieee() {
            let zero = self.splat(0);
            let signalling = |me: &mut Self, x: Value, is_nan: Value| {
                let q = me.b.ins().band(x, quiet);
                let q_clear = me.b.ins().icmp(IntCC::Equal, q, zero);
                me.b.ins().band(is_nan, q_clear)
            };
            let (sa, sb) = (signalling(self, a, na), signalling(self, b, nb));
            r = self.b.ins().bitselect(sb, qb, r);
            r = self.b.ins().bitselect(sa, qa, r);
        }
        self.flush_out(r)
    }

    /// Fused `a * b + c`.
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let (a, b, c) = (self.flush_in(a), self.flush_in(b), self.flush_in(c));
        let [x, y, z] = [a, b, c].map(|v| self.b.ins().bitcast(F32X4, lanes(), v));
        let r = self.b.ins().fma(x, y, z);
        let r = self.nan_inputs(r, &[x, y, z]);
        self.flush_out(r)
    }

    /// `so_far` with the lanes where `x` or `y` (float lanes of one type) is a NaN added, as
    /// a 32-bit lane mask.
    fn note_nans(&mut self, so_far: Option<Value>, x: Value, y: Value) -> Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, y);
        let nan = self.b.ins().bitcast(I32X4, lanes(), nan);
        match so_far {
            Some(so_far) => self.b.ins().bor(so_far, nan),
            None => nan,
        }
    }

    /// The result `r` (f32 or f64 lanes) as integer lanes of its width, where a NaN result
    /// carries the first NaN input (`inputs`, float lanes of `r`'s type, in source order),
    /// quieted, as the interpreter's results do: the host instruction's own choice depends on
    /// the operand order the code generator picked. The fix-up is off the common path: a
    /// branch taken only when some lane's result is a NaN; in a chunk's fast body, the NaN
    /// lanes are only noted (two results to a compare).
    fn nan_inputs(&mut self, r: Value, inputs: &[Value]) -> Value {
        let float = self.b.func.dfg.value_type(r);
        let (int, quiet) = if float == F64X2 { (I64X2, 1i64 << 51) } else { (I32X4, 0x0040_0000) };
        let bits = self.b.ins().bitcast(int, lanes(), r);
        if let Some(mut note) = self.nan_note.take() {
            // A chunk's fast body: noted, and the exact body runs if any lane has one.
            match note.pending.take() {
                Some(other) if self.b.func.dfg.value_type(other) == float => {
                    note.lanes = Some(self.note_nans(note.lanes, other, r))
                }
                Some(other) => {
                    note.lanes = Some(self.note_nans(note.lanes, other, other));
                    note.pending = Some(r);
                }
                None => note.pending = Some(r),
            }
            self.nan_note = Some(note);
            return bits;
        }
        let nan = self.b.ins().fcmp(FloatCC::Unordered, r, r);
        let any = self.b.ins().vany_true(nan);
        let slow = self.b.create_block();
        let merge = self.b.create_block();
        let out = self.b.append_block_param(merge, int);
        self.b.ins().brif(any, slow, &[], merge, &[bits.into()]);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let quiet = self.b.ins().iconst(int.lane_type(), quiet);
        let quiet = self.b.ins().splat(int, quiet);
        let mut fixed = bits;
        for &f in inputs.iter().rev() {
            let nan = self.b.ins().fcmp(FloatCC::Unordered, f, f);
            let v = self.b.ins().bitcast(int, lanes(), f);
            let q = self.b.ins().bor(v, quiet);
            fixed = self.b.ins().bitselect(nan, q, fixed);
        }
        self.b.ins().jump(merge, &[fixed.into()]);
        self.b.switch_to_block(merge);
        self.b.seal_block(merge);
        out
    }
}

/// The next dword of a register-pair source.
fn next_dword(s: Src) -> Src {
    match s {
        Src::Vgpr(n) => Src::Vgpr(n + 1),
        Src::Uniform(u) => Src::Uniform(u + 1),
    }
}

/// The integer comparison of an ordered condition.
fn int_cc(cond: Cond, signed: bool) -> IntCC {
    match (cond, signed) {
        (Cond::Eq, _) => IntCC::Equal,
        (Cond::NeOrLg, _) => IntCC::NotEqual,
        (Cond::Lt, false) => IntCC::UnsignedLessThan,
        (Cond::Lt, true) => IntCC::SignedLessThan,
        (Cond::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (Cond::Le, true) => IntCC::SignedLessThanOrEqual,
        (Cond::Gt, false) => IntCC::UnsignedGreaterThan,
        (Cond::Gt, true) => IntCC::SignedGreaterThan,
        (Cond::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        (Cond::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        _ => unreachable!("integer compares have no unordered or constant conditions here"),
    }
}

#[derive(Clone, Copy)]
enum Shift {
    Shl,
    Shr,
    Sar,
}

/// A shift amount: the same for every lane, or per lane.
#[derive(Clone, Copy)]
enum Amount {
    Scalar(Value),
    Lanes(Value),
}
