//! Which instructions the interpreter implements, by printed mnemonic (as
//! `llvm-objdump` prints them, with `_e32`/`_e64`/`_sdwa`/`_dpp` suffixes),
//! for coverage reports against lists of what real code uses.

use crate::isa::info::ALL_OPS;
use crate::isa::Op;

/// The op a printed mnemonic names (its encoding suffix removed).
pub fn op_for_mnemonic(mnemonic: &str) -> Option<Op> {
    let base = ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|s| mnemonic.strip_suffix(s)).unwrap_or(mnemonic);
    ALL_OPS.iter().copied().find(|op| op.name() == base).or_else(|| {
        // A few mnemonics end in what looks like a suffix but is part of the name.
        ALL_OPS.iter().copied().find(|op| op.name() == mnemonic)
    })
}

/// Whether the interpreter executes `mnemonic`.
pub fn implemented(mnemonic: &str) -> bool {
    op_for_mnemonic(mnemonic).is_some_and(super::ops::implemented)
}

/// Coverage of one list: (implemented, total, missing mnemonics).
pub fn check_list(mnemonics: impl IntoIterator<Item = String>) -> (usize, usize, Vec<String>) {
    let mut done = 0;
    let mut total = 0;
    let mut missing = Vec::new();
    for m in mnemonics {
        total += 1;
        if implemented(&m) {
            done += 1;
        } else {
            missing.push(m);
        }
    }
    (done, total, missing)
}

/// The mnemonics of a coverage list file (first column; `#` lines skipped).
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_map_to_ops() {
        assert_eq!(op_for_mnemonic("v_add_f32_e32"), Some(Op::VAddF32));
        assert_eq!(op_for_mnemonic("v_add_f32_sdwa"), Some(Op::VAddF32));
        assert_eq!(op_for_mnemonic("s_endpgm"), Some(Op::SEndpgm));
        assert!(implemented("s_endpgm"));
        assert_eq!(op_for_mnemonic("v_no_such_op"), None);
        let list = parse_list("# header\n# cols\ns_nop\t3\tSOPP\nv_foo_e32\t1\tVOP2\n");
        let (done, total, missing) = check_list(list);
        assert_eq!((done, total, missing), (1, 2, vec!["v_foo_e32".to_string()]));
    }

    /// Every list mnemonic names a decodable op (so coverage counts mean
    /// "executes", not "unknown name").
    #[test]
    fn every_listed_mnemonic_names_an_op() {
        let text = include_str!("../../../tests/data/isa/coverage/gfx90a_union.txt");
        let unknown: Vec<_> = parse_list(text).into_iter().filter(|m| op_for_mnemonic(m).is_none()).collect();
        assert!(unknown.is_empty(), "{unknown:?}");
    }
}
