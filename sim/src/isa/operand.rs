//! Instruction operands: registers, special registers and constants, as decoded from the 9-bit
//! (vector) / 8-bit (scalar) source codes and the 7/8-bit destination fields.

use super::info::Ty;

/// One operand, 2 bytes. Register operands name their first register; how many consecutive
/// registers the operand covers comes from the op (`OpInfo` slots, `Inst::src_regs`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Operand {
    /// No operand in this slot.
    #[default]
    None,
    Sgpr(u8),
    Vgpr(u8),
    Agpr(u8),
    /// Trap temporaries ttmp0..ttmp15.
    Ttmp(u8),
    FlatScratchLo,
    FlatScratchHi,
    XnackMaskLo,
    XnackMaskHi,
    VccLo,
    VccHi,
    M0,
    ExecLo,
    ExecHi,
    /// Code 125: reads as zero, writes are discarded (LLVM prints `null`).
    Null,
    /// Inline integer constant -16..=64.
    Int(i8),
    /// Inline float constant; its bit pattern depends on the operand size (`InlineFloat::bits`).
    Float(InlineFloat),
    /// The instruction's 32-bit literal (`Inst::literal`).
    Literal,
    /// gfx950 `src_flat_scratch_base_lo/hi` (codes 230, 231): the wave's scratch base,
    /// readable as a source (on earlier targets the codes name nothing).
    FlatScratchBaseLo,
    FlatScratchBaseHi,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    /// VCCZ, EXECZ, SCC read as a source (0 or 1).
    Vccz,
    Execz,
    Scc,
    LdsDirect,
}

/// The nine inline float constants.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum InlineFloat {
    Half,
    NegHalf,
    One,
    NegOne,
    Two,
    NegTwo,
    Four,
    NegFour,
    /// 1/(2*pi).
    InvTwoPi,
}

impl InlineFloat {
    pub(crate) const ALL: [InlineFloat; 9] = [
        InlineFloat::Half,
        InlineFloat::NegHalf,
        InlineFloat::One,
        InlineFloat::NegOne,
        InlineFloat::Two,
        InlineFloat::NegTwo,
        InlineFloat::Four,
        InlineFloat::NegFour,
        InlineFloat::InvTwoPi,
    ];

    /// Bit pattern as an f16 (`bits16`), f32 (`bits32`) or f64 (`bits64`).
    pub fn bits16(self) -> u16 {
        [0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118][self as usize]
    }
    pub fn bits32(self) -> u32 {
        [
            0x3f00_0000,
            0xbf00_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x4000_0000,
            0xc000_0000,
            0x4080_0000,
            0xc080_0000,
            0x3e22_f983,
        ][self as usize]
    }
    pub fn bits64(self) -> u64 {
        [
            0x3fe0_0000_0000_0000,
            0xbfe0_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x4000_0000_0000_0000,
            0xc000_0000_0000_0000,
            0x4010_0000_0000_0000,
            0xc010_0000_0000_0000,
            0x3fc4_5f30_6dc9_c882,
        ][self as usize]
    }
    /// The pattern for an operand of type `ty` (zero-extended to 64 bits).
    pub fn bits(self, ty: Ty) -> u64 {
        match ty {
            Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => u64::from(self.bits16()),
            Ty::B32 => u64::from(self.bits32()),
            Ty::I64 | Ty::F64 => self.bits64(),
        }
    }
    /// LLVM's text; 1/(2*pi) is longer as a 64-bit operand.
    pub fn text(self, wide: bool) -> &'static str {
        match self {
            InlineFloat::InvTwoPi if wide => "0.15915494309189532",
            _ => ["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"][self as usize],
        }
    }
    /// The constant whose pattern of type `ty` is `v`, if any (LLVM prints literals that equal
    /// an inline constant as that constant).
    pub(crate) fn from_bits(v: u64, ty: Ty) -> Option<InlineFloat> {
        Self::ALL.into_iter().find(|f| f.bits(ty) == v)
    }
}

impl Operand {
    /// Decodes a 9-bit source code (VOP sources; scalar sources use codes 0..=255). `None` for
    /// codes that name nothing on GFX9 (209..=234) and for the SDWA/DPP markers 249/250.
    pub fn from_src(code: u32) -> Option<Operand> {
        Some(match code {
            0..=101 => Operand::Sgpr(code as u8),
            102..=127 => Self::from_special(code)?,
            128..=192 => Operand::Int((code - 128) as i8),
            193..=208 => Operand::Int((192 - code as i32) as i8),
            230 => Operand::FlatScratchBaseLo,
            231 => Operand::FlatScratchBaseHi,
            235 => Operand::SharedBase,
            236 => Operand::SharedLimit,
            237 => Operand::PrivateBase,
            238 => Operand::PrivateLimit,
            239 => Operand::PopsExitingWaveId,
            240..=248 => Operand::Float(InlineFloat::ALL[(code - 240) as usize]),
            251 => Operand::Vccz,
            252 => Operand::Execz,
            253 => Operand::Scc,
            254 => Operand::LdsDirect,
            255 => Operand::Literal,
            256..=511 => Operand::Vgpr((code - 256) as u8),
            _ => return None,
        })
    }

