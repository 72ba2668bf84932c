//! DS: the local data share (LDS) and the lane-exchange ops that use the
//! LDS crossbar without memory (`ds_swizzle`, `ds_permute`, `ds_bpermute`).
//!
//! Addresses are byte offsets in the workgroup's LDS: `vaddr + offset`
//! (one 16-bit offset), or `vaddr + offset0/offset1 * size` (`*2` ops;
//! `st64` multiplies by 64 more). Accesses beyond the allocation read 0
//! and are not written. The GDS has size zero (ROCm 5.2 never allocates
//! one): GDS reads return 0, writes and atomics are dropped. `ds_gws_*` (global
//! wave sync) are in [`super::gws`] (the tables in [`crate::gpu::gws`]); `ds_condxchg32_rtn_b64` is not implemented.
//!
//! LDS float atomics follow the MODE register: f32 denormals are flushed
//! unless MODE allows them.
//!
//! gfx950's transpose loads (`ds_read_b64_tr_b4/b8/b16`, `ds_read_b96_tr_b6`) exchange
//! elements between the lanes of each 16-lane group; see [`read_transposed`].

use super::vmem::access::{for_lanes, gather, scatter, Data, Half, Ld, St};
use super::vmem::atomic::Rmw;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::info::ALL_OPS;
use crate::isa::{Ext, Inst, Op, OpClass};
use std::sync::OnceLock;

/// What a DS op does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read(Ld),
    Write(St),
    /// `ds_read2*`: two `size`-byte reads.
    Read2 {
        size: u8,
        st64: bool,
    },
    Write2 {
        size: u8,
        st64: bool,
    },
    /// `ds_wrxchg2*_rtn`: two exchanges.
    Xchg2 {
        size: u8,
        st64: bool,
    },
    Atomic {
        rmw: Rmw,
        wide: bool,
        rtn: bool,
    },
    /// `ds_read_b64_tr_b{4,8,16}`, `ds_read_b96_tr_b6`: the element width in bits.
    ReadTr {
        bits: u8,
    },
    /// `ds_condxchg32_rtn_b64`: two 32-bit exchanges at an 8-byte-aligned pair, each done only
    /// when its data dword's bit 31 is set (which is not stored).
    CondXchg32,
    Swizzle,
    Permute,
    Bpermute,
    ReadAddtid,
    WriteAddtid,
    Append,
    Consume,
}

fn kind(op: Op) -> Option<Kind> {
    static KINDS: OnceLock<Vec<Option<Kind>>> = OnceLock::new();
    KINDS.get_or_init(|| ALL_OPS.iter().map(|o| parse(o.name())).collect())[op as usize]
}

