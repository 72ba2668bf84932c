//! Where MFMA matrix elements live in the wave's registers.
//!
//! The formulas below were derived from AMD's "AMD Matrix Instruction Calculator"
//! (register layouts for CDNA2 and CDNA3); `sim/tests/exec_mfma_layout.rs` checks them,
//! element by element, against that tool's output for every op of both targets.
//!
//! - A (`m×k`, per block) and B (`k×n`): row `i` of A (column `j` of B) is in lane
//!   `i + m*g`, where the lane group `g = block + blocks*(k / per_lane)`; within the lane,
//!   element `k % per_lane` of the packed source registers.
//! - C/D with 32-bit elements: for 4×4 blocks (16 of them) `D[b][i][j]` is register `i`
//!   of lane `j + 4b`; otherwise rows come in groups of four consecutive registers:
//!   lane `j + n*((i/4) % (64/n))`, register `4*(i / (4*64/n)) + i%4 + b*m*n/64`.
//! - f64 C/D: 16×16 has row `i` in register pair `i/4`, lane `j + 16*(i%4)`; 4×4 (four
//!   blocks) has every element in the one pair, lane `j + 4b + 16i`.
//! - gfx950 `*_f8f6f4` A and B ([`f8f6f4_pos`]): each lane holds 32 elements, packed densely
//!   as if its 8, 6 or 4 registers were one wide register (a 6-bit element may straddle two
//!   registers: `Pos::bit + 6 > 32`).

use super::shape::{Acc, Shape};

/// A position in the register file relative to the operand's first register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub lane: usize,
    /// 32-bit register index within the operand.
    pub reg: usize,
    /// First bit within the register (a 64-bit element starts at bit 0 of an even register).
    pub bit: usize,
}

/// Where element `k` of row `r` of A (equally column `r` of B) of a gfx950 `*_f8f6f4` MFMA
/// with `rows` rows (16 or 32; A and B are square-shaped alike) lies, for `bits`-wide
/// elements. From the CDNA4 guide, section 7.1.5.1 (and its general rule, 7.1.4):
/// - fp6/bf6/fp4: the general rule with 32 elements per lane: lane `r + rows*(k / 32)`,
///   item `k % 32`.
/// - fp8/bf8: two halves of four registers, each laid out like the 8-bit K=64 ops: lane
///   group `g` holds 16 consecutive k in each half, the second half continuing `16 * groups`
///   further (16x16x128: lanes 0-15 hold k 0-15 in v0-v3 and k 64-79 in v4-v7; 32x32x64:
///   k 0-15 and 32-47). AMD's CDNA4 matrix-core article (its 32x32x64 fp8 example) loads
///   registers the same way.
pub fn f8f6f4_pos(rows: usize, r: usize, k: usize, bits: usize) -> Pos {
    let groups = 64 / rows;
    let (group, item) = if bits == 8 {
        let span = 16 * groups;
        ((k % span) / 16, (k / span) * 16 + k % 16)
    } else {
        (k / 32, k % 32)
    };
    let offset = item * bits;
    Pos { lane: r + rows * group, reg: offset / 32, bit: offset % 32 }
}

impl Shape {
    fn ab_pos(&self, rows: usize, block: usize, row: usize, k: usize, bits: usize) -> Pos {
        let (group, item) = self.group_item(k, bits);
        let offset = item * bits;
        Pos { lane: row + rows * (block + self.blocks * group), reg: offset / 32, bit: offset % 32 }
    }

    /// The lane group and the item within the lane holding `k` of a `bits`-wide A or B
    /// (of sparse ops: logical, uncompressed A). A lane's registers come in chunks of four
    /// (gfx950's 8-register operands, CDNA4 guide 7.5.1.3 and 7.1.5.1): each chunk is laid
    /// out like a 4-register operand, lane group `g` holding consecutive k, and the next
    /// chunk continues after all groups. Operands of up to four registers are one chunk:
    /// group `k / per_lane`, item `k % per_lane` (the general rule, 7.1.4.1).
    pub fn group_item(&self, k: usize, bits: usize) -> (usize, usize) {
        let per_lane = self.per_lane();
        let chunk = (128 / bits).min(per_lane);
        let span = self.k / (per_lane / chunk);
        ((k % span) / chunk, (k / span) * chunk + k % chunk)
    }

    /// The `k` of item `item` in lane group `group` (the inverse of [`Shape::group_item`]).
    pub fn k_of(&self, group: usize, item: usize, bits: usize) -> usize {
        let per_lane = self.per_lane();
        let chunk = (128 / bits).min(per_lane);
        let span = self.k / (per_lane / chunk);
        (item / chunk) * span + group * chunk + item % chunk
    }

    /// Where `A[block][i][k]` is.
    pub fn a_pos(&self, block: usize, i: usize, k: usize) -> Pos {
        self.ab_pos(self.m, block, i, k, self.a.bits())
    }

    /// Where `B[block][k][j]` is.
    pub fn b_pos(&self, block: usize, k: usize, j: usize) -> Pos {
        self.ab_pos(self.n, block, j, k, self.b.bits())
    }

    /// Where `C[block][i][j]` and `D[block][i][j]` are.
    pub fn d_pos(&self, block: usize, i: usize, j: usize) -> Pos {
        if self.acc == Acc::F64 {
            let (lane, pair) = if self.m == 4 { (j + 4 * block + 16 * i, 0) } else { (j + 16 * (i % 4), i / 4) };
            return Pos { lane, reg: 2 * pair, bit: 0 };
        }
        if self.m == 4 {
            return Pos { lane: j + 4 * block, reg: i, bit: 0 };
        }
        let groups = 64 / self.n;
        let lane = j + self.n * ((i / 4) % groups);
        let reg = 4 * (i / (4 * groups)) + i % 4 + block * self.m * self.n / 64;
        Pos { lane, reg, bit: 0 }
    }
}
