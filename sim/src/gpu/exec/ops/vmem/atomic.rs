//! Read-modify-write operations shared by FLAT/GLOBAL, MUBUF, DS and MIMG
//! atomics: what each op computes from the old memory value and the data.
//!
//! Global memory atomics are real host atomics ([`AtomicU32`]/[`AtomicU64`]:
//! native ops where the host has them, compare-exchange loops otherwise), so
//! concurrent workgroups on other worker threads and the host agree.

use super::format::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// An atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rmw {
    Swap,
    /// Compare and swap: the new value is stored when the old one equals `cmp`.
    CmpSwap,
    Add,
    Sub,
    /// `data - old` (DS only).
    Rsub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    /// `old >= data ? 0 : old + 1`.
    Inc,
    /// `old == 0 || old > data ? data : old - 1`.
    Dec,
    /// `(old & !cmp) | data` (DS `mskor`: `cmp` is the mask).
    MskOr,
    /// `old >= data ? old - data : old + cmp` (DS `wrap`).
    Wrap,
    /// Compare and swap with a float compare (DS `cmpst_f32/f64`: -0 equals
    /// +0, NaN equals nothing).
    CmpSwapF,
    /// f32 add; `flush` flushes denormal inputs and results (global memory
    /// f32 atomics on gfx90a; LDS by MODE).
    AddF32 {
        flush: bool,
    },
    /// f32 min/max (DS); NaN inputs lose to numbers.
    MinF32,
    MaxF32,
    AddF64,
    MinF64,
    MaxF64,
    /// Two f16 (or bf16) adds in one dword, denormals kept.
    PkAddF16,
    PkAddBf16,
}

fn flush32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// IEEE minNum (`max` false) or maxNum (`max` true) as the atomic units
/// compute them: a NaN operand yields the other one; -0 is below +0.
fn min_max<F: PartialOrd + Copy>(a: F, b: F, nan: [bool; 2], neg: [bool; 2], max: bool) -> F {
    if nan[0] {
        return b;
    }
    if nan[1] {
        return a;
    }
    let a_first = if a == b {
        // Equal values differ only in the sign of zero.
        neg[0] != max
    } else {
        (a < b) != max
    };
    if a_first {
        a
    } else {
        b
    }
}

impl Rmw {
    /// The new 32-bit memory value.
    #[inline]
    pub fn apply32(self, old: u32, data: u32, cmp: u32) -> u32 {
        match self {
            Rmw::Swap => data,
            Rmw::CmpSwap => {
                if old == cmp {
                    data
                } else {
                    old
                }
            }
            Rmw::Add => old.wrapping_add(data),
            Rmw::Sub => old.wrapping_sub(data),
            Rmw::Rsub => data.wrapping_sub(old),
            Rmw::SMin => (old as i32).min(data as i32) as u32,
            Rmw::UMin => old.min(data),
            Rmw::SMax => (old as i32).max(data as i32) as u32,
            Rmw::UMax => old.max(data),
            Rmw::And => old & data,
            Rmw::Or => old | data,
            Rmw::Xor => old ^ data,
            Rmw::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Rmw::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Rmw::MskOr => (old & !cmp) | data,
            Rmw::Wrap => {
                if old >= data {
                    old - data
                } else {
                    old.wrapping_add(cmp)
                }
            }
            Rmw::CmpSwapF => {
                if f32::from_bits(old) == f32::from_bits(cmp) {
                    data
                } else {
                    old
                }
            }
            Rmw::AddF32 { flush } => {
                let (a, b) = (f32::from_bits(old), f32::from_bits(data));
                if flush {
                    flush32(flush32(a) + flush32(b)).to_bits()
                } else {
                    (a + b).to_bits()
                }
            }
            Rmw::MinF32 | Rmw::MaxF32 => {
                let (a, b) = (f32::from_bits(old), f32::from_bits(data));
                let (nan, neg) = ([a.is_nan(), b.is_nan()], [a.is_sign_negative(), b.is_sign_negative()]);
                min_max(a, b, nan, neg, self == Rmw::MaxF32).to_bits()
            }
            Rmw::PkAddF16 => pk(old, data, f16_to_f32, f32_to_f16),
            Rmw::PkAddBf16 => pk(old, data, bf16_to_f32, f32_to_bf16),
            Rmw::AddF64 | Rmw::MinF64 | Rmw::MaxF64 => old,
        }
    }

    /// The new 64-bit memory value (the integer ops on 64 bits, f64 ops).
    #[inline]
    pub fn apply64(self, old: u64, data: u64, cmp: u64) -> u64 {
        match self {
            Rmw::Swap => data,
            Rmw::CmpSwap => {
                if old == cmp {
                    data
                } else {
                    old
                }
            }
            Rmw::Add => old.wrapping_add(data),
            Rmw::Sub => old.wrapping_sub(data),
            Rmw::Rsub => data.wrapping_sub(old),
            Rmw::SMin => (old as i64).min(data as i64) as u64,
            Rmw::UMin => old.min(data),
            Rmw::SMax => (old as i64).max(data as i64) as u64,
            Rmw::UMax => old.max(data),
            Rmw::And => old & data,
            Rmw::Or => old | data,
            Rmw::Xor => old ^ data,
            Rmw::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Rmw::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Rmw::MskOr => (old & !cmp) | data,
            Rmw::Wrap => {
                if old >= data {
                    old - data
                } else {
                    old.wrapping_add(cmp)
                }
            }
            Rmw::CmpSwapF => {
                if f64::from_bits(old) == f64::from_bits(cmp) {
                    data
                } else {
                    old
                }
            }
            Rmw::AddF64 => (f64::from_bits(old) + f64::from_bits(data)).to_bits(),
            Rmw::MinF64 | Rmw::MaxF64 => {
                let (a, b) = (f64::from_bits(old), f64::from_bits(data));
                let (nan, neg) = ([a.is_nan(), b.is_nan()], [a.is_sign_negative(), b.is_sign_negative()]);
                min_max(a, b, nan, neg, self == Rmw::MaxF64).to_bits()
            }
            Rmw::AddF32 { .. } | Rmw::MinF32 | Rmw::MaxF32 | Rmw::PkAddF16 | Rmw::PkAddBf16 => old,
        }
    }