fn parse(name: &str) -> Option<Kind> {
    let n = name.strip_prefix("ds_")?;
    let two = |s: &str| -> Option<(u8, bool)> {
        Some(match s {
            "b32" => (4, false),
            "b64" => (8, false),
            "st64_b32" => (4, true),
            "st64_b64" => (8, true),
            _ => return None,
        })
    };
    if let Some(s) = n.strip_prefix("read2") {
        return two(s.trim_start_matches('_')).map(|(size, st64)| Kind::Read2 { size, st64 });
    }
    if let Some(s) = n.strip_prefix("write2") {
        return two(s.trim_start_matches('_')).map(|(size, st64)| Kind::Write2 { size, st64 });
    }
    if let Some(s) = n
        .strip_prefix("wrxchg2")
        .and_then(|s| s.strip_suffix("_rtn_b32").map(|p| (p, 4)).or(s.strip_suffix("_rtn_b64").map(|p| (p, 8))))
    {
        return Some(Kind::Xchg2 { size: s.1, st64: s.0 == "st64" });
    }
    let k = match n {
        "condxchg32_rtn_b64" => Kind::CondXchg32,
        "swizzle_b32" => Kind::Swizzle,
        "permute_b32" => Kind::Permute,
        "bpermute_b32" => Kind::Bpermute,
        "read_addtid_b32" => Kind::ReadAddtid,
        "write_addtid_b32" => Kind::WriteAddtid,
        "append" => Kind::Append,
        "consume" => Kind::Consume,
        "read_b64_tr_b4" => Kind::ReadTr { bits: 4 },
        "read_b96_tr_b6" => Kind::ReadTr { bits: 6 },
        "read_b64_tr_b8" => Kind::ReadTr { bits: 8 },
        "read_b64_tr_b16" => Kind::ReadTr { bits: 16 },
        "read_b32" => Kind::Read(Ld::dwords(1)),
        "read_b64" => Kind::Read(Ld::dwords(2)),
        "read_b96" => Kind::Read(Ld::dwords(3)),
        "read_b128" => Kind::Read(Ld::dwords(4)),
        "read_u8" => Kind::Read(Ld::sub(1, false, Half::Full)),
        "read_i8" => Kind::Read(Ld::sub(1, true, Half::Full)),
        "read_u16" => Kind::Read(Ld::sub(2, false, Half::Full)),
        "read_i16" => Kind::Read(Ld::sub(2, true, Half::Full)),
        "read_u8_d16" => Kind::Read(Ld::sub(1, false, Half::Lo)),
        "read_u8_d16_hi" => Kind::Read(Ld::sub(1, false, Half::Hi)),
        "read_i8_d16" => Kind::Read(Ld::sub(1, true, Half::Lo)),
        "read_i8_d16_hi" => Kind::Read(Ld::sub(1, true, Half::Hi)),
        "read_u16_d16" => Kind::Read(Ld::sub(2, false, Half::Lo)),
        "read_u16_d16_hi" => Kind::Read(Ld::sub(2, false, Half::Hi)),
        "write_b8" => Kind::Write(St { bytes: 1, hi: false }),
        "write_b8_d16_hi" => Kind::Write(St { bytes: 1, hi: true }),
        "write_b16" => Kind::Write(St { bytes: 2, hi: false }),
        "write_b16_d16_hi" => Kind::Write(St { bytes: 2, hi: true }),
        "write_b32" => Kind::Write(St::dwords(1)),
        "write_b64" => Kind::Write(St::dwords(2)),
        "write_b96" => Kind::Write(St::dwords(3)),
        "write_b128" => Kind::Write(St::dwords(4)),
        _ => return atomic(n),
    };
    Some(k)
}

fn atomic(n: &str) -> Option<Kind> {
    let (n, rtn) = match n.find("_rtn") {
        Some(i) => (format!("{}{}", &n[..i], &n[i + 4..]), true),
        None => (n.to_string(), false),
    };
    let (op, ty) = n.rsplit_once('_')?;
    let wide = matches!(ty, "b64" | "u64" | "i64" | "f64");
    let rmw = match (op, ty) {
        ("add", "u32" | "u64") => Rmw::Add,
        ("sub", "u32" | "u64") => Rmw::Sub,
        ("rsub", "u32" | "u64") => Rmw::Rsub,
        ("inc", "u32" | "u64") => Rmw::Inc,
        ("dec", "u32" | "u64") => Rmw::Dec,
        ("min", "i32" | "i64") => Rmw::SMin,
        ("max", "i32" | "i64") => Rmw::SMax,
        ("min", "u32" | "u64") => Rmw::UMin,
        ("max", "u32" | "u64") => Rmw::UMax,
        ("and", "b32" | "b64") => Rmw::And,
        ("or", "b32" | "b64") => Rmw::Or,
        ("xor", "b32" | "b64") => Rmw::Xor,
        ("mskor", "b32" | "b64") => Rmw::MskOr,
        ("wrxchg", "b32" | "b64") => Rmw::Swap,
        ("cmpst", "b32" | "b64") => Rmw::CmpSwap,
        ("cmpst", "f32" | "f64") => Rmw::CmpSwapF,
        ("wrap", "b32") => Rmw::Wrap,
        ("add", "f32") => Rmw::AddF32 { flush: false },
        ("add", "f64") => Rmw::AddF64,
        ("min", "f32") => Rmw::MinF32,
        ("max", "f32") => Rmw::MaxF32,
        ("min", "f64") => Rmw::MinF64,
        ("max", "f64") => Rmw::MaxF64,
        ("pk_add", "f16") => Rmw::PkAddF16,
        ("pk_add", "bf16") => Rmw::PkAddBf16,
        _ => return None,
    };
    Some(Kind::Atomic { rmw, wide, rtn })
}

