//! What an MFMA op computes, read off its mnemonic and operand sizes.
//!
//! Every `v_mfma_*` name spells the output type, the block shape `MxNxK` and the input
//! type(s): `v_mfma_f32_32x32x8f16` (gfx90a spelling), `v_mfma_f32_32x32x4_2b_bf16`
//! (gfx942 spelling of `..._32x32x4bf16_1k`), `v_mfma_f32_16x16x32_fp8_bf8`. The number of
//! blocks follows from the register sizes: the A source holds `64 * per_lane` elements,
//! which is `blocks * M * K`. Deriving it (rather than tabulating 70 ops by hand) keeps
//! the two targets' spellings consistent, and the layout test checks the result against
//! AMD's matrix instruction calculator for every op.

use crate::isa::Op;

/// An input element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F32,
    /// f32 rounded to a 10-bit mantissa before multiplying (gfx942 `_xf32`).
    Xf32,
    F64,
    F16,
    Bf16,
    I8,
    /// gfx942 E4M3 "FNUZ" 8-bit float.
    Fp8,
    /// gfx942 E5M2 "FNUZ" 8-bit float.
    Bf8,
}

impl Elem {
    pub fn bits(self) -> usize {
        match self {
            Elem::F64 => 64,
            Elem::F32 | Elem::Xf32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8 | Elem::Bf8 => 8,
        }
    }

    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "f32" => Elem::F32,
            "xf32" => Elem::Xf32,
            "f64" => Elem::F64,
            "f16" => Elem::F16,
            "bf16" => Elem::Bf16,
            "i8" => Elem::I8,
            "fp8" => Elem::Fp8,
            "bf8" => Elem::Bf8,
            _ => return None,
        })
    }
}

/// The accumulator (C and D) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acc {
    F32,
    I32,
    F64,
}

/// The computation of one MFMA op: `blocks` independent `D = A·B + C` products with
/// A `m×k`, B `k×n`, C and D `m×n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub blocks: usize,
    pub a: Elem,
    pub b: Elem,
    pub acc: Acc,
    /// `v_smfmac_*`: A is 4:2 structured-sparse (two values kept of every four along k,
    /// their positions given by 2-bit indices in the third source); C is D itself.
    pub sparse: bool,
    /// gfx950 `*_f8f6f4` (and `v_mfma_scale_*`): A's and B's formats come from cbsz and
    /// blgp (`elem::Small`); `a` and `b` are then only the 8-bit sizing.
    pub mixed: bool,
}

impl Shape {
    /// The shape of a `v_mfma_*` or `v_smfmac_*` op.
    pub fn of(op: Op) -> Option<Shape> {
        let info = op.info();
        let name = info.name.strip_prefix("v_mfma_scale_").map_or(info.name, |r| r);
        let (sparse, rest) = match name.strip_prefix("v_mfma_") {
            Some(rest) => (false, rest),
            None if name != info.name => (false, name),
            None => (true, name.strip_prefix("v_smfmac_")?),
        };
        let (acc, rest) = rest.split_once('_')?;
        let acc = match acc {
            "f32" => Acc::F32,
            "i32" => Acc::I32,
            "f64" => Acc::F64,
            _ => return None,
        };
        let mut dims = rest.splitn(3, 'x');
        let m: usize = dims.next()?.parse().ok()?;
        let n: usize = dims.next()?.parse().ok()?;
        let tail = dims.next()?;
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let k: usize = tail[..digits].parse().ok()?;
        let mut types = tail[digits..].trim_start_matches('_');
        let mut named_blocks = None;
        if let Some((b, t)) = types.split_once("b_") {
            if let Ok(b) = b.parse::<usize>() {
                named_blocks = Some(b);
                types = t;
            }
        }
        let types = types.strip_suffix("_1k").unwrap_or(types);
        let mixed = types == "f8f6f4";
        let (a, b) = match types.split_once('_') {
            _ if mixed => (Elem::Fp8, Elem::Fp8),
            Some((a, b)) => (Elem::parse(a)?, Elem::parse(b)?),
            None => (Elem::parse(types)?, Elem::parse(types)?),
        };
        // B is never compressed, so it gives the logical elements per lane of sparse ops.
        let per_lane = if sparse {
            usize::from(info.src[1].regs) * 32 / b.bits()
        } else {
            usize::from(info.src[0].regs) * 32 / a.bits()
        };
        let blocks = 64 * per_lane / (m * k);
        if blocks == 0 || blocks * m * k != 64 * per_lane || named_blocks.is_some_and(|b| b != blocks) {
            return None;
        }
        if sparse && (blocks != 1 || m != n) {
            return None;
        }
        if mixed && (blocks != 1 || m != n || acc != Acc::F32) {
            return None;
        }
        Some(Shape { m, n, k, blocks, a, b, acc, sparse, mixed })
    }

    /// A (and B) elements each lane holds (for sparse ops: logical elements of A, of which
    /// half are stored).
    pub fn per_lane(&self) -> usize {
        self.m * self.k * self.blocks / 64
    }

    /// Registers (32-bit) of the C and D operands.
    pub fn acc_regs(&self) -> usize {
        let words = if self.acc == Acc::F64 { 2 } else { 1 };
        self.m * self.n * self.blocks * words / 64
    }

    /// Multiply-accumulates one instruction performs.
    pub fn macs(&self) -> usize {
        self.m * self.n * self.k * self.blocks
    }
}