    fn from_special(code: u32) -> Option<Operand> {
        Some(match code {
            102 => Operand::FlatScratchLo,
            103 => Operand::FlatScratchHi,
            104 => Operand::XnackMaskLo,
            105 => Operand::XnackMaskHi,
            106 => Operand::VccLo,
            107 => Operand::VccHi,
            108..=123 => Operand::Ttmp((code - 108) as u8),
            124 => Operand::M0,
            125 => Operand::Null,
            126 => Operand::ExecLo,
            127 => Operand::ExecHi,
            _ => return None,
        })
    }

    /// Decodes a 7-bit scalar destination (SDST): SGPRs and special registers only.
    pub fn from_sdst(code: u32) -> Option<Operand> {
        match code {
            0..=101 => Some(Operand::Sgpr(code as u8)),
            102..=127 => Self::from_special(code),
            _ => None,
        }
    }

    /// The operand's source code (inverse of `from_src`; AGPRs as their VGPR code).
    pub fn code(self) -> u32 {
        match self {
            Operand::None => 0,
            Operand::Sgpr(n) => n.into(),
            Operand::Vgpr(n) | Operand::Agpr(n) => 256 + u32::from(n),
            Operand::Ttmp(n) => 108 + u32::from(n),
            Operand::FlatScratchLo => 102,
            Operand::FlatScratchHi => 103,
            Operand::XnackMaskLo => 104,
            Operand::XnackMaskHi => 105,
            Operand::VccLo => 106,
            Operand::VccHi => 107,
            Operand::M0 => 124,
            Operand::Null => 125,
            Operand::ExecLo => 126,
            Operand::ExecHi => 127,
            Operand::Int(i) if i >= 0 => 128 + i as u32,
            Operand::Int(i) => (192 - i32::from(i)) as u32,
            Operand::Float(f) => 240 + f as u32,
            Operand::Literal => 255,
            Operand::FlatScratchBaseLo => 230,
            Operand::FlatScratchBaseHi => 231,
            Operand::SharedBase => 235,
            Operand::SharedLimit => 236,
            Operand::PrivateBase => 237,
            Operand::PrivateLimit => 238,
            Operand::PopsExitingWaveId => 239,
            Operand::Vccz => 251,
            Operand::Execz => 252,
            Operand::Scc => 253,
            Operand::LdsDirect => 254,
        }
    }

    pub fn is_none(self) -> bool {
        self == Operand::None
    }
    /// A scalar register operand (SGPR, TTMP or special register) that may start a tuple.
    pub fn is_scalar_reg(self) -> bool {
        matches!(self.code(), 0..=127) && !matches!(self, Operand::None)
    }
    /// An inline constant (integer or float).
    pub fn is_inline_const(self) -> bool {
        matches!(self, Operand::Int(_) | Operand::Float(_))
    }

    /// The scalar operand `regs` wide that starts at this one, aligned the way the hardware
    /// (and LLVM) address SGPR tuples: pairs on even, larger tuples on multiples of four.
    /// Special registers are not realigned: a wide VCC/EXEC/... operand is the 64-bit
    /// register.
    pub(crate) fn align_scalar(self, regs: u8) -> Operand {
        let mask = match regs {
            0 | 1 => return self,
            2 => !1u8,
            _ => !3u8,
        };
        match self {
            Operand::Sgpr(n) => Operand::Sgpr(n & mask),
            Operand::Ttmp(n) => Operand::Ttmp(n & mask),
            o => o,
        }
    }

    /// The value of a constant operand as an operand of type `ty`, given the instruction's
    /// literal. `None` for registers.
    pub fn const_value(self, ty: Ty, literal: u32) -> Option<u64> {
        match self {
            Operand::Int(i) => Some(match ty {
                Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => u64::from(i as i16 as u16),
                Ty::B32 => u64::from(i as i32 as u32),
                Ty::I64 | Ty::F64 => i as i64 as u64,
            }),
            Operand::Float(f) => Some(f.bits(ty)),
            Operand::Literal => Some(match ty {
                Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => u64::from(literal & 0xffff),
                Ty::B32 | Ty::I64 => u64::from(literal),
                Ty::F64 => u64::from(literal) << 32,
            }),
            _ => None,
        }
    }
}
