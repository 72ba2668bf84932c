//! A wavefront's architectural state and the operand plumbing every
//! instruction uses: reading scalar and vector sources (registers, special
//! registers, inline constants, literals) and writing destinations under
//! EXEC.
//!
//! Vector registers are stored lane-major per register (`[u32; 64]`), so a
//! VALU instruction is a loop over 64 contiguous lanes.

use super::ExecError;
use crate::isa::{Inst, Operand, Ty};

/// Lanes per wavefront.
pub const LANES: usize = 64;
/// One vector register: a 32-bit value per lane.
pub type Lanes = [u32; LANES];
/// User-visible SGPRs on gfx90a/gfx94x (s0..s101).
pub const SGPRS: usize = 102;

/// Where a wave is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveStatus {
    Running,
    /// Waiting at `s_barrier` for the rest of its workgroup.
    AtBarrier,
    /// Executed `s_endpgm`.
    Ended,
}

/// The architectural state of one wavefront.
#[derive(Debug, Clone)]
pub struct Wave {
    pub sgpr: [u32; SGPRS],
    pub vgpr: Vec<Lanes>,
    pub agpr: Vec<Lanes>,
    pub exec: u64,
    pub vcc: u64,
    pub scc: bool,
    pub m0: u32,
    pub flat_scratch: u64,
    pub xnack_mask: u64,
    pub ttmp: [u32; 16],
    pub pc: u64,
    /// The MODE hardware register (FP round/denorm modes, DX10 clamp, IEEE, …).
    pub mode: u32,
    /// TRAPSTS hardware register.
    pub trapsts: u32,
    pub status: WaveStatus,
    /// Index of this wave in its workgroup.
    pub wave_in_group: u32,
    /// Waiting at GWS barrier (resource, generation) until that generation is released.
    pub gws_wait: Option<(u8, u64)>,
}

impl Wave {
    /// A wave with `vgprs` architected VGPRs and `agprs` accumulation
    /// registers, all zero, EXEC all ones.
    pub fn new(vgprs: usize, agprs: usize) -> Wave {
        Wave {
            sgpr: [0; SGPRS],
            vgpr: vec![[0; LANES]; vgprs],
            agpr: vec![[0; LANES]; agprs],
            exec: u64::MAX,
            vcc: 0,
            scc: false,
            m0: 0,
            flat_scratch: 0,
            xnack_mask: 0,
            ttmp: [0; 16],
            pc: 0,
            mode: 0,
            trapsts: 0,
            status: WaveStatus::Running,
            wave_in_group: 0,
            gws_wait: None,
        }
    }

    /// Whether lane `l` is active.
    #[inline]
    pub fn active(&self, l: usize) -> bool {
        self.exec >> l & 1 != 0
    }

    // ----- scalar operands -------------------------------------------------

    /// Reads one 32-bit scalar value: an SGPR, a special register, a
    /// constant (as a 32-bit pattern for `ty`) or the literal.
    pub fn read_scalar32(&self, op: Operand, ty: Ty, literal: u32) -> Result<u32, ExecError> {
        Ok(match op {
            Operand::Sgpr(n) => *self.sgpr.get(n as usize).ok_or(ExecError::Register(op))?,
            Operand::VccLo => self.vcc as u32,
            Operand::VccHi => (self.vcc >> 32) as u32,
            Operand::ExecLo => self.exec as u32,
            Operand::ExecHi => (self.exec >> 32) as u32,
            Operand::M0 => self.m0,
            Operand::FlatScratchLo => self.flat_scratch as u32,
            Operand::FlatScratchHi | Operand::FlatScratchBaseHi => (self.flat_scratch >> 32) as u32,
            Operand::FlatScratchBaseLo => self.flat_scratch as u32,
            Operand::XnackMaskLo => self.xnack_mask as u32,
            Operand::XnackMaskHi => (self.xnack_mask >> 32) as u32,
            Operand::Ttmp(n) => *self.ttmp.get(n as usize).ok_or(ExecError::Register(op))?,
            Operand::Null => 0,
            Operand::Scc => self.scc as u32,
            Operand::Vccz => (self.vcc == 0) as u32,
            Operand::Execz => (self.exec == 0) as u32,
            Operand::SharedBase => (super::memory::SHARED_APERTURE_BASE >> 32) as u32,
            Operand::SharedLimit => ((super::memory::SHARED_APERTURE_BASE | 0xffff_ffff) >> 32) as u32,
            Operand::PrivateBase => (super::memory::PRIVATE_APERTURE_BASE >> 32) as u32,
            Operand::PrivateLimit => ((super::memory::PRIVATE_APERTURE_BASE | 0xffff_ffff) >> 32) as u32,
            Operand::PopsExitingWaveId => 0,
            Operand::Int(_) | Operand::Float(_) | Operand::Literal => {
                op.const_value(ty, literal).ok_or(ExecError::Register(op))? as u32
            }
            Operand::None | Operand::Vgpr(_) | Operand::Agpr(_) | Operand::LdsDirect => {
                return Err(ExecError::Register(op))
            }
        })
    }

