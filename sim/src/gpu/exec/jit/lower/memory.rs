//! Compiled global, FLAT and LDS loads and stores ([`MemOp`]).
//!
//! The common case is compiled: the whole wave active, its lanes at one address (a uniform
//! load or store) or at consecutive elements (lane `l` at lane 0's address plus `l` times the
//! access size), and that range inside one mapping. The checks run before anything is
//! written: the shape over all 64 lanes in host SIMD, then one call of [`super::Helpers::span`]
//! (the wave's translation cache) for the range, which also refuses read-only mappings for a
//! store and, for FLAT, the LDS and private apertures. Anything else — lanes off, another
//! address pattern, lanes on both sides of a 4 GiB boundary, a range that leaves its mapping,
//! a fault — runs the interpreter's handler, so faults are reported exactly as before.
//!
//! LDS accesses check their range inline (the workgroup's LDS bounds are in the exit record),
//! and any other shape of them — lanes off, scattered addresses, as in barrier-bound code
//! that updates a state with one lane — moves lane by lane in translated code when every lane
//! on is inside the allocation (the handler otherwise: it reads 0 and drops writes outside).
//! The two-address forms (`ds_read2*`, `ds_write2*`, which compilers make of neighbouring LDS
//! accesses) always go lane by lane, each lane's two accesses in turn as the handler makes
//! them.
//!
//! The data moves as the interpreter's fast path moves it: dwords by 32-bit (or 128-bit)
//! accesses, pairs of dwords by one 64-bit access each (single-copy atomic when aligned; a
//! look-back scan's flag and value), one value for all lanes of a uniform load, and lane 63's
//! data last (so kept) for a uniform store.

