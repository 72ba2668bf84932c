//! Every float, conversion and packed VALU mnemonic has a handler: those
//! of ROCm's own code (gfx90a_union.txt) and all the decoder knows for
//! gfx90a and gfx942.

use sim::gpu::exec::coverage::{implemented, op_for_mnemonic, parse_list};
use sim::isa::{mnemonics, Target};

/// Whether a mnemonic belongs to the float/conversion/packed family
/// (compares, MFMA and ACC moves belong to others).
fn float_family(m: &str) -> bool {
    let m = ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|s| m.strip_suffix(s)).unwrap_or(m);
    if !m.starts_with("v_") || m.starts_with("v_cmp") || m.starts_with("v_mfma") || m.starts_with("v_smfmac") {
        return false;
    }
    ["_f16", "_f32", "_f64", "_bf8", "_fp8", "v_pk_", "v_dot", "v_cvt_", "v_cube", "v_sat_pk", "v_pack_"]
        .iter()
        .any(|k| m.contains(k))
}

#[test]
fn union_list_float_ops_are_implemented() {
    let text = include_str!("data/isa/coverage/gfx90a_union.txt");
    let ours: Vec<String> = parse_list(text).into_iter().filter(|m| float_family(m)).collect();
    assert!(ours.len() > 60, "the filter finds the family ({})", ours.len());
    let missing: Vec<_> = ours.iter().filter(|m| !implemented(m)).collect();
    println!("gfx90a_union.txt: {} of {} float/conversion/packed mnemonics", ours.len() - missing.len(), ours.len());
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn every_decoded_float_op_is_implemented() {
    for target in [Target::Gfx90a, Target::Gfx942] {
        let ours: Vec<_> = mnemonics(target).filter(|m| float_family(m)).collect();
        let ops: std::collections::BTreeSet<_> = ours.iter().filter_map(|m| op_for_mnemonic(m)).collect();
        let missing: Vec<_> = ours.iter().filter(|m| !implemented(m)).collect();
        println!("{target:?}: {} mnemonics ({} ops), {} missing", ours.len(), ops.len(), missing.len());
        assert!(missing.is_empty(), "{target:?}: {missing:?}");
    }
}
