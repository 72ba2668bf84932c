//! Coverage of the scalar families and a random-encoding smoke test.
//!
//! - every scalar mnemonic ROCm's own code uses (the gfx90a union list) has
//!   a handler;
//! - every decodable SOP1/SOP2/SOPK/SOPC/SMEM op (plus the SOPP-encoded
//!   `s_set_gpr_idx_off`/`_mode`) of gfx90a and gfx942 has one, except the
//!   `s_scratch_*` SMEM ops, which no compiler emits;
//! - many random scalar encodings run without panicking (errors are fine).

use sim::gpu::exec::coverage::{op_for_mnemonic, parse_list};
use sim::gpu::exec::ops::implemented;
use sim::isa::{mnemonics, Encoding, OpClass, Target};
use sim::testing::{Harness, MEM_BASE};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[test]
fn union_list_scalar_ops_have_handlers() {
    let text = include_str!("data/isa/coverage/gfx90a_union.txt");
    let scalar: Vec<String> = parse_list(text).into_iter().filter(|m| m.starts_with("s_")).collect();
    assert!(scalar.len() > 80, "the list has the scalar ops ROCm uses");
    let missing: Vec<&String> = scalar.iter().filter(|m| !sim::gpu::exec::coverage::implemented(m)).collect();
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn every_decodable_scalar_op_has_a_handler() {
    for target in [Target::Gfx90a, Target::Gfx942] {
        let mut count = 0;
        let mut missing = Vec::new();
        for m in mnemonics(target) {
            let Some(op) = op_for_mnemonic(m) else { continue };
            let info = op.info();
            let ours = matches!(info.class, OpClass::Salu | OpClass::Smem) || m.starts_with("s_set_gpr_idx");
            if !ours || m.starts_with("s_scratch_") {
                continue;
            }
            count += 1;
            if !implemented(op) {
                missing.push(m);
            }
        }
        assert!(count > 200, "{target:?}: {count} scalar ops");
        assert!(missing.is_empty(), "{target:?}: {missing:?}");
    }
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
}

#[test]
fn random_scalar_encodings_do_not_panic() {
    for (target, seed) in [(Target::Gfx90a, 0x1234_5678_9abc_def1), (Target::Gfx942, 0x0fed_cba9_8765_4321)] {
        let mut h = Harness::for_target(target);
        let mut rng = Rng(seed);
        let mut ran = 0;
        for _ in 0..30_000 {
            // SOP1/SOP2/SOPK/SOPC (and SOPP) share the 0b10 prefix; SMEM is 0b110000.
            let w0 = if rng.next() & 1 == 0 { 0x8000_0000 | rng.u32() >> 2 } else { 0xc000_0000 | rng.u32() >> 6 };
            let words = [w0, rng.u32(), rng.u32()];
            let Ok(inst) = h.decode(&words) else { continue };
            let sopp = inst.enc == Encoding::Sopp && !inst.op.name().starts_with("s_set_gpr_idx");
            if sopp {
                continue;
            }
            // Registers: random values, with some pairs pointing into memory.
            for (k, r) in h.wave.sgpr.iter_mut().enumerate() {
                *r = match rng.next() % 4 {
                    0 if k % 2 == 0 => MEM_BASE as u32 + (rng.u32() & 0xfffc),
                    0 => (MEM_BASE >> 32) as u32,
                    1 => rng.u32() & 0x3f,
                    _ => rng.u32(),
                };
            }
            h.wave.exec = rng.next();
            h.wave.vcc = rng.next();
            h.wave.m0 = rng.u32() & if rng.next() & 1 == 0 { 0xff } else { u32::MAX };
            h.wave.mode = rng.u32();
            h.wave.scc = rng.next() & 1 != 0;
            let mut prog = words[..inst.len as usize / 4].to_vec();
            prog.push(0xbf81_0000); // s_endpgm
            let outcome = catch_unwind(AssertUnwindSafe(|| h.run(&prog)));
            assert!(outcome.is_ok(), "{target:?}: {inst} ({:08x?}) panicked", &prog);
            ran += 1;
        }
        assert!(ran > 10_000, "{target:?}: only {ran} encodings decoded");
    }
}