pub fn handler(op: Op) -> Option<Handler> {
    (op.info().class == OpClass::Ds && kind(op).is_some()).then_some(exec as Handler)
}

/// The memory a DS instruction addresses: the LDS, or the (empty) GDS.
fn memory<'a>(inst: &Inst, lds: &'a mut [u8]) -> &'a mut [u8] {
    match inst.ext {
        Ext::Ds(d) if d.gds => &mut [],
        _ => lds,
    }
}

fn read(mem: &[u8], a: u32, out: &mut [u8]) {
    super::vmem::access::lds_read(mem, a, out)
}

fn write(mem: &mut [u8], a: u32, data: &[u8]) {
    super::vmem::access::lds_write(mem, a, data)
}

#[inline]
fn read32(mem: &[u8], a: u32) -> u32 {
    match mem.get(a as usize..a as usize + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => {
            let mut b = [0; 4];
            read(mem, a, &mut b);
            u32::from_le_bytes(b)
        }
    }
}

#[inline]
fn write32(mem: &mut [u8], a: u32, v: u32) {
    match mem.get_mut(a as usize..a as usize + 4) {
        Some(b) => b.copy_from_slice(&v.to_le_bytes()),
        None => write(mem, a, &v.to_le_bytes()),
    }
}

fn exec(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let Some(k) = kind(inst.op) else { return Err(ExecError::Unimplemented(inst.op)) };
    let Ext::Ds(d) = inst.ext else { return Err(ExecError::Invalid(format!("{} without DS fields", inst.op))) };
    let exec = w.exec;
    let offset = d.offset() as u32;
    let mode = w.mode;
    let mem = memory(inst, ctx.lds);
    match k {
        Kind::Read(ld) if ld.bytes == 4 => {
            let addr = *w.vreg(inst.src[0], 0)?;
            let dst = w.vreg_mut(inst.dst[0], 0)?;
            if exec == u64::MAX {
                for (d, a) in dst.iter_mut().zip(&addr) {
                    *d = read32(mem, a.wrapping_add(offset));
                }
            } else {
                for_lanes(exec, |l| dst[l] = read32(mem, addr[l].wrapping_add(offset)));
            }
        }
        Kind::Write(st) if st.bytes == 4 => {
            let (addr, data) = (w.vreg(inst.src[0], 0)?, w.vreg(inst.src[1], 0)?);
            if exec == u64::MAX {
                for (a, v) in addr.iter().zip(data) {
                    write32(mem, a.wrapping_add(offset), *v);
                }
            } else {
                for_lanes(exec, |l| write32(mem, addr[l].wrapping_add(offset), data[l]));
            }
        }
        Kind::Read(ld) => {
            let addr = *w.vreg(inst.src[0], 0)?;
            let mut out: Data = [[0; LANES]; 4];
            if ld.bytes == 4 {
                for_lanes(exec, |l| out[0][l] = read32(mem, addr[l].wrapping_add(offset)));
            } else {
                let n = ld.bytes as usize;
                for_lanes(exec, |l| {
                    let mut b = [0u8; 16];
                    read(mem, addr[l].wrapping_add(offset), &mut b[..n]);
                    for (dw, o) in out.iter_mut().enumerate().take(n.div_ceil(4)) {
                        o[l] = u32::from_le_bytes(b[4 * dw..4 * dw + 4].try_into().unwrap_or_default());
                    }
                });
            }
            // The other half of a d16 destination survives only without SRAM ECC.
            let keep = ld.half != Half::Full && ctx.dispatch.d16_preserves_unused;
            let old = if keep { *w.vreg(inst.dst[0], 0)? } else { [0; LANES] };
            ld.merge(&mut out, &old, exec);
            scatter(w, inst.dst[0], ld.regs(), exec, &out)?;
        }
        Kind::Write(st) => {
            let addr = *w.vreg(inst.src[0], 0)?;
            let mut data = gather(w, inst.src[1], st.regs())?;
            st.prepare(&mut data);
            if st.bytes == 4 {
                for_lanes(exec, |l| write32(mem, addr[l].wrapping_add(offset), data[0][l]));
            } else {
                let n = st.bytes as usize;
                for_lanes(exec, |l| {
                    let mut b = [0u8; 16];
                    for dw in 0..n.div_ceil(4) {
                        b[4 * dw..4 * dw + 4].copy_from_slice(&data[dw][l].to_le_bytes());
                    }
                    write(mem, addr[l].wrapping_add(offset), &b[..n]);
                });
            }
        }
        Kind::Read2 { size, st64 } | Kind::Write2 { size, st64 } | Kind::Xchg2 { size, st64 } => {
            let addr = *w.vreg(inst.src[0], 0)?;
            let unit = size as u32 * if st64 { 64 } else { 1 };
            let (a0, a1) = (d.offset0 as u32 * unit, d.offset1 as u32 * unit);
            let regs = size as usize / 4;
            let reads = !matches!(k, Kind::Write2 { .. });
            let writes = !matches!(k, Kind::Read2 { .. });
            let d0 = if writes { gather(w, inst.src[1], regs)? } else { [[0; LANES]; 4] };
            let d1 = if writes { gather(w, inst.src[2], regs)? } else { [[0; LANES]; 4] };
            let mut out: Data = [[0; LANES]; 4];
            for_lanes(exec, |l| {
                for (i, (off, data)) in [(a0, &d0), (a1, &d1)].into_iter().enumerate() {
                    let a = addr[l].wrapping_add(off);
                    for r in 0..regs {
                        let at = a.wrapping_add(4 * r as u32);
                        if reads {
                            out[i * regs + r][l] = read32(mem, at);
                        }
                        if writes {
                            write32(mem, at, data[r][l]);
                        }
                    }
                }
            });
            if reads {
                scatter(w, inst.dst[0], 2 * regs, exec, &out)?;
            }
        }
        Kind::CondXchg32 => {
            // Guide pseudocode: ADDR0 = (ADDR + offset) & 0xfff8, ADDR1 = ADDR0 + 4; each old
            // dword is returned, and DATA[31] / DATA[63] say whether { 0, DATA[30:0] } /
            // { 0, DATA[62:32] } replace it.
            let addr = *w.vreg(inst.src[0], 0)?;
            let data = gather(w, inst.src[1], 2)?;
            let mut out: Data = [[0; LANES]; 4];
            for_lanes(exec, |l| {
                let a0 = addr[l].wrapping_add(offset) & 0xfff8;
                for (i, a) in [a0, a0 + 4].into_iter().enumerate() {
                    out[i][l] = read32(mem, a);
                    let v = data[i][l];
                    if v >> 31 != 0 {
                        write32(mem, a, v & 0x7fff_ffff);
                    }
                }
            });
            scatter(w, inst.dst[0], 2, exec, &out)?;
        }
        Kind::Atomic { rmw, wide, rtn } => {
            let rmw = match rmw {
                // f32 denormals are kept only when MODE allows them.
                Rmw::AddF32 { .. } => Rmw::AddF32 { flush: mode >> 4 & 3 != 3 },
                r => r,
            };
            let addr = *w.vreg(inst.src[0], 0)?;
            let regs = if wide { 2 } else { 1 };
            let d0 = gather(w, inst.src[1], regs)?;
            let d1 = if inst.src[2].is_none() { [[0; LANES]; 4] } else { gather(w, inst.src[2], regs)? };
            // Compare-store and mask-or take (compare/mask, value); wrap takes (data, data2).
            let (val, cmp) =
                if matches!(rmw, Rmw::CmpSwap | Rmw::CmpSwapF | Rmw::MskOr) { (&d1, &d0) } else { (&d0, &d1) };
            let mut out: Data = [[0; LANES]; 4];
            for_lanes(exec, |l| {
                let a = addr[l].wrapping_add(offset);
                if wide {
                    let v = val[0][l] as u64 | (val[1][l] as u64) << 32;
                    let c = cmp[0][l] as u64 | (cmp[1][l] as u64) << 32;
                    let mut b = [0u8; 8];
                    read(mem, a, &mut b);
                    let old = u64::from_le_bytes(b);
                    write(mem, a, &rmw.apply64(old, v, c).to_le_bytes());
                    out[0][l] = old as u32;
                    out[1][l] = (old >> 32) as u32;
                } else {
                    let old = read32(mem, a);
                    write32(mem, a, rmw.apply32(old, val[0][l], cmp[0][l]));
                    out[0][l] = old;
                }
            });
            if rtn {
                scatter(w, inst.dst[0], regs, exec, &out)?;
            }
        }
        Kind::ReadAddtid | Kind::WriteAddtid => {
            let base = w.m0.wrapping_add(offset);
            if k == Kind::ReadAddtid {
                let mut out: Data = [[0; LANES]; 4];
                for_lanes(exec, |l| out[0][l] = read32(mem, base.wrapping_add(4 * l as u32)));
                scatter(w, inst.dst[0], 1, exec, &out)?;
            } else {
                let data = *w.vreg(inst.src[1], 0)?;
                for_lanes(exec, |l| write32(mem, base.wrapping_add(4 * l as u32), data[l]));
            }
        }
        Kind::Append | Kind::Consume => {
            // One counter at M0[15:0] + offset, moved by the number of active lanes.
            let a = (w.m0 & 0xffff).wrapping_add(offset);
            let old = read32(mem, a);
            let n = exec.count_ones();
            write32(mem, a, if k == Kind::Append { old.wrapping_add(n) } else { old.wrapping_sub(n) });
            scatter(w, inst.dst[0], 1, exec, &[[old; LANES]; 4])?;
        }
        Kind::ReadTr { bits } => {
            // The guide (§11.4) requires EXEC all ones: the exchange needs every lane's
            // data. A partial EXEC has no defined result, so it is an error here rather
            // than a guess; EXEC = 0 does nothing.
            if exec == 0 {
                return Ok(Flow::Next);
            }
            if exec != u64::MAX {
                return Err(ExecError::Invalid(format!(
                    "{} needs EXEC all ones (CDNA4 guide 11.4), EXEC is {exec:#018x}",
                    inst.op
                )));
            }
            let addr = *w.vreg(inst.src[0], 0)?;
            let out = read_transposed(mem, &addr, offset, bits as u32);
            scatter(w, inst.dst[0], if bits == 6 { 3 } else { 2 }, exec, &out)?;
        }
        Kind::Swizzle => {
            let src = *w.vreg(inst.src[0], 0)?;
            let out = swizzle(&src, exec, offset);
            scatter(w, inst.dst[0], 1, exec, &[out, [0; LANES], [0; LANES], [0; LANES]])?;
        }
        Kind::Permute | Kind::Bpermute => {
            let addr = *w.vreg(inst.src[0], 0)?;
            let data = *w.vreg(inst.src[1], 0)?;
            let mut out = [0u32; LANES];
            let lane_of = |l: usize| (addr[l].wrapping_add(offset) / 4 % LANES as u32) as usize;
            if k == Kind::Permute {
                // Forward: each active lane sends its data to the lane it addresses.
                for_lanes(exec, |l| out[lane_of(l)] = data[l]);
            } else {
                // Backward: each active lane reads the lane it addresses (0 if inactive).
                for_lanes(exec, |l| {
                    let s = lane_of(l);
                    out[l] = if exec >> s & 1 != 0 { data[s] } else { 0 };
                });
            }
            scatter(w, inst.dst[0], 1, exec, &[out, [0; LANES], [0; LANES], [0; LANES]])?;
        }
    }
    Ok(Flow::Next)
}

