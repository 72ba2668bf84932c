//! DPP (data-parallel primitives) lane movement: which lane of `src0`
//! each lane reads under a DPP control, and which lanes write under the
//! row/bank masks, `bound_ctrl` and EXEC (MI200 ISA §6.3). The source
//! lanes of every control are tables computed at compile time, so an
//! instruction only looks its control up.

use crate::gpu::exec::wave::LANES;
use crate::isa::Dpp;

/// Marks an invalid (out-of-range) DPP source lane in [`source_lane`].
const NO_LANE: u8 = 0xff;

/// Number of DPP_CTRL values the table covers (0x000..=0x15f).
const DPP_CTRLS: usize = 0x160;

/// The source lane of lane `l` under DPP control `ctrl`, or [`NO_LANE`].
const fn source_lane(ctrl: usize, l: usize) -> u8 {
    let row = l & !15;
    let in_row = l & 15;
    let s = match ctrl {
        0x000..=0x0ff => (l & !3) | ((ctrl >> (2 * (l & 3))) & 3),
        0x101..=0x10f if in_row + (ctrl - 0x100) < 16 => l + (ctrl - 0x100),
        0x111..=0x11f if in_row >= ctrl - 0x110 => l - (ctrl - 0x110),
        0x121..=0x12f => row + ((in_row + 16 - (ctrl - 0x120)) & 15),
        0x130 if l < LANES - 1 => l + 1,
        0x134 => (l + 1) % LANES,
        0x138 if l > 0 => l - 1,
        0x13c => (l + LANES - 1) % LANES,
        0x140 => row + (15 - in_row),
        0x141 => (l & !7) + (7 - (l & 7)),
        // row_bcast:15: rows 1..3 read the last lane of the previous row.
        0x142 if row > 0 => row - 1,
        // row_bcast:31: rows 2..3 read lane 31.
        0x143 if l >= 32 => 31,
        // row_newbcast:n (gfx90a+): every lane of a row reads lane n of it.
        0x150..=0x15f => row + (ctrl - 0x150),
        _ => return NO_LANE,
    };
    s as u8
}

const fn build_dpp_gather() -> ([[u8; LANES]; DPP_CTRLS], [u64; DPP_CTRLS]) {
    let mut from = [[0u8; LANES]; DPP_CTRLS];
    let mut valid = [0u64; DPP_CTRLS];
    let mut c = 0;
    while c < DPP_CTRLS {
        let mut l = 0;
        while l < LANES {
            let s = source_lane(c, l);
            if s == NO_LANE {
                from[c][l] = l as u8;
            } else {
                from[c][l] = s;
                valid[c] |= 1 << l;
            }
            l += 1;
        }
        c += 1;
    }
    (from, valid)
}

/// The DPP tables, computed at compile time so a DPP instruction only
/// looks its control up.
const DPP_GATHER_CONST: ([[u8; LANES]; DPP_CTRLS], [u64; DPP_CTRLS]) = build_dpp_gather();
/// Source lane of every lane for every DPP control, an out-of-range source
/// replaced by the lane itself (always a valid index; [`DPP_VALID`] says
/// which are real).
static DPP_FROM: [[u8; LANES]; DPP_CTRLS] = DPP_GATHER_CONST.0;
/// Lanes whose DPP source lane is in range, per control.
static DPP_VALID: [u64; DPP_CTRLS] = DPP_GATHER_CONST.1;
static IDENTITY: [u8; LANES] = {
    let mut t = [0u8; LANES];
    let mut l = 0;
    while l < LANES {
        t[l] = l as u8;
        l += 1;
    }
    t
};

/// Which lane of `src0` lane `l` reads under DPP control `ctrl`, or `None`
/// when the source lane is out of range ("invalid").
pub fn dpp_source_lane(ctrl: u16, l: usize) -> Option<usize> {
    let c = ctrl as usize;
    (c < DPP_CTRLS && DPP_VALID[c] >> l & 1 != 0).then(|| DPP_FROM[c][l] as usize)
}

/// What a DPP instruction does with its lanes, computed once per
/// instruction.
#[derive(Debug, Clone, Copy)]
pub struct DppPlan {
    /// Source lane of each lane (a lane's own number when its source is out
    /// of range; `reads` says which lanes read real data).
    pub from: &'static [u8; LANES],
    /// Lanes that read a valid, active source lane; the others read 0 as
    /// their source value (abs/neg still apply to it).
    pub reads: u64,
    /// Lanes that write: active, in an enabled row and bank, and with a
    /// readable source or `bound_ctrl` set.
    pub mask: u64,
}