    /// Performs the operation on a host atomic word; returns the old value.
    #[inline]
    pub fn host32(self, a: &AtomicU32, data: u32, cmp: u32) -> u32 {
        let o = Ordering::SeqCst;
        match self {
            Rmw::Swap => a.swap(data, o),
            Rmw::CmpSwap => a.compare_exchange(cmp, data, o, o).unwrap_or_else(|v| v),
            Rmw::Add => a.fetch_add(data, o),
            Rmw::Sub => a.fetch_sub(data, o),
            Rmw::UMin => a.fetch_min(data, o),
            Rmw::UMax => a.fetch_max(data, o),
            Rmw::And => a.fetch_and(data, o),
            Rmw::Or => a.fetch_or(data, o),
            Rmw::Xor => a.fetch_xor(data, o),
            _ => a.fetch_update(o, o, |old| Some(self.apply32(old, data, cmp))).unwrap_or_else(|v| v),
        }
    }

    /// 64-bit [`Rmw::host32`].
    #[inline]
    pub fn host64(self, a: &AtomicU64, data: u64, cmp: u64) -> u64 {
        let o = Ordering::SeqCst;
        match self {
            Rmw::Swap => a.swap(data, o),
            Rmw::CmpSwap => a.compare_exchange(cmp, data, o, o).unwrap_or_else(|v| v),
            Rmw::Add => a.fetch_add(data, o),
            Rmw::Sub => a.fetch_sub(data, o),
            Rmw::UMin => a.fetch_min(data, o),
            Rmw::UMax => a.fetch_max(data, o),
            Rmw::And => a.fetch_and(data, o),
            Rmw::Or => a.fetch_or(data, o),
            Rmw::Xor => a.fetch_xor(data, o),
            _ => a.fetch_update(o, o, |old| Some(self.apply64(old, data, cmp))).unwrap_or_else(|v| v),
        }
    }
}

fn pk(old: u32, data: u32, to: fn(u16) -> f32, from: fn(f32) -> u16) -> u32 {
    let lo = from(to(old as u16) + to(data as u16));
    let hi = from(to((old >> 16) as u16) + to((data >> 16) as u16));
    lo as u32 | (hi as u32) << 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_atomics_lose_no_updates_across_threads() {
        let (add, inc, fadd, cas) = (AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        Rmw::Add.host32(&add, 3, 0);
                        Rmw::Inc.host32(&inc, u32::MAX, 0);
                        Rmw::AddF32 { flush: true }.host32(&fadd, 1.0f32.to_bits(), 0);
                        // A compare-and-swap increment loop, as a kernel would write it.
                        let mut old = cas.load(Ordering::SeqCst);
                        loop {
                            let seen = Rmw::CmpSwap.host64(&cas, old + 1, old);
                            if seen == old {
                                break;
                            }
                            old = seen;
                        }
                    }
                });
            }
        });
        assert_eq!(add.into_inner(), 120_000);
        assert_eq!(inc.into_inner(), 40_000);
        assert_eq!(f32::from_bits(fadd.into_inner()), 40_000.0);
        assert_eq!(cas.into_inner(), 40_000);
    }

    #[test]
    fn operations_follow_the_isa_pseudo_code() {
        assert_eq!(Rmw::Inc.apply32(7, 7, 0), 0);
        assert_eq!(Rmw::Inc.apply32(6, 7, 0), 7);
        assert_eq!(Rmw::Dec.apply32(0, 7, 0), 7);
        assert_eq!(Rmw::Dec.apply32(8, 7, 0), 7);
        assert_eq!(Rmw::Dec.apply32(5, 7, 0), 4);
        assert_eq!(Rmw::SMax.apply64(u64::MAX, 0, 0), 0);
        assert_eq!(Rmw::UMax.apply64(u64::MAX, 0, 0), u64::MAX);
        assert_eq!(Rmw::Rsub.apply32(3, 10, 0), 7);
        let (nan, one) = (f64::NAN.to_bits(), 1.0f64.to_bits());
        assert_eq!(Rmw::MinF64.apply64(nan, one, 0), one);
        assert_eq!(Rmw::MaxF64.apply64(one, nan, 0), one);
        assert_eq!(Rmw::MinF64.apply64(0.0f64.to_bits(), (-0.0f64).to_bits(), 0), (-0.0f64).to_bits());
        assert_eq!(Rmw::MaxF64.apply64((-0.0f64).to_bits(), 0.0f64.to_bits(), 0), 0.0f64.to_bits());
        assert_eq!(Rmw::CmpSwapF.apply32((-0.0f32).to_bits(), 5, 0.0f32.to_bits()), 5, "-0 == +0");
        assert_eq!(Rmw::CmpSwapF.apply32(f32::NAN.to_bits(), 5, f32::NAN.to_bits()), f32::NAN.to_bits());
        assert_eq!(Rmw::PkAddBf16.apply32(0x3f80_3f80, 0x3f80_4000, 0), 0x4000_4040);
    }
}
