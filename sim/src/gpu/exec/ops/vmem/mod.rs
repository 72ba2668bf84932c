//! Vector memory: FLAT/GLOBAL/SCRATCH ([`flat`]) and MUBUF/MTBUF
//! ([`buffer`]), with the pieces the DS and MIMG families share: per-lane
//! access ([`access`]), atomic operations ([`atomic`]) and typed formats
//! ([`format`]).
//!
//! What an op does (load/store/atomic, width, sign extension, d16 half) is
//! read once from its mnemonic into a table indexed by op ([`kind`]), so
//! one handler per encoding serves every op of that encoding.

pub mod access;
pub mod atomic;
pub mod buffer;
pub mod flat;
pub mod format;

use crate::gpu::exec::Handler;
use crate::isa::info::ALL_OPS;
use crate::isa::Op;
use access::{Half, Ld, St};
use atomic::Rmw;
use std::sync::OnceLock;

/// What a vector memory op does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Load(Ld),
    /// A load whose data goes to LDS (`lds` forms).
    LoadLds(Ld),
    Store(St),
    /// Typed load/store of `comps` components (`*_format_*`); `d16`
    /// packs two 16-bit components per register; `hi` is `d16_hi_x`.
    LoadFormat {
        comps: u8,
        d16: bool,
        hi: bool,
    },
    StoreFormat {
        comps: u8,
        d16: bool,
        hi: bool,
    },
    Atomic {
        rmw: Rmw,
        wide: bool,
    },
    /// Cache maintenance (`buffer_wbinvl1` & co.): memory is coherent here.
    Cache,
}

/// The [`Kind`] of `op`, from its mnemonic.
pub fn kind(op: Op) -> Option<Kind> {
    static KINDS: OnceLock<Vec<Option<Kind>>> = OnceLock::new();
    KINDS.get_or_init(|| ALL_OPS.iter().map(|o| parse(o.name())).collect::<Vec<_>>())[op as usize]
}

fn parse(name: &str) -> Option<Kind> {
    let rest = ["flat_", "global_", "scratch_", "buffer_", "tbuffer_"].iter().find_map(|p| name.strip_prefix(p))?;
    if let Some(a) = rest.strip_prefix("atomic_") {
        let (a, wide) = match a.strip_suffix("_x2") {
            Some(a) => (a, true),
            None => (a, a.ends_with("_f64")),
        };
        let rmw = match a {
            "swap" => Rmw::Swap,
            "cmpswap" => Rmw::CmpSwap,
            "add" => Rmw::Add,
            "sub" => Rmw::Sub,
            "smin" => Rmw::SMin,
            "umin" => Rmw::UMin,
            "smax" => Rmw::SMax,
            "umax" => Rmw::UMax,
            "and" => Rmw::And,
            "or" => Rmw::Or,
            "xor" => Rmw::Xor,
            "inc" => Rmw::Inc,
            "dec" => Rmw::Dec,
            "add_f32" => Rmw::AddF32 { flush: true },
            "add_f64" => Rmw::AddF64,
            "min_f64" => Rmw::MinF64,
            "max_f64" => Rmw::MaxF64,
            "pk_add_f16" => Rmw::PkAddF16,
            "pk_add_bf16" => Rmw::PkAddBf16,
            _ => return None,
        };
        return Some(Kind::Atomic { rmw, wide });
    }
    if let Some(f) = rest.strip_prefix("load_format_").or_else(|| rest.strip_prefix("load_format")) {
        return format_kind(f).map(|(comps, d16, hi)| Kind::LoadFormat { comps, d16, hi });
    }
    if let Some(f) = rest.strip_prefix("store_format_") {
        return format_kind(f).map(|(comps, d16, hi)| Kind::StoreFormat { comps, d16, hi });
    }
    if let Some(l) = rest.strip_prefix("load_lds_") {
        return load_kind(l).map(Kind::LoadLds);
    }
    if let Some(l) = rest.strip_prefix("load_") {
        return load_kind(l).map(Kind::Load);
    }
    if let Some(s) = rest.strip_prefix("store_") {
        let st = match s {
            "byte" => St { bytes: 1, hi: false },
            "byte_d16_hi" => St { bytes: 1, hi: true },
            "short" => St { bytes: 2, hi: false },
            "short_d16_hi" => St { bytes: 2, hi: true },
            "dword" => St::dwords(1),
            "dwordx2" => St::dwords(2),
            "dwordx3" => St::dwords(3),
            "dwordx4" => St::dwords(4),
            _ => return None,
        };
        return Some(Kind::Store(st));
    }
    matches!(rest, "wbinvl1" | "wbinvl1_vol" | "wbl2" | "inv" | "invl2").then_some(Kind::Cache)
}

fn load_kind(l: &str) -> Option<Ld> {
    Some(match l {
        "dword" => Ld::dwords(1),
        "dwordx2" => Ld::dwords(2),
        "dwordx3" => Ld::dwords(3),
        "dwordx4" => Ld::dwords(4),
        "ubyte" => Ld::sub(1, false, Half::Full),
        "sbyte" => Ld::sub(1, true, Half::Full),
        "ushort" => Ld::sub(2, false, Half::Full),
        "sshort" => Ld::sub(2, true, Half::Full),
        "ubyte_d16" => Ld::sub(1, false, Half::Lo),
        "ubyte_d16_hi" => Ld::sub(1, false, Half::Hi),
        "sbyte_d16" => Ld::sub(1, true, Half::Lo),
        "sbyte_d16_hi" => Ld::sub(1, true, Half::Hi),
        "short_d16" => Ld::sub(2, false, Half::Lo),
        "short_d16_hi" => Ld::sub(2, false, Half::Hi),
        _ => return None,
    })
}

/// `x`, `xy`, `xyz`, `xyzw`, with `d16_` / `d16_hi_` prefixes.
fn format_kind(f: &str) -> Option<(u8, bool, bool)> {
    let (f, d16, hi) = if let Some(f) = f.strip_prefix("d16_hi_") {
        (f, true, true)
    } else if let Some(f) = f.strip_prefix("d16_") {
        (f, true, false)
    } else {
        (f, false, false)
    };
    let comps = match f {
        "x" => 1,
        "xy" => 2,
        "xyz" => 3,
        "xyzw" => 4,
        _ => return None,
    };
    Some((comps, d16, hi))
}

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    kind(op)?;
    flat::handler(op).or_else(|| buffer::handler(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_classify() {
        assert_eq!(kind(Op::GlobalLoadDwordx3), Some(Kind::Load(Ld::dwords(3))));
        assert_eq!(kind(Op::FlatLoadSbyteD16Hi), Some(Kind::Load(Ld::sub(1, true, Half::Hi))));
        assert_eq!(kind(Op::GlobalAtomicAddF64), Some(Kind::Atomic { rmw: Rmw::AddF64, wide: true }));
        assert_eq!(kind(Op::GlobalAtomicCmpswapX2), Some(Kind::Atomic { rmw: Rmw::CmpSwap, wide: true }));
        assert_eq!(kind(Op::BufferLoadFormatD16HiX), Some(Kind::LoadFormat { comps: 1, d16: true, hi: true }));
        assert_eq!(kind(Op::TbufferStoreFormatXyz), Some(Kind::StoreFormat { comps: 3, d16: false, hi: false }));
        assert_eq!(kind(Op::GlobalLoadLdsSshort), Some(Kind::LoadLds(Ld::sub(2, true, Half::Full))));
        assert_eq!(kind(Op::BufferWbinvl1Vol), Some(Kind::Cache));
        assert_eq!(kind(Op::SNop), None);
    }
}
