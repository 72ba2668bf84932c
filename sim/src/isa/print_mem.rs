//! Disassembly text of the memory encodings (SMEM, DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF,
//! MIMG) and of `s_sendmsg` operands, matching LLVM.

use super::info::{Slot, Ty};
use super::inst::{Cache, Encoding, Ext, Inst};
use super::operand::Operand;
use super::print::{operand, List};
use super::{Op, Target};
use std::fmt::{self, Write};

const SGPR: Slot = Slot { regs: 1, file: super::info::RegFile::Sgpr, ty: Ty::B32 };

/// gfx90a: glc slc scc; gfx940+ names the same bits sc0, nt, sc1.
fn cache(s: &mut String, c: &Cache, target: Target) {
    let names = match target {
        Target::Gfx90a => [" glc", " slc", " scc"],
        Target::Gfx942 | Target::Gfx950 => [" sc0", " nt", " sc1"],
    };
    for (on, name) in [c.glc, c.slc, c.scc].into_iter().zip(names) {
        if on {
            s.push_str(name);
        }
    }
}

pub(crate) fn mem(s: &mut String, i: &Inst) -> fmt::Result {
    let info = i.info();
    s.push_str(info.name);
    let mut l = List { f: s, first: true, target: i.target };
    match i.ext {
        Ext::Smem(m) => {
            if matches!(i.op, Op::SAtcProbe | Op::SAtcProbeBuffer) {
                l.sep()?;
                if i.literal <= 64 {
                    write!(l.f, "{}", i.literal)?;
                } else {
                    write!(l.f, "0x{:x}", i.literal)?;
                }
            } else if !i.dst[0].is_none() {
                l.op(i.dst[0], info.dst[0], 0)?;
            } else if !i.src[1].is_none() {
                l.op(i.src[1], info.src[1], 0)?;
            }
            if !i.src[0].is_none() {
                l.op(i.src[0], info.src[0], 0)?;
                match (m.soffset, m.has_imm) {
                    (Operand::None, _) => {
                        l.sep()?;
                        hex_signed(l.f, m.offset)?;
                    }
                    (so, imm) => {
                        l.op(so, SGPR, 0)?;
                        if imm {
                            l.f.push_str(" offset:");
                            hex_signed(l.f, m.offset)?;
                        }
                    }
                }
            }
            // (gfx90a LLVM does not print the `nv` bit, nor glc without data.)
            if m.glc && !i.src[0].is_none() && !(i.dst[0].is_none() && i.src[1].is_none()) {
                s.push_str(" glc");
            }
        }
        Ext::Ds(d) => {
            if !i.dst[0].is_none() {
                l.op(i.dst[0], info.dst[0], 0)?;
            }
            for k in 0..3 {
                if !i.src[k].is_none() {
                    l.op(i.src[k], info.src[k], 0)?;
                }
            }
            let two = ["read2", "write2", "wrxchg2"].iter().any(|n| info.name.contains(n));
            if two {
                if d.offset0 != 0 {
                    write!(s, " offset0:{}", d.offset0)?;
                }
                if d.offset1 != 0 {
                    write!(s, " offset1:{}", d.offset1)?;
                }
            } else if i.op == Op::DsSwizzleB32 && d.offset() != 0 {
                s.push_str(" offset:");
                swizzle(s, d.offset(), i.target)?;
            } else if d.offset() != 0 {
                write!(s, " offset:{}", d.offset())?;
            }
            // gfx940+ has no GDS; LLVM 19 keeps the bit only for the GWS ops.
            if d.gds && (i.target == Target::Gfx90a || info.name.starts_with("ds_gws")) {
                s.push_str(" gds");
            }
        }
        Ext::Flat(fl) => {
            if !i.dst[0].is_none() {
                l.op(i.dst[0], info.dst[0], 0)?;
            }
            if i.src[0].is_none() {
                l.text("off")?;
            } else {
                l.op(i.src[0], Slot { regs: i.src_regs(0), ..SGPR }, 0)?;
            }
            if !i.src[1].is_none() {
                l.op(i.src[1], info.src[1], 0)?;
            }
            if i.enc != Encoding::Flat {
                if i.src[2].is_none() {
                    l.text("off")?;
                } else {
                    l.op(i.src[2], info.src[2], 0)?;
                }
            }
            if fl.offset != 0 {
                write!(s, " offset:{}", fl.offset)?;
            }
            cache(s, &fl.cache, i.target);
            if fl.lds {
                s.push_str(" lds");
            }
        }
        Ext::Buf(b) => {
            if i.src[2].is_none() {
                // buffer_wbinvl1 & co: no operands (gfx940+: cache bits).
                if i.target.is_gfx94x_family() {
                    let c = Cache { slc: false, ..b.cache };
                    cache(l.f, &c, i.target);
                }
                return Ok(());
            }
            let data = if i.dst[0].is_none() { i.src[1] } else { i.dst[0] };
            if !data.is_none() {
                let slot = if i.dst[0].is_none() { info.src[1] } else { info.dst[0] };
                l.op(data, slot, 0)?;
            }
            if i.src[0].is_none() {
                l.text("off")?;
            } else {
                l.op(i.src[0], Slot { regs: i.src_regs(0), ..SGPR }, 0)?;
            }
            l.op(i.src[2], info.src[2], 0)?;
            l.op(b.soffset, SGPR, 0)?;
            if i.enc == Encoding::Mtbuf {
                buf_format(s, b.dfmt, b.nfmt)?;
            }
            if b.idxen {
                s.push_str(" idxen");
            }
            if b.offen {
                s.push_str(" offen");
            }
            if b.offset != 0 {
                write!(s, " offset:{}", b.offset)?;
            }
            cache(s, &b.cache, i.target);
            if b.lds {
                s.push_str(" lds");
            }
        }
        Ext::Mimg(m) => {
            let regs = i.data_regs();
            let data = if i.dst[0].is_none() { i.src[1] } else { i.dst[0] };
            if !data.is_none() {
                l.sep()?;
                operand(l.f, data, regs, Ty::B32, 0, i.target)?;
            }
            l.op(i.src[0], info.src[0], 0)?;
            l.op(i.src[2], info.src[2], 0)?;
            if !m.ssamp.is_none() {
                l.op(m.ssamp, Slot { regs: 4, ..SGPR }, 0)?;
            }
            if m.dmask != 0 {
                write!(s, " dmask:0x{:x}", m.dmask)?;
            }
            if m.unorm {
                s.push_str(" unorm");
            }
            cache(s, &m.cache, i.target);
            if m.r128 {
                s.push_str(" a16");
            }
            if m.lwe {
                s.push_str(" lwe");
            }
            if m.da {
                s.push_str(" da");
            }
            if m.d16 {
                s.push_str(" d16");
            }
        }
        _ => {}
    }
    Ok(())
}