    /// Reads a 64-bit scalar value: an SGPR pair, VCC, EXEC, FLAT_SCRATCH,
    /// XNACK_MASK, TTMP pair, or a constant as a 64-bit value of type `ty`.
    pub fn read_scalar64(&self, op: Operand, ty: Ty, literal: u32) -> Result<u64, ExecError> {
        Ok(match op {
            Operand::Sgpr(n) => {
                let n = n as usize;
                if n + 1 >= SGPRS {
                    return Err(ExecError::Register(op));
                }
                self.sgpr[n] as u64 | (self.sgpr[n + 1] as u64) << 32
            }
            Operand::Ttmp(n) => {
                let n = n as usize;
                if n + 1 >= 16 {
                    return Err(ExecError::Register(op));
                }
                self.ttmp[n] as u64 | (self.ttmp[n + 1] as u64) << 32
            }
            Operand::VccLo => self.vcc,
            Operand::ExecLo => self.exec,
            Operand::FlatScratchLo | Operand::FlatScratchBaseLo => self.flat_scratch,
            Operand::XnackMaskLo => self.xnack_mask,
            Operand::Null => 0,
            // The aperture registers as 64-bit operands are whole addresses
            // (`s_mov_b64 s[0:1], src_shared_base`); as 32-bit ones, the high half.
            Operand::SharedBase => super::memory::SHARED_APERTURE_BASE,
            Operand::SharedLimit => super::memory::SHARED_APERTURE_BASE | 0xffff_ffff,
            Operand::PrivateBase => super::memory::PRIVATE_APERTURE_BASE,
            Operand::PrivateLimit => super::memory::PRIVATE_APERTURE_BASE | 0xffff_ffff,
            Operand::Int(_) | Operand::Float(_) | Operand::Literal => {
                op.const_value(ty, literal).ok_or(ExecError::Register(op))?
            }
            // Single registers read as 64-bit: zero-extended (SCC, VCCZ, M0 …).
            other => self.read_scalar32(other, Ty::B32, literal)? as u64,
        })
    }

    /// Writes a 32-bit scalar destination.
    pub fn write_scalar32(&mut self, op: Operand, v: u32) -> Result<(), ExecError> {
        match op {
            Operand::Sgpr(n) => *self.sgpr.get_mut(n as usize).ok_or(ExecError::Register(op))? = v,
            Operand::VccLo => self.vcc = (self.vcc & !0xffff_ffff) | v as u64,
            Operand::VccHi => self.vcc = (self.vcc & 0xffff_ffff) | (v as u64) << 32,
            Operand::ExecLo => self.exec = (self.exec & !0xffff_ffff) | v as u64,
            Operand::ExecHi => self.exec = (self.exec & 0xffff_ffff) | (v as u64) << 32,
            Operand::M0 => self.m0 = v,
            Operand::FlatScratchLo => self.flat_scratch = (self.flat_scratch & !0xffff_ffff) | v as u64,
            Operand::FlatScratchHi => self.flat_scratch = (self.flat_scratch & 0xffff_ffff) | (v as u64) << 32,
            Operand::XnackMaskLo => self.xnack_mask = (self.xnack_mask & !0xffff_ffff) | v as u64,
            Operand::XnackMaskHi => self.xnack_mask = (self.xnack_mask & 0xffff_ffff) | (v as u64) << 32,
            Operand::Ttmp(n) => *self.ttmp.get_mut(n as usize).ok_or(ExecError::Register(op))? = v,
            Operand::Null => {}
            other => return Err(ExecError::Register(other)),
        }
        Ok(())
    }

