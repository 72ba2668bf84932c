//! Every vector memory, DS and image mnemonic that ROCm 5.2's own code uses
//! (`gfx90a_union.txt`) has a handler, and so does every decoded op of
//! these families except the few named here.

use sim::gpu::exec::coverage::{implemented, parse_list};
use sim::gpu::exec::ops;
use sim::isa::info::ALL_OPS;
use sim::isa::OpClass;

/// Memory mnemonics left out on purpose (the last test keeps this list honest).
const NOT_IMPLEMENTED: &[&str] = &[
    // Packed image forms without format conversion, used by no ROCm library.
    "image_load_pck",
    "image_load_pck_sgn",
    "image_load_mip_pck",
    "image_load_mip_pck_sgn",
    "image_store_pck",
    "image_store_mip_pck",
];

const PREFIXES: [&str; 7] = ["ds_", "flat_", "global_", "scratch_", "buffer_", "tbuffer_", "image_"];

#[test]
fn every_memory_mnemonic_rocm_uses_has_a_handler() {
    let text = include_str!("data/isa/coverage/gfx90a_union.txt");
    let listed: Vec<String> =
        parse_list(text).into_iter().filter(|m| PREFIXES.iter().any(|p| m.starts_with(p))).collect();
    assert!(listed.len() >= 60, "the list has {} memory mnemonics", listed.len());
    let missing: Vec<&String> =
        listed.iter().filter(|m| !implemented(m) && !NOT_IMPLEMENTED.contains(&m.as_str())).collect();
    assert!(missing.is_empty(), "no handler for {missing:?}");
}

#[test]
fn every_decoded_memory_op_has_a_handler_but_the_named_few() {
    let mut missing = Vec::new();
    let mut total = 0;
    for op in ALL_OPS {
        let class = op.info().class;
        if !matches!(
            class,
            OpClass::Ds
                | OpClass::Flat
                | OpClass::Global
                | OpClass::Scratch
                | OpClass::Mubuf
                | OpClass::Mtbuf
                | OpClass::Mimg
        ) {
            continue;
        }
        total += 1;
        if !ops::implemented(op) && !NOT_IMPLEMENTED.contains(&op.name()) {
            missing.push(op.name());
        }
    }
    assert!(total > 350, "{total} memory ops");
    assert!(missing.is_empty(), "no handler for {missing:?}");
}

#[test]
fn the_named_exceptions_are_really_unimplemented() {
    for name in NOT_IMPLEMENTED {
        let op = ALL_OPS.iter().find(|o| o.name() == *name).unwrap_or_else(|| panic!("{name} is not decoded"));
        assert!(!ops::implemented(*op), "{name} is implemented now: drop it from NOT_IMPLEMENTED");
    }
}
