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

impl Shape {
    fn ab_pos(&self, rows: usize, block: usize, row: usize, k: usize, bits: usize) -> Pos {
        let per_lane = self.per_lane();
        let group = block + self.blocks * (k / per_lane);
        let offset = (k % per_lane) * bits;
        Pos { lane: row + rows * group, reg: offset / 32, bit: offset % 32 }
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