    /// Writes a 64-bit scalar destination (register pair or special pair).
    pub fn write_scalar64(&mut self, op: Operand, v: u64) -> Result<(), ExecError> {
        match op {
            Operand::Sgpr(n) => {
                let n = n as usize;
                if n + 1 >= SGPRS {
                    return Err(ExecError::Register(op));
                }
                self.sgpr[n] = v as u32;
                self.sgpr[n + 1] = (v >> 32) as u32;
            }
            Operand::Ttmp(n) => {
                let n = n as usize;
                if n + 1 >= 16 {
                    return Err(ExecError::Register(op));
                }
                self.ttmp[n] = v as u32;
                self.ttmp[n + 1] = (v >> 32) as u32;
            }
            Operand::VccLo => self.vcc = v,
            Operand::ExecLo => self.exec = v,
            Operand::FlatScratchLo => self.flat_scratch = v,
            Operand::XnackMaskLo => self.xnack_mask = v,
            Operand::Null => {}
            other => return Err(ExecError::Register(other)),
        }
        Ok(())
    }

    /// Reads `n` consecutive scalar registers starting at `op` (SMEM data,
    /// buffer resource descriptors).
    pub fn read_sgprs(&self, op: Operand, out: &mut [u32]) -> Result<(), ExecError> {
        for (i, o) in out.iter_mut().enumerate() {
            *o = match op {
                Operand::Sgpr(n) => *self.sgpr.get(n as usize + i).ok_or(ExecError::Register(op))?,
                Operand::Ttmp(n) => *self.ttmp.get(n as usize + i).ok_or(ExecError::Register(op))?,
                _ if i == 0 => self.read_scalar32(op, Ty::B32, 0)?,
                _ if i == 1 => (self.read_scalar64(op, Ty::B32, 0)? >> 32) as u32,
                _ => return Err(ExecError::Register(op)),
            };
        }
        Ok(())
    }

    /// Writes consecutive scalar registers starting at `op`.
    pub fn write_sgprs(&mut self, op: Operand, data: &[u32]) -> Result<(), ExecError> {
        match (op, data.len()) {
            (Operand::Sgpr(n), _) => {
                let n = n as usize;
                self.sgpr.get_mut(n..n + data.len()).ok_or(ExecError::Register(op))?.copy_from_slice(data);
            }
            (Operand::Ttmp(n), _) => {
                let n = n as usize;
                self.ttmp.get_mut(n..n + data.len()).ok_or(ExecError::Register(op))?.copy_from_slice(data);
            }
            (_, 1) => self.write_scalar32(op, data[0])?,
            (_, 2) => self.write_scalar64(op, data[0] as u64 | (data[1] as u64) << 32)?,
            _ => return Err(ExecError::Register(op)),
        }
        Ok(())
    }

    // ----- vector operands -------------------------------------------------

    /// The register file entry `op` names (a VGPR or AGPR), by index.
    pub fn vreg(&self, op: Operand, offset: usize) -> Result<&Lanes, ExecError> {
        match op {
            Operand::Vgpr(n) => self.vgpr.get(n as usize + offset),
            Operand::Agpr(n) => self.agpr.get(n as usize + offset),
            _ => None,
        }
        .ok_or(ExecError::Register(op))
    }

    /// Mutable access to a VGPR or AGPR.
    pub fn vreg_mut(&mut self, op: Operand, offset: usize) -> Result<&mut Lanes, ExecError> {
        match op {
            Operand::Vgpr(n) => self.vgpr.get_mut(n as usize + offset),
            Operand::Agpr(n) => self.agpr.get_mut(n as usize + offset),
            _ => None,
        }
        .ok_or(ExecError::Register(op))
    }

