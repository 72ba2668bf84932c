//! An instruction trace for debugging kernels (`ROCJITSU_ITRACE=NAME[@WORKGROUP]`): every
//! instruction the waves of matching dispatches execute, one line each on stderr, with the
//! wave's EXEC mask and what the instruction wrote to its first destination (a scalar
//! register's value, or the first active lanes of a vector register).
//!
//! `NAME` is a substring of the kernel's (demangled) name; `@WORKGROUP` keeps one workgroup
//! (by linear index), as kernels have thousands. This is how the simulator's d16 bug was
//! found in a Tensile kernel: the trace shows the first instruction whose result differs from
//! what the ISA manual says.
//!
//! ```text
//! itrace d7 wg0 w1 +0x01c v_fma_f32 v3, v1, v2, v3 exec=ffffffffffffffff v3=[0:3f800000 1:40000000 2:… 3:…]
//! ```

use super::Wave;
use crate::isa::{Inst, OpClass, Operand};
use std::io::Write;
use std::sync::OnceLock;

/// Which dispatches and workgroups to trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    pub kernel: String,
    pub workgroup: Option<u64>,
}

impl Filter {
    /// `NAME[@WORKGROUP]`; `None` for an empty value.
    pub fn parse(value: &str) -> Option<Filter> {
        let (kernel, workgroup) = match value.rsplit_once('@') {
            Some((k, wg)) if wg.parse::<u64>().is_ok() => (k, wg.parse().ok()),
            _ => (value, None),
        };
        (!kernel.is_empty()).then(|| Filter { kernel: kernel.to_string(), workgroup })
    }

    /// The filter `ROCJITSU_ITRACE` sets, read once.
    pub fn from_env() -> Option<&'static Filter> {
        static FILTER: OnceLock<Option<Filter>> = OnceLock::new();
        FILTER.get_or_init(|| std::env::var("ROCJITSU_ITRACE").ok().and_then(|v| Filter::parse(&v))).as_ref()
    }

    pub fn matches_kernel(&self, name: &str) -> bool {
        name.contains(&self.kernel)
    }

    pub fn matches_workgroup(&self, index: u64) -> bool {
        self.workgroup.is_none_or(|w| w == index)
    }
}

/// Lanes shown of a vector destination.
const LANES_SHOWN: usize = 4;

/// The line for one executed instruction (`pc` its address, `entry` the kernel's). Code of a
/// callee may lie before the kernel's entry: its offset is then negative.
pub fn line(dispatch: u64, workgroup: u64, w: &Wave, inst: &Inst, pc: u64, entry: u64) -> String {
    let (sign, offset) = if pc >= entry { ("+", pc - entry) } else { ("-", entry - pc) };
    let mut s = format!(
        "itrace d{dispatch} wg{workgroup} w{} {sign}{offset:#05x} {inst} exec={:016x}",
        w.wave_in_group, w.exec
    );
    let info = inst.info();
    match inst.dst[0] {
        Operand::Vgpr(r) => push_vector(&mut s, w, 'v', r, info.dst[0].regs),
        Operand::Agpr(r) => push_vector(&mut s, w, 'a', r, info.dst[0].regs),
        Operand::Sgpr(r) => {
            for k in 0..info.dst[0].regs.max(1) as usize {
                if let Some(v) = w.sgpr.get(r as usize + k) {
                    s.push_str(&format!(" s{}={v:08x}", r as usize + k));
                }
            }
        }
        Operand::VccLo => s.push_str(&format!(" vcc={:016x}", w.vcc)),
        Operand::ExecLo => s.push_str(&format!(" exec'={:016x}", w.exec)),
        // Nothing written to a register (a store, `ds_write`): what it read, the address and
        // the data, which is what one looks for in a lost or misplaced write.
        Operand::None => {
            for (k, src) in inst.src.iter().enumerate() {
                match *src {
                    Operand::Vgpr(r) => push_vector(&mut s, w, 'v', r, info.src[k].regs),
                    Operand::Agpr(r) => push_vector(&mut s, w, 'a', r, info.src[k].regs),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    // A flat or global load: also the address it read (the registers after the load, so a
    // load over its own address register shows the loaded value there).
    if matches!(info.class, OpClass::Flat | OpClass::Global) && inst.dst[0] != Operand::None {
        if let Operand::Vgpr(r) = inst.src[0] {
            push_vector(&mut s, w, 'v', r, info.src[0].regs);
        }
    }
    if info.class == OpClass::Salu {
        s.push_str(&format!(" scc={}", w.scc as u8));
    }
    s
}

/// ` v7=[0:… 1:…]` for `regs` registers from `first`, the first active lanes of each.
fn push_vector(s: &mut String, w: &Wave, prefix: char, first: u8, regs: u8) {
    let file = if prefix == 'a' { &w.agpr } else { &w.vgpr };
    for k in 0..regs.max(1) as usize {
        let Some(lanes) = file.get(first as usize + k) else { break };
        let shown: Vec<String> = (0..64)
            .filter(|&l| w.exec >> l & 1 == 1)
            .take(LANES_SHOWN)
            .map(|l| format!("{l}:{:08x}", lanes[l]))
            .collect();
        s.push_str(&format!(" {prefix}{}=[{}]", first as usize + k, shown.join(" ")));
    }
}

/// Writes one line to stderr (whole, so lines of concurrent workers do not interleave).
pub fn emit(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_names_a_kernel_and_maybe_a_workgroup() {
        assert_eq!(Filter::parse(""), None);
        assert_eq!(Filter::parse("gemm"), Some(Filter { kernel: "gemm".into(), workgroup: None }));
        assert_eq!(Filter::parse("Cijk_Ailk@3"), Some(Filter { kernel: "Cijk_Ailk".into(), workgroup: Some(3) }));
        // An `@` that is part of the name stays in it.
        assert_eq!(Filter::parse("kernel@0x10"), Some(Filter { kernel: "kernel@0x10".into(), workgroup: None }));
        let f = Filter::parse("add@2").unwrap();
        assert!(f.matches_kernel("vector_add") && !f.matches_kernel("mul"));
        assert!(f.matches_workgroup(2) && !f.matches_workgroup(1));
    }
}
