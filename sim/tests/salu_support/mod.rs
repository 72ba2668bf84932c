//! Shared inputs and helpers of the scalar ALU tests.
#![allow(dead_code)]

use sim::testing::Harness;

/// 32-bit edge cases: zero, one, shift-amount boundaries, sign boundaries,
/// all ones, and bit-field descriptors (offset in [4:0], width in [22:16]).
pub const EDGE32: [u32; 22] = [
    0,
    1,
    2,
    3,
    31,
    32,
    33,
    63,
    64,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_ffff,
    0xffff_fffe,
    0x1234_5678,
    0xdead_beef,
    0x0008_0004,
    0x0020_0000,
    0x0021_0003,
    0x0040_0010,
    0x0000_ffff,
    0xffff_0000,
];

/// 64-bit edge cases.
pub const EDGE64: [u64; 14] = [
    0,
    1,
    63,
    64,
    0x0000_0000_ffff_ffff,
    0x0000_0001_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    0xffff_ffff_ffff_ffff,
    0x0123_4567_89ab_cdef,
    0xf000_0000_0000_000f,
    0x0010_0000_0020_0000,
    0x0000_0000_0030_0004,
    0x0000_0000_0040_0020,
];

pub fn get64(h: &Harness, n: usize) -> u64 {
    h.wave.sgpr[n] as u64 | (h.wave.sgpr[n + 1] as u64) << 32
}

pub fn set64(h: &mut Harness, n: usize, v: u64) {
    h.wave.sgpr[n] = v as u32;
    h.wave.sgpr[n + 1] = (v >> 32) as u32;
}

/// Runs `words`, naming `what` if it fails.
pub fn run(h: &mut Harness, words: &[u32], what: &str) {
    h.run(words).unwrap_or_else(|e| panic!("{what}: {e}"));
}