/// `ds_swizzle_b32` offset: `swizzle(QUAD_PERM,...)`, `SWAP`, `REVERSE`, `BROADCAST` or
/// `BITMASK_PERM` with the and/or/xor masks as a 5-character pattern.
fn swizzle(s: &mut String, v: u16, target: Target) -> fmt::Result {
    // LLVM 22 (gfx950) names the FFT and rotate modes of offsets 0xc000 and up.
    if target == Target::Gfx950 && v & 0xe000 == 0xe000 {
        return write!(s, "swizzle(FFT,{})", v & 0x1f);
    }
    if target == Target::Gfx950 && v & 0xe000 == 0xc000 {
        return write!(s, "swizzle(ROTATE,{},{})", (v >> 10) & 1, (v >> 5) & 0x1f);
    }
    if v & 0x8000 != 0 && v & 0xff00 != 0x8000 {
        return write!(s, "{v}");
    }
    if v & 0x8000 != 0 {
        return write!(s, "swizzle(QUAD_PERM,{},{},{},{})", v & 3, (v >> 2) & 3, (v >> 4) & 3, (v >> 6) & 3);
    }
    let (and, or, xor) = (v & 0x1f, (v >> 5) & 0x1f, (v >> 10) & 0x1f);
    if and == 0x1f && or == 0 && xor.count_ones() == 1 {
        return write!(s, "swizzle(SWAP,{xor})");
    }
    if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        return write!(s, "swizzle(REVERSE,{})", xor + 1);
    }
    let group = 0x1f - and + 1;
    if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
        return write!(s, "swizzle(BROADCAST,{group},{or})");
    }
    s.push_str("swizzle(BITMASK_PERM,\"");
    for b in (0..5).rev() {
        let bit = 1 << b;
        s.push(match (and & bit != 0, or & bit != 0, xor & bit != 0) {
            (false, true, _) => '1',
            (false, false, _) => '0',
            (true, _, true) => 'i',
            (true, _, false) => 'p',
        });
    }
    s.push_str("\")");
    Ok(())
}