    /// A 32-bit vector source: per-lane registers, or one value for all
    /// lanes (SGPR, constant, literal, special register).
    pub fn vsrc32(&self, op: Operand, ty: Ty, literal: u32) -> Result<VSrc<'_>, ExecError> {
        match op {
            Operand::Vgpr(_) | Operand::Agpr(_) => Ok(VSrc::Lanes(self.vreg(op, 0)?)),
            _ => Ok(VSrc::Uniform(self.read_scalar32(op, ty, literal)?)),
        }
    }

    /// A 64-bit vector source (register pair, or a uniform 64-bit value).
    pub fn vsrc64(&self, op: Operand, ty: Ty, literal: u32) -> Result<VSrc64<'_>, ExecError> {
        match op {
            Operand::Vgpr(_) | Operand::Agpr(_) => Ok(VSrc64::Lanes(self.vreg(op, 0)?, self.vreg(op, 1)?)),
            _ => Ok(VSrc64::Uniform(self.read_scalar64(op, ty, literal)?)),
        }
    }

    /// Source `i` of `inst` as a 32-bit vector source, typed by the op.
    pub fn src32(&self, inst: &Inst, i: usize) -> Result<VSrc<'_>, ExecError> {
        self.vsrc32(inst.src[i], inst.info().src[i].ty, inst.literal)
    }

    /// Source `i` of `inst` as a 64-bit vector source.
    pub fn src64(&self, inst: &Inst, i: usize) -> Result<VSrc64<'_>, ExecError> {
        self.vsrc64(inst.src[i], inst.info().src[i].ty, inst.literal)
    }

    /// Writes `values` to the active lanes of vector register `op`.
    pub fn write_v32(&mut self, op: Operand, values: &Lanes) -> Result<(), ExecError> {
        let exec = self.exec;
        let dst = self.vreg_mut(op, 0)?;
        if exec == u64::MAX {
            *dst = *values;
        } else {
            for (l, (d, v)) in dst.iter_mut().zip(values).enumerate() {
                if exec >> l & 1 != 0 {
                    *d = *v;
                }
            }
        }
        Ok(())
    }

    /// Writes 64-bit `values` to the active lanes of register pair `op`.
    pub fn write_v64(&mut self, op: Operand, values: &[u64; LANES]) -> Result<(), ExecError> {
        let exec = self.exec;
        for half in 0..2 {
            let dst = self.vreg_mut(op, half)?;
            for (l, (d, v)) in dst.iter_mut().zip(values).enumerate() {
                if exec >> l & 1 != 0 {
                    *d = (v >> (32 * half)) as u32;
                }
            }
        }
        Ok(())
    }
}

/// A 32-bit vector source.
#[derive(Debug, Clone, Copy)]
pub enum VSrc<'a> {
    Lanes(&'a Lanes),
    Uniform(u32),
}

impl VSrc<'_> {
    #[inline]
    pub fn get(&self, lane: usize) -> u32 {
        match self {
            VSrc::Lanes(r) => r[lane],
            VSrc::Uniform(v) => *v,
        }
    }

    /// All 64 lanes as an array (for permutes and modifiers).
    pub fn to_lanes(&self) -> Lanes {
        match self {
            VSrc::Lanes(r) => **r,
            VSrc::Uniform(v) => [*v; LANES],
        }
    }
}

/// A 64-bit vector source.
#[derive(Debug, Clone, Copy)]
pub enum VSrc64<'a> {
    Lanes(&'a Lanes, &'a Lanes),
    Uniform(u64),
}

impl VSrc64<'_> {
    #[inline]
    pub fn get(&self, lane: usize) -> u64 {
        match self {
            VSrc64::Lanes(lo, hi) => lo[lane] as u64 | (hi[lane] as u64) << 32,
            VSrc64::Uniform(v) => *v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_specials_and_pairs() {
        let mut w = Wave::new(4, 0);
        w.write_scalar64(Operand::Sgpr(4), 0x1111_2222_3333_4444).unwrap();
        assert_eq!(w.sgpr[4..6], [0x3333_4444, 0x1111_2222]);
        w.write_scalar32(Operand::VccHi, 7).unwrap();
        assert_eq!(w.vcc, 7 << 32);
        assert_eq!(w.read_scalar32(Operand::Vccz, Ty::B32, 0).unwrap(), 0);
        w.exec = 0;
        assert_eq!(w.read_scalar32(Operand::Execz, Ty::B32, 0).unwrap(), 1);
        assert_eq!(w.read_scalar32(Operand::Int(-3), Ty::B32, 0).unwrap(), (-3i32) as u32);
        assert_eq!(w.read_scalar32(Operand::Literal, Ty::B32, 0xabcd).unwrap(), 0xabcd);
        // Writes to `null` vanish; reads of it are zero.
        w.write_scalar32(Operand::Null, 9).unwrap();
        assert_eq!(w.read_scalar64(Operand::Null, Ty::I64, 0).unwrap(), 0);
        assert!(w.write_scalar64(Operand::Sgpr(101), 0).is_err(), "s[101:102] does not exist");
    }

    #[test]
    fn vector_writes_respect_exec() {
        let mut w = Wave::new(2, 1);
        w.exec = 0b1010;
        let vals: Lanes = std::array::from_fn(|l| l as u32 + 100);
        w.write_v32(Operand::Vgpr(1), &vals).unwrap();
        assert_eq!(&w.vgpr[1][..4], &[0, 101, 0, 103]);
        assert!(w.write_v32(Operand::Vgpr(2), &vals).is_err());
        let src = w.vsrc32(Operand::Agpr(0), Ty::B32, 0).unwrap();
        assert_eq!(src.get(5), 0);
        let s = w.vsrc32(Operand::Int(5), Ty::B32, 0).unwrap();
        assert_eq!(s.get(63), 5);
    }
}
