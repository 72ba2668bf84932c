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
use crate::isa::{Inst, Operand};
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

/// The line for one executed instruction (`pc` its address, `entry` the kernel's).
pub fn line(dispatch: u64, workgroup: u64, w: &Wave, inst: &Inst, pc: u64, entry: u64) -> String {
    let mut s = format!(
        "itrace d{dispatch} wg{workgroup} w{} +{:#05x} {inst} exec={:016x}",
        w.wave_in_group,
        pc.wrapping_sub(entry),
        w.exec
    );
    let regs = inst.info().dst[0].regs.max(1) as usize;
    match inst.dst[0] {
        Operand::Vgpr(r) | Operand::Agpr(r) => {
            let file = if matches!(inst.dst[0], Operand::Agpr(_)) { &w.agpr } else { &w.vgpr };
            let prefix = if matches!(inst.dst[0], Operand::Agpr(_)) { 'a' } else { 'v' };
            for k in 0..regs {
                let Some(lanes) = file.get(r as usize + k) else { break };
                let shown: Vec<String> = (0..64)
                    .filter(|&l| w.exec >> l & 1 == 1)
                    .take(LANES_SHOWN)
                    .map(|l| format!("{l}:{:08x}", lanes[l]))
                    .collect();
                s.push_str(&format!(" {prefix}{}=[{}]", r as usize + k, shown.join(" ")));
            }
        }
        Operand::Sgpr(r) => {
            for k in 0..regs {
                if let Some(v) = w.sgpr.get(r as usize + k) {
                    s.push_str(&format!(" s{}={v:08x}", r as usize + k));
                }
            }
        }
        Operand::VccLo => s.push_str(&format!(" vcc={:016x}", w.vcc)),
        Operand::ExecLo => s.push_str(&format!(" exec'={:016x}", w.exec)),
        _ => {}
    }
    if inst.info().class == crate::isa::OpClass::Salu {
        s.push_str(&format!(" scc={}", w.scc as u8));
    }
    s
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
