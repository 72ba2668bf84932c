//! The deterministic generator the instruction tests draw operands from (xorshift64), so a
//! failure reproduces. Test files add the draws they need with their own `impl Rng` blocks.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