/// `ds_swizzle_b32`, after the CDNA4 guide's pseudocode (the same in every AMD guide that
/// has it; LLVM accepts the FFT and rotate forms from GFX9 on, so all our targets run them):
/// - offset >= 0xe000, FFT: lane `i` reads `(rev5(i[4:0]) >> popcount(m)) | (i & m)` with
///   `m` = offset[4:0];
/// - 0xc000 <= offset < 0xe000, rotate: lane `i` reads `(i & m) | ((i + r) & !m)` with
///   `m` = offset[4:0] and `r` = offset[9:5], negated (rotate right) when offset[10] is set;
/// - otherwise offset[15] set, quad permute: lane `i` of each quad reads lane
///   `offset[2i+1:2i]`;
/// - otherwise bit masks: source = `((i & and) | or) ^ xor` with offset[4:0], [9:5], [14:10].
///
/// All modes work within each half of the wave (the guide ORs in `i & 0x20`); the rotate
/// sum is taken modulo 32, as the guide's examples show (lane 31 rotated left by one reads
/// lane 0), where the pseudocode leaves the carry into bit 5 implicit. Inactive source lanes
/// read 0.
fn swizzle(src: &[u32; LANES], exec: u64, offset: u32) -> [u32; LANES] {
    let mut out = [0u32; LANES];
    let m = offset & 0x1f;
    for_lanes(exec, |l| {
        let i = l as u32;
        let s = if offset >= 0xe000 {
            let rev = (i & 0x1f).reverse_bits() >> 27;
            (rev >> m.count_ones()) | (i & m)
        } else if offset >= 0xc000 {
            let r = offset >> 5 & 0x1f;
            let r = if offset & 0x400 != 0 { r.wrapping_neg() } else { r };
            ((i & m) | (i.wrapping_add(r) & !m)) & 0x1f
        } else if offset & 0x8000 != 0 {
            (i & 0x1c) | (offset >> (2 * (i & 3)) & 3)
        } else {
            let (and, or, xor) = (m, offset >> 5 & 0x1f, offset >> 10 & 0x1f);
            ((i & and) | or) ^ xor
        };
        let s = (s & 0x1f | i & 0x20) as usize;
        out[l] = if exec >> s & 1 != 0 { src[s] } else { 0 };
    });
    out
}