fn hex_signed(s: &mut String, v: i32) -> fmt::Result {
    if v < 0 {
        write!(s, "-0x{:x}", v.unsigned_abs())
    } else {
        write!(s, "0x{v:x}")
    }
}

const DFMT: [&str; 16] = [
    "INVALID",
    "8",
    "16",
    "8_8",
    "32",
    "16_16",
    "10_11_11",
    "11_11_10",
    "10_10_10_2",
    "2_10_10_10",
    "8_8_8_8",
    "32_32",
    "16_16_16_16",
    "32_32_32",
    "32_32_32_32",
    "RESERVED_15",
];
const NFMT: [&str; 8] = ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT"];

fn buf_format(s: &mut String, dfmt: u8, nfmt: u8) -> fmt::Result {
    let d = (dfmt != 1).then(|| format!("BUF_DATA_FORMAT_{}", DFMT[usize::from(dfmt & 15)]));
    let n = (nfmt != 0).then(|| format!("BUF_NUM_FORMAT_{}", NFMT[usize::from(nfmt & 7)]));
    match (d, n) {
        (None, None) => Ok(()),
        (Some(d), None) => write!(s, " format:[{d}]"),
        (None, Some(n)) => write!(s, " format:[{n}]"),
        (Some(d), Some(n)) => write!(s, " format:[{d},{n}]"),
    }
}

/// `sendmsg(...)` operand of `s_sendmsg`/`s_sendmsghalt`, or the raw number when the
/// immediate has bits outside the message fields.
pub(crate) fn sendmsg(s: &mut String, v: u16, target: Target) -> fmt::Result {
    let (id, op, stream) = (v & 0xf, (v >> 4) & 7, (v >> 8) & 3);
    let name = match id {
        1 => Some("MSG_INTERRUPT"),
        2 => Some("MSG_GS"),
        3 => Some("MSG_GS_DONE"),
        4 => Some("MSG_SAVEWAVE"),
        5 => Some("MSG_STALL_WAVE_GEN"),
        6 => Some("MSG_HALT_WAVES"),
        7 => Some("MSG_ORDERED_PS_DONE"),
        8 => Some("MSG_EARLY_PRIM_DEALLOC"),
        9 => Some("MSG_GS_ALLOC_REQ"),
        10 => Some("MSG_GET_DOORBELL"),
        15 => Some("MSG_SYSMSG"),
        _ => None,
    };
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    const SYS_OPS: [&str; 5] =
        ["", "SYSMSG_OP_ECC_ERR_INTERRUPT", "SYSMSG_OP_REG_RD", "SYSMSG_OP_HOST_TRAP_ACK", "SYSMSG_OP_TTRACE_PC"];
    let symbolic = match (id, name) {
        (_, None) => None,
        (2 | 3, Some(n)) => {
            let op_ok = if id == 2 { (1..=3).contains(&op) } else { op <= 3 };
            let with_stream = op != 0;
            if !op_ok || (!with_stream && stream != 0) {
                None
            } else if with_stream {
                Some(format!("{n}, {}, {stream}", GS_OPS[usize::from(op)]))
            } else {
                Some(format!("{n}, {}", GS_OPS[usize::from(op)]))
            }
        }
        // SYSMSG_OP_HOST_TRAP_ACK is gone on gfx940+.
        (15, Some(n)) => ((1..=4).contains(&op) && stream == 0 && !(op == 3 && target.is_gfx94x_family()))
            .then(|| format!("{n}, {}", SYS_OPS[usize::from(op)])),
        (_, Some(n)) => (op == 0 && stream == 0).then(|| n.to_string()),
    };
    // A valid message prints by name even with stray high bits; otherwise the fields print as
    // numbers if they hold all the bits, else the raw immediate.
    match symbolic {
        Some(t) => write!(s, "sendmsg({t})"),
        None if v >> 10 == 0 => write!(s, "sendmsg({id}, {op}, {stream})"),
        None => write!(s, "{v}"),
    }
}