use super::{mem, scalar_mem, Frame, Lowering, CHUNKS, CHUNK_LANES, EXEC, SGPR, VGPR_BYTES};
use crate::gpu::exec::jit::select::{MemAddr, MemOp, ScalarLoad};
use crate::gpu::exec::jit::{EXIT_LDS, EXIT_LDS_LEN, EXIT_MOVED_READ, EXIT_MOVED_WRITTEN};
use crate::gpu::exec::memory::{Mapping, WaveMem, SITES};
use crate::gpu::exec::{Ctx, LANES};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where translated code finds its sites' mappings: `ctx.mem.sites`.
const CTX_MEM: i32 = std::mem::offset_of!(Ctx<'static>, mem) as i32;
const MEM_SITES: i32 = std::mem::offset_of!(WaveMem<'static>, sites) as i32;
const SITE_BYTES: i32 = size_of::<Mapping>() as i32;
const SITE_START: i32 = std::mem::offset_of!(Mapping, start) as i32;
const SITE_END: i32 = std::mem::offset_of!(Mapping, end) as i32;
const SITE_HOST: i32 = std::mem::offset_of!(Mapping, host) as i32;
const SITE_WRITABLE: i32 = std::mem::offset_of!(Mapping, writable) as i32;

/// Sites handed out so far in this process.
static SITES_GIVEN: AtomicUsize = AtomicUsize::new(0);

/// The site of the next compiled access: numbered across all translations of the process,
/// not from 0 in each. A wave's runs share its `WaveMem::sites`, so numbering each run from
/// 0 made the runs of one kernel evict each other's mappings (a saxpy wave's kernel-argument
/// loads in its first run and its array accesses in its second took the same three sites,
/// and six of its eight accesses asked `span_host` every time). A kernel's hot runs are
/// translated one after another, so its sites are consecutive and do not collide while it
/// has at most [`SITES`] of them.
fn next_site() -> usize {
    SITES_GIVEN.fetch_add(1, Ordering::Relaxed) % SITES
}

/// Simulated GPU memory: checked before the access, and shared with other threads (plain
/// accesses, as the interpreter's).
fn host_mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// `span`'s flag (beside `span_host`'s, and not passed on) for a vector access: a site hit also
/// asks `prefetch_ahead` for the site's access after next. A wave's lanes cover a range that
/// moves on by a stride in a loop; scalar loads (a few dwords, mostly the same ones: kernel
/// arguments, descriptors) do not ask.
const PREFETCH: i64 = 1 << 3;

impl Lowering<'_> {
    /// A global, FLAT or LDS access: compiled where the wave's shape allows (any shape inside
    /// the allocation for LDS), else the handler of `entry` (at `offset` in the run).
    pub(super) fn memory(&mut self, f: &Frame, op: &MemOp, entry: u64, offset: u32) {
        if op.second.is_some() {
            self.lds_pair(f, op, entry, offset);
            return;
        }
        let size = 4 * op.dwords as i64;
        let slow = self.b.create_block();
        let done = self.b.create_block();
        // The shape, from lanes 0 and 1 of the address (low halves): a stride of 0 or `size`.
        let exec = self.b.ins().load(I64, scalar_mem(), f.wave, EXEC);
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
        let lo_reg = match op.addr {
            MemAddr::Pair(v) | MemAddr::Sbase { voffset: v, .. } | MemAddr::Lds(v) => v,
        };
        let lo_at = lo_reg as i32 * VGPR_BYTES;
        let lo0 = self.b.ins().load(I32, mem(), f.vgpr, lo_at);
        let lo1 = self.b.ins().load(I32, mem(), f.vgpr, lo_at + 4);
        let d = self.b.ins().isub(lo1, lo0);
        let unit = self.b.ins().icmp_imm_u(IntCC::Equal, d, size);
        let same = self.b.ins().icmp_imm_u(IntCC::Equal, d, 0);
        let shape = self.b.ins().bor(unit, same);
        let go = self.b.ins().band(full, shape);
        let check = self.b.create_block();
        self.b.ins().brif(go, check, &[], slow, &[]);

        // Every lane where the shape puts it.
        self.b.switch_to_block(check);
        self.b.seal_block(check);
        let hi0 = match op.addr {
            MemAddr::Pair(v) => Some(self.b.ins().load(I32, mem(), f.vgpr, (v as i32 + 1) * VGPR_BYTES)),
            MemAddr::Sbase { .. } | MemAddr::Lds(_) => None,
        };
        let ok = self.lanes_in_shape(f, op, lo_at, lo0, hi0, d);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], slow, &[]);

        // The range, in one mapping.
        self.b.switch_to_block(pass);
        self.b.seal_block(pass);
        let lo64 = self.b.ins().uextend(I64, lo0);
        let base = match (op.addr, hi0) {
            (MemAddr::Pair(_), Some(hi0)) => {
                let hi64 = self.b.ins().uextend(I64, hi0);
                let hi64 = self.b.ins().ishl_imm_u(hi64, 32);
                self.b.ins().bor(hi64, lo64)
            }
            (MemAddr::Sbase { sgpr, .. }, _) => {
                let s = self.b.ins().load(I64, scalar_mem(), f.wave, SGPR + 4 * sgpr as i32);
                self.b.ins().iadd(s, lo64)
            }
            (MemAddr::Lds(_), _) => lo64,
            (MemAddr::Pair(_), None) => unreachable!("a pair address has its high half"),
        };
        let start = self.b.ins().iadd_imm_s(base, op.offset);
        let d64 = self.b.ins().uextend(I64, d);
        let span = self.b.ins().imul_imm_u(d64, LANES as i64 - 1);
        let len = self.b.ins().iadd_imm_u(span, size);
        let lds = matches!(op.addr, MemAddr::Lds(_));
        let flags = op.store as i64 | (op.flat as i64) << 1 | (lds as i64) << 2;
        let fast = self.b.create_block();
        let host = self.b.append_block_param(fast, I64);
        if lds {
            self.lds_span(f, start, len, fast, slow);
        } else {
            self.span(f, start, len, flags | PREFETCH, fast, slow);
        }

        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        if !lds {
            // The whole wave (EXEC is full here): what the statistics count for it.
            let bytes = LANES as i64 * size;
            self.count_moved(f, op.store, bytes);
        }
        let one_address = self.b.create_block();
        let consecutive = self.b.create_block();
        self.b.ins().brif(same, one_address, &[], consecutive, &[]);
        self.b.switch_to_block(one_address);
        self.b.seal_block(one_address);
        if op.store {
            self.store_one_address(f, op, host);
        } else {
            self.load_one_address(f, op, host);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(consecutive);
        self.b.seal_block(consecutive);
        self.consecutive(f, op, host);
        self.b.ins().jump(done, &[]);

        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        if lds {
            // Any other shape of LDS access: lane by lane, unless a lane is out of range.
            self.lds_lanes_or_handler(f, op, exec, entry, offset, done);
        } else {
            self.interpret(f, entry, offset);
            self.b.ins().jump(done, &[]);
        }
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// `ds_read2*`/`ds_write2*`: lane by lane (each lane's two accesses in turn, as the
    /// handler makes them), unless a lane is out of range (the handler then).
    fn lds_pair(&mut self, f: &Frame, op: &MemOp, entry: u64, offset: u32) {
        let done = self.b.create_block();
        let exec = self.b.ins().load(I64, scalar_mem(), f.wave, EXEC);
        self.lds_lanes_or_handler(f, op, exec, entry, offset, done);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// The LDS access lane by lane ([`Self::lds_lanes`]), or the handler of `entry` when a
    /// lane is out of range; both go on to `done`.
    fn lds_lanes_or_handler(&mut self, f: &Frame, op: &MemOp, exec: Value, entry: u64, offset: u32, done: Block) {
        let interpreted = self.b.create_block();
        self.lds_lanes(f, op, exec, done, interpreted);
        self.b.switch_to_block(interpreted);
        self.b.seal_block(interpreted);
        self.interpret(f, entry, offset);
        self.b.ins().jump(done, &[]);
    }

    /// Jumps to `fast` with the host address of the LDS bytes `[start, start + len)`, or to
    /// `slow` if they are not all inside the workgroup's allocation: checked inline against
    /// the exit record's copy of the LDS bounds (`start` is at most 2^32 + 2^16, `len` small:
    /// no wrap).
    fn lds_span(&mut self, f: &Frame, start: Value, len: Value, fast: Block, slow: Block) {
        let lds = self.b.ins().load(I64, scalar_mem(), f.exit, EXIT_LDS);
        let lds_len = self.b.ins().load(I64, scalar_mem(), f.exit, EXIT_LDS_LEN);
        let end = self.b.ins().iadd(start, len);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, lds_len);
        let host = self.b.ins().iadd(lds, start);
        self.b.ins().brif(inside, fast, &[host.into()], slow, &[]);
    }

    /// An LDS access of any lanes and addresses (as the interpreter does it: lane `l` at
    /// `vaddr[l] + offset`, wrapping at 32 bits), when every lane in `exec` lies inside the
    /// allocation; else on to `interpreted` (which reads 0 and drops writes byte by byte)
    /// before anything moved. The range check takes the highest offset of a lane on, four
    /// lanes at a time; the data moves lane by lane: all 64 in order with EXEC full, else
    /// only the lanes on, found one by one (one lane advancing an MT19937 state costs one
    /// step, not 64). A read whose data register is its address register is safe: each
    /// lane's address is read before its data is written, and no lane reads another's.
    fn lds_lanes(&mut self, f: &Frame, op: &MemOp, exec: Value, done: Block, interpreted: Block) {
        let MemAddr::Lds(vaddr) = op.addr else { unreachable!("an LDS access") };
        let size = 4 * op.dwords as i64;
        let addr_at = vaddr as i32 * VGPR_BYTES;
        // Each lane's accesses: (byte offset, first data VGPR), in the handler's order.
        let accesses: Vec<(i64, u8)> =
            std::iter::once((op.offset, op.data)).chain(op.second.map(|s| (s.offset, s.data))).collect();
        // The highest offset of a lane on (lanes off count as 0), of every access (each
        // wraps at 32 bits on its own).
        let offsets: Vec<Value> = accesses
            .iter()
            .map(|&(off, _)| {
                let off = self.b.ins().iconst(I32, off);
                self.b.ins().splat(I32X4, off)
            })
            .collect();
        let lane_bits = self.vconst([1, 2, 4, 8]);
        let mut highest: Option<Value> = None;
        for c in 0..CHUNKS as i32 {
            let addr = self.b.ins().load(I32X4, mem(), f.vgpr, addr_at + 16 * c);
            let shift = self.b.ins().iconst(I64, 4 * c as i64);
            let on = self.mask_vector(exec, shift, lane_bits);
            for &offset in &offsets {
                let a = self.b.ins().iadd(addr, offset);
                let a = self.b.ins().band(a, on);
                highest = Some(match highest {
                    Some(h) => self.b.ins().umax(h, a),
                    None => a,
                });
            }
        }
        let highest = highest.expect("sixteen chunks");
        let lanes: Vec<Value> = (0..4).map(|i| self.b.ins().extractlane(highest, i)).collect();
        let top = lanes.into_iter().reduce(|a, b| self.b.ins().umax(a, b)).expect("four lanes");
        let top = self.b.ins().uextend(I64, top);
        let len = self.b.ins().iadd_imm_u(top, size);
        let zero = self.b.ins().iconst(I64, 0);
        let moving = self.b.create_block();
        let base = self.b.append_block_param(moving, I64);
        self.lds_span(f, zero, len, moving, interpreted);
        self.b.switch_to_block(moving);
        self.b.seal_block(moving);
        // Lane `lane`'s data, moved. Its address is read once, before any of its data is
        // written (a read may write its own address register).
        let move_lane = |me: &mut Self, lane: Value| {
            let slot = me.b.ins().ishl_imm_u(lane, 2);
            let slot = me.b.ins().iadd(f.vgpr, slot);
            let addr = me.b.ins().load(I32, mem(), slot, addr_at);
            for &(offset, data) in &accesses {
                let a = me.b.ins().iadd_imm_u(addr, offset);
                let a = me.b.ins().uextend(I64, a);
                let host = me.b.ins().iadd(base, a);
                for k in 0..op.dwords {
                    let reg = (data + k) as i32 * VGPR_BYTES;
                    if op.store {
                        let v = me.b.ins().load(I32, mem(), slot, reg);
                        me.b.ins().store(host_mem(), v, host, 4 * k as i32);
                    } else {
                        let v = me.b.ins().load(I32, host_mem(), host, 4 * k as i32);
                        me.b.ins().store(mem(), v, slot, reg);
                    }
                }
            }
        };
        let (all, some) = (self.b.create_block(), self.b.create_block());
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, exec, -1);
        self.b.ins().brif(full, all, &[], some, &[]);
        // EXEC full: lanes 0 to 63.
        self.b.switch_to_block(all);
        self.b.seal_block(all);
        let each = self.b.create_block();
        let lane = self.b.append_block_param(each, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(each, &[zero.into()]);
        self.b.switch_to_block(each);
        move_lane(self, lane);
        let next = self.b.ins().iadd_imm_u(lane, 1);
        let more = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, LANES as i64);
        self.b.ins().brif(more, each, &[next.into()], done, &[]);
        self.b.seal_block(each);
        // Else the lanes on, lowest first.
        self.b.switch_to_block(some);
        self.b.seal_block(some);
        let (next_on, lane_on) = (self.b.create_block(), self.b.create_block());
        let m = self.b.append_block_param(next_on, I64);
        self.b.ins().jump(next_on, &[exec.into()]);
        self.b.switch_to_block(next_on);
        self.b.ins().brif(m, lane_on, &[], done, &[]);
        self.b.switch_to_block(lane_on);
        self.b.seal_block(lane_on);
        let lane = self.b.ins().ctz(m);
        move_lane(self, lane);
        let rest = self.b.ins().iadd_imm_s(m, -1);
        let rest = self.b.ins().band(m, rest);
        self.b.ins().jump(next_on, &[rest.into()]);
        self.b.seal_block(next_on);
    }

    /// Whether every lane's address is lane 0's plus `l * d`, with no carry out of the low
    /// halves anywhere in the wave: lane 63's low half is checked once, and then each lane's
    /// low half is `lo0 + l * d` and a pair's high half `hi0`. (A wave whose addresses cross
    /// a 4 GiB boundary is left to the interpreter.) Sixteen 4-lane differences, OR-ed.
    fn lanes_in_shape(&mut self, f: &Frame, op: &MemOp, lo_at: i32, lo0: Value, hi0: Option<Value>, d: Value) -> Value {
        let lo0_64 = self.b.ins().uextend(I64, lo0);
        let d64 = self.b.ins().uextend(I64, d);
        let span = self.b.ins().imul_imm_u(d64, LANES as i64 - 1);
        let last = self.b.ins().iadd(lo0_64, span);
        let no_wrap = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, last, u32::MAX as i64);
        let lo0v = self.b.ins().splat(I32X4, lo0);
        let dv = self.b.ins().splat(I32X4, d);
        let hi0v = hi0.map(|h| self.b.ins().splat(I32X4, h));
        let chunk_step = self.b.ins().imul_imm_u(d, CHUNK_LANES);
        let chunk_step = self.b.ins().splat(I32X4, chunk_step);
        let lane = self.vconst([0, 1, 2, 3]);
        let step = self.b.ins().imul(lane, dv);
        let mut expected = self.b.ins().iadd(lo0v, step);
        let mut off: Option<Value> = None;
        for c in 0..CHUNKS as i32 {
            let at = c * 16;
            let lo = self.b.ins().load(I32X4, mem(), f.vgpr, lo_at + at);
            let mut diff = self.b.ins().bxor(lo, expected);
            if let (MemAddr::Pair(v), Some(hi0v)) = (op.addr, hi0v) {
                let hi = self.b.ins().load(I32X4, mem(), f.vgpr, (v as i32 + 1) * VGPR_BYTES + at);
                let diff_hi = self.b.ins().bxor(hi, hi0v);
                diff = self.b.ins().bor(diff, diff_hi);
            }
            off = Some(match off {
                Some(o) => self.b.ins().bor(o, diff),
                None => diff,
            });
            expected = self.b.ins().iadd(expected, chunk_step);
        }
        let any_off = self.b.ins().vany_true(off.expect("sixteen chunks"));
        self.b.ins().band_not(no_wrap, any_off)
    }

    /// One value for every lane: read once, as the interpreter does for lanes naming one
    /// address.
    fn load_one_address(&mut self, f: &Frame, op: &MemOp, host: Value) {
        let put = |me: &mut Self, reg: u8, v: Value| {
            let v = me.b.ins().splat(I32X4, v);
            for c in 0..CHUNKS as i32 {
                me.b.ins().store(mem(), v, f.vgpr, reg as i32 * VGPR_BYTES + c * 16);
            }
        };
        let mut k = 0;
        while k + 1 < op.dwords {
            let v = self.b.ins().load(I64, host_mem(), host, 4 * k as i32);
            let (lo, hi) = self.halves(v);
            put(self, op.data + k, lo);
            put(self, op.data + k + 1, hi);
            k += 2;
        }
        if k < op.dwords {
            let v = self.b.ins().load(I32, host_mem(), host, 4 * k as i32);
            put(self, op.data + k, v);
        }
    }

    /// Lanes storing to one address: the last lane's data is what stays.
    fn store_one_address(&mut self, f: &Frame, op: &MemOp, host: Value) {
        let last = 4 * (LANES as i32 - 1);
        let lane63 = |me: &mut Self, reg: u8| me.b.ins().load(I32, mem(), f.vgpr, reg as i32 * VGPR_BYTES + last);
        let mut k = 0;
        while k + 1 < op.dwords {
            let (lo, hi) = (lane63(self, op.data + k), lane63(self, op.data + k + 1));
            let v = self.pair(lo, hi);
            self.b.ins().store(host_mem(), v, host, 4 * k as i32);
            k += 2;
        }
        if k < op.dwords {
            let v = lane63(self, op.data + k);
            self.b.ins().store(host_mem(), v, host, 4 * k as i32);
        }
    }

    /// Lane `l` at `host + l * size`: single dwords move four lanes at a time; wider
    /// accesses lane by lane, 64 bits at a time.
    fn consecutive(&mut self, f: &Frame, op: &MemOp, host: Value) {
        if op.dwords == 1 {
            for c in 0..CHUNKS as i32 {
                let reg = op.data as i32 * VGPR_BYTES + c * 16;
                if op.store {
                    let v = self.b.ins().load(I32X4, mem(), f.vgpr, reg);
                    self.b.ins().store(host_mem(), v, host, c * 16);
                } else {
                    let v = self.b.ins().load(I32X4, host_mem(), host, c * 16);
                    self.b.ins().store(mem(), v, f.vgpr, reg);
                }
            }
            return;
        }
        // A loop over the lanes: `at` is lane l's memory, `lane` its slot in a register.
        let body = self.b.create_block();
        let l = self.b.append_block_param(body, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(body, &[zero.into()]);
        self.b.switch_to_block(body);
        let at = self.b.ins().imul_imm_u(l, 4 * op.dwords as i64);
        let at = self.b.ins().iadd(host, at);
        let lane = self.b.ins().imul_imm_u(l, 4);
        let lane = self.b.ins().iadd(f.vgpr, lane);
        let reg = |k: u8| (op.data + k) as i32 * VGPR_BYTES;
        let mut k = 0;
        while k + 1 < op.dwords {
            if op.store {
                let lo = self.b.ins().load(I32, mem(), lane, reg(k));
                let hi = self.b.ins().load(I32, mem(), lane, reg(k + 1));
                let v = self.pair(lo, hi);
                self.b.ins().store(host_mem(), v, at, 4 * k as i32);
            } else {
                let v = self.b.ins().load(I64, host_mem(), at, 4 * k as i32);
                let (lo, hi) = self.halves(v);
                self.b.ins().store(mem(), lo, lane, reg(k));
                self.b.ins().store(mem(), hi, lane, reg(k + 1));
            }
            k += 2;
        }
        if k < op.dwords {
            if op.store {
                let v = self.b.ins().load(I32, mem(), lane, reg(k));
                self.b.ins().store(host_mem(), v, at, 4 * k as i32);
            } else {
                let v = self.b.ins().load(I32, host_mem(), at, 4 * k as i32);
                self.b.ins().store(mem(), v, lane, reg(k));
            }
        }
        let next = self.b.ins().iadd_imm_u(l, 1);
        let more = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, LANES as i64);
        let after = self.b.create_block();
        self.b.ins().brif(more, body, &[next.into()], after, &[]);
        self.b.seal_block(body);
        self.b.switch_to_block(after);
        self.b.seal_block(after);
    }

    /// `s_load_dword*`: every dword read, then the SGPRs written (the base may be among
    /// them), when the dwords lie in one mapping; the handler of `entry` otherwise.
    pub(super) fn scalar_load(&mut self, f: &Frame, op: &ScalarLoad, entry: u64, offset: u32) {
        let base = self.b.ins().load(I64, scalar_mem(), f.wave, SGPR + 4 * op.sbase as i32);
        let mut addr = self.b.ins().iadd_imm_s(base, op.offset);
        if let Some(s) = op.soffset {
            let o = self.b.ins().load(I32, scalar_mem(), f.wave, SGPR + 4 * s as i32);
            let o = self.b.ins().uextend(I64, o);
            addr = self.b.ins().iadd(addr, o);
        }
        let addr = self.b.ins().band_imm_s(addr, !3);
        let len = self.b.ins().iconst(I64, 4 * op.dwords as i64);
        let (fast, slow, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let host = self.b.append_block_param(fast, I64);
        self.span(f, addr, len, 0, fast, slow);
        self.b.switch_to_block(fast);
        self.b.seal_block(fast);
        self.count_moved(f, false, 4 * op.dwords as i64);
        let values: Vec<Value> =
            (0..op.dwords as i32).map(|k| self.b.ins().load(I32, host_mem(), host, 4 * k)).collect();
        for (k, v) in values.into_iter().enumerate() {
            self.b.ins().store(scalar_mem(), v, f.wave, SGPR + 4 * (op.dst as i32 + k as i32));
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        self.interpret(f, entry, offset);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
    }

    /// Jumps to `fast` with the host address of `[start, start + len)`, or to `slow` where
    /// the interpreter must take the access (`flags` as `jit::span_host` reads them). A global
    /// access or scalar load (neither FLAT, which may reach the LDS or private memory, nor
    /// LDS) has a site: the mapping the site kept is checked inline first, and a miss asks
    /// `span_host`, which keeps the mapping for next time. With [`PREFETCH`] a site hit also
    /// calls `prefetch_ahead` for the site's access after next.
    fn span(&mut self, f: &Frame, start: Value, len: Value, flags: i64, fast: Block, slow: Block) {
        let (store, global) = (flags & 1 != 0, flags & 6 == 0);
        let site = global.then(next_site);
        let ask = self.b.create_block();
        if let Some(site) = site {
            let mem = self.b.ins().load(I64, scalar_mem(), f.ctx, CTX_MEM);
            let at = MEM_SITES + site as i32 * SITE_BYTES;
            let kept = |me: &mut Self, field: i32| me.b.ins().load(I64, scalar_mem(), mem, at + field);
            let (lo, hi, host) = (kept(self, SITE_START), kept(self, SITE_END), kept(self, SITE_HOST));
            let end = self.b.ins().iadd(start, len);
            // Inside, and `start + len` did not wrap (an empty site has `lo > hi`).
            let from = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, start, lo);
            let to = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, hi);
            let ordered = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, start, end);
            let inside = self.b.ins().band(from, to);
            let mut hit = self.b.ins().band(inside, ordered);
            if store {
                let writable = kept(self, SITE_WRITABLE);
                let writable = self.b.ins().icmp_imm_u(IntCC::NotEqual, writable, 0);
                hit = self.b.ins().band(hit, writable);
            }
            let offset = self.b.ins().isub(start, lo);
            let at_host = self.b.ins().iadd(host, offset);
            if flags & PREFETCH != 0 {
                let hint = self.b.create_block();
                self.b.ins().brif(hit, hint, &[], ask, &[]);
                self.b.switch_to_block(hint);
                self.b.seal_block(hint);
                let site = self.b.ins().iconst(I64, site as i64);
                let helper = self.b.ins().iconst(I64, f.helpers.prefetch as i64);
                self.b.ins().call_indirect(f.prefetch_sig, helper, &[f.ctx, start, len, site]);
                self.b.ins().jump(fast, &[at_host.into()]);
            } else {
                self.b.ins().brif(hit, fast, &[at_host.into()], ask, &[]);
            }
        } else {
            self.b.ins().jump(ask, &[]);
        }
        self.b.switch_to_block(ask);
        self.b.seal_block(ask);
        let flags = flags & !PREFETCH | site.map_or(0, |s| (s as i64 + 1) << 8);
        let flags = self.b.ins().iconst(I64, flags);
        let helper = self.b.ins().iconst(I64, f.helpers.span as i64);
        let call = self.b.ins().call_indirect(f.span_sig, helper, &[f.ctx, start, len, flags]);
        let host = self.b.inst_results(call)[0];
        self.b.ins().brif(host, fast, &[host.into()], slow, &[]);
    }

    /// Adds `bytes` to what the run's memory instructions moved (`Exit::moved`, for the
    /// statistics): written by a store, read otherwise.
    fn count_moved(&mut self, f: &Frame, store: bool, bytes: i64) {
        let at = if store { EXIT_MOVED_WRITTEN } else { EXIT_MOVED_READ };
        let n = self.b.ins().load(I64, scalar_mem(), f.exit, at);
        let n = self.b.ins().iadd_imm_u(n, bytes);
        self.b.ins().store(scalar_mem(), n, f.exit, at);
    }

    /// The low and high 32 bits of a 64-bit value.
    fn halves(&mut self, v: Value) -> (Value, Value) {
        let lo = self.b.ins().ireduce(I32, v);
        let hi = self.b.ins().ushr_imm_u(v, 32);
        (lo, self.b.ins().ireduce(I32, hi))
    }

    /// `lo | hi << 32`.
    fn pair(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().uextend(I64, lo);
        let hi = self.b.ins().uextend(I64, hi);
        let hi = self.b.ins().ishl_imm_u(hi, 32);
        self.b.ins().bor(lo, hi)
    }
}