/// The transpose loads of gfx950 (CDNA4 guide §11.4, "MFMA Transpose Load from LDS").
///
/// Each lane reads 64 bits (`_b4/_b8/_b16`) or 96 bits (`_b6`) at its address plus the offset,
/// holding `n` elements of `bits` bits each, element `e` at bits `[bits*e, bits*e + bits)`:
/// 16 elements for 4- and 6-bit data, 8 for 8-bit, 4 for 16-bit. Within each group of 16
/// lanes the loaded data is a matrix of `n` rows by 16 columns, each row held by `16 / n`
/// consecutive lanes (lane `r * 16/n + c` holds columns `c*n .. c*n + n` of row `r`). The
/// instruction transposes it: lane `j` of the group receives column `j`, row `k` becoming
/// its element `k`. Read as the guide's MFMA use, the group's lanes read `n` K-rows of 16
/// M (or N) values each, and lane `j` ends with `n` consecutive K values of M = `j`: the
/// guide's "the first loads K=0..3 and K=8..11" (16-bit: lanes 16..31 read the rows
/// K=8..11), "K values 0..7, 16..23, 32..39, 48..55" (8-bit) and "0..15, 32..47" (4- and
/// 6-bit).
///
/// The guide gives this mapping in prose only (no pseudocode); the 16-lane groups and the
/// lanes-per-row split are how AMD's Triton compiler lays out the addresses for these
/// instructions (`chooseDsReadB64TrLayout`: "works on 64 bits per lane and in groups of 16
/// lanes"; 16-bit: 4 lanes per row of 16 M values, 4 rows of K), which matches the guide's
/// K ranges; for 4-bit data it is a plain 16 x 16 transpose, and the 6-bit form, which the
/// guide gives the same K ranges, is taken to be the same with 6-bit elements. The guide
/// requires addresses aligned to the data size; unaligned addresses are read as given (as
/// every DS read here), and a lane's read reaching beyond the LDS reads 0.
fn read_transposed(mem: &[u8], addr: &[u32; LANES], offset: u32, bits: u32) -> Data {
    let bytes = if bits == 6 { 12 } else { 8 };
    let n = if bits == 6 { 16 } else { 64 / bits } as usize;
    let per_row = 16 / n;
    let mask = (1u128 << bits) - 1;
    let mut raw = [0u128; LANES];
    for (r, a) in raw.iter_mut().zip(addr) {
        let mut b = [0u8; 16];
        read(mem, a.wrapping_add(offset), &mut b[..bytes]);
        *r = u128::from_le_bytes(b);
    }
    let mut out: Data = [[0; LANES]; 4];
    for l in 0..LANES {
        let (group, j) = (l & !15, l & 15);
        let (lane_in_row, shift) = (j / n, bits as usize * (j % n));
        let mut v = 0u128;
        for k in 0..n {
            let e = raw[group + per_row * k + lane_in_row] >> shift & mask;
            v |= e << (bits as usize * k);
        }
        for (d, o) in out.iter_mut().enumerate().take(bytes / 4) {
            o[l] = (v >> (32 * d)) as u32;
        }
    }
    out
}