/// Lanes of the rows and banks a DPP instruction enables.
fn row_bank_mask(d: &Dpp) -> u64 {
    // Bank b is lanes 4b..4b+3 of every row; row r is lanes 16r..16r+15.
    let banks = (0..4).fold(0u64, |m, b| m | if d.bank_mask >> b & 1 != 0 { 0xf << (4 * b) } else { 0 });
    (0..4).fold(0u64, |m, r| m | if d.row_mask >> r & 1 != 0 { banks << (16 * r) } else { 0 })
}

/// The DPP plan of control `d` under `exec`: a lane whose source is
/// invalid or inactive reads 0 with `bound_ctrl`, and otherwise does not
/// write; lanes of disabled rows/banks do not write.
pub fn dpp_plan(d: &Dpp, exec: u64) -> DppPlan {
    let (from, valid) = match DPP_FROM.get(d.ctrl as usize) {
        Some(f) => (f, DPP_VALID[d.ctrl as usize]),
        None => (&IDENTITY, 0),
    };
    let reads = if exec == u64::MAX {
        valid
    } else {
        let mut active = 0u64;
        for (l, &s) in from.iter().enumerate() {
            active |= (exec >> s & 1) << l;
        }
        active & valid
    };
    let mask = exec & row_bank_mask(d) & if d.bound_ctrl { u64::MAX } else { reads };
    DppPlan { from, reads, mask }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpp_lane_maps() {
        // quad_perm:[3,2,1,0] reverses each quad.
        let ctrl = 0b00_01_10_11;
        assert_eq!((0..8).map(|l| dpp_source_lane(ctrl, l).unwrap()).collect::<Vec<_>>(), [3, 2, 1, 0, 7, 6, 5, 4]);
        // row_shl:1 — lane 15 of a row has no source.
        assert_eq!(dpp_source_lane(0x101, 14), Some(15));
        assert_eq!(dpp_source_lane(0x101, 15), None);
        // row_shr:3 — the first three lanes of a row have none.
        assert_eq!(dpp_source_lane(0x113, 18), None);
        assert_eq!(dpp_source_lane(0x113, 19), Some(16));
        // row_ror:1 wraps within the row.
        assert_eq!(dpp_source_lane(0x121, 16), Some(31));
        assert_eq!(dpp_source_lane(0x121, 17), Some(16));
        assert_eq!(dpp_source_lane(0x130, 63), None);
        assert_eq!(dpp_source_lane(0x134, 63), Some(0));
        assert_eq!(dpp_source_lane(0x138, 0), None);
        assert_eq!(dpp_source_lane(0x13c, 0), Some(63));
        assert_eq!(dpp_source_lane(0x140, 17), Some(30));
        assert_eq!(dpp_source_lane(0x141, 9), Some(14));
        assert_eq!(dpp_source_lane(0x142, 20), Some(15));
        assert_eq!(dpp_source_lane(0x142, 3), None);
        assert_eq!(dpp_source_lane(0x143, 40), Some(31));
        assert_eq!(dpp_source_lane(0x143, 31), None);
        assert_eq!(dpp_source_lane(0x153, 37), Some(35));
        assert_eq!(dpp_source_lane(0x1ff, 0), None);
        assert_eq!(dpp_source_lane(0x100, 0), None, "row_shl:0 is not a control");
    }

    #[test]
    fn dpp_masks_and_bound_ctrl() {
        let d = Dpp { ctrl: 0x138, row_mask: 0xf, bank_mask: 0xf, bound_ctrl: false, neg: 0, abs: 0 };
        let p = dpp_plan(&d, u64::MAX);
        assert_eq!(p.mask & 1, 0, "lane 0 has no source and bound_ctrl is off: no write");
        assert_eq!((p.from[1], p.reads >> 1 & 1), (0, 1));
        let p = dpp_plan(&Dpp { bound_ctrl: true, ..d }, u64::MAX);
        assert_eq!((p.mask & 1, p.reads & 1), (1, 0), "bound_ctrl: lane 0 reads 0 and writes");
        // Row 1 and bank 0 disabled.
        let p = dpp_plan(&Dpp { row_mask: 0b1101, bank_mask: 0b1110, ..d }, u64::MAX);
        assert_eq!(p.mask >> 16 & 0xffff, 0);
        assert_eq!(p.mask >> 32 & 0xf, 0, "bank 0 of row 2");
        assert_eq!(p.mask >> 36 & 0xf, 0xf);
        // An inactive source lane counts as invalid.
        let p = dpp_plan(&d, !1);
        assert_eq!((p.reads >> 1 & 1, p.mask >> 1 & 1), (0, 0));
    }
}
