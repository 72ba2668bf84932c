//! From LLVM's answers to the probes to the decoder's tables: the `Op` enum with one variant per
//! base mnemonic, each op's operand slots (register count, register file, constant type) and
//! flags, and per target the opcode -> `Op` map of every encoding.

use super::enc::Enc;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What LLVM printed for one opcode's accepted probe.
#[derive(Clone, Debug)]
pub struct Probe {
    pub enc: Enc,
    pub opcode: u32,
    pub words: Vec<u32>,
    pub text: String,
}

/// A register operand as printed: register file (`s`, `v`, `a`), first register, count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reg {
    pub file: char,
    pub base: u32,
    pub n: u32,
}

/// Splits `mnemonic op, op, op mods` into the mnemonic and the operands (modifiers dropped).
pub fn split(text: &str) -> (&str, Vec<String>) {
    let (mn, rest) = text.split_once(' ').unwrap_or((text, ""));
    // Drop LLVM's `/* ... */` diagnostics (LLVM 19 annotates operands it finds invalid).
    let mut clean = String::with_capacity(rest.len());
    let mut r = rest;
    while let Some(i) = r.find("/*") {
        clean.push_str(&r[..i]);
        r = r[i..].find("*/").map_or("", |j| &r[i + j + 2..]);
    }
    clean.push_str(r);
    let rest = clean.as_str();
    let mut ops = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in rest.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            ops.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        ops.push(cur.trim().to_string());
    }
    // The last operand carries the modifiers after a space.
    let ops = ops
        .into_iter()
        .map(|o| {
            if o.starts_with("hwreg") || o.starts_with("sendmsg") {
                o
            } else {
                o.split(' ').next().unwrap_or("").to_string()
            }
        })
        .collect();
    (mn, ops)
}

pub fn parse_reg(tok: &str) -> Option<Reg> {
    let mut chars = tok.chars();
    let file = chars.next()?;
    if !matches!(file, 's' | 'v' | 'a') {
        return None;
    }
    let rest = chars.as_str();
    if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (lo, hi) = inner.split_once(':')?;
        let (lo, hi): (u32, u32) = (lo.parse().ok()?, hi.parse().ok()?);
        return Some(Reg { file, base: lo, n: hi - lo + 1 });
    }
    let base = rest.parse().ok()?;
    Some(Reg { file, base, n: 1 })
}

/// The base mnemonic: the printed one without its `_e32`/`_e64`/`_sdwa`/`_dpp` suffix.
pub fn base_name(mn: &str) -> &str {
    for suf in ["_e32", "_e64", "_sdwa", "_dpp"] {
        if let Some(b) = mn.strip_suffix(suf) {
            return b;
        }
    }
    mn
}

/// `v_add_f32` -> `VAddF32`.
pub fn variant(name: &str) -> String {
    let mut s = String::new();
    for part in name.split('_') {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            s.push(f.to_ascii_uppercase());
            s.push_str(c.as_str());
        }
    }
    s
}

/// One operand slot of an op, as the generator learned it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slot {
    pub regs: u32,
    /// `S` SGPR, `V` VGPR (or AGPR chosen by an acc bit), `A` AGPR, `X` any source operand.
    pub file: char,
    /// `I16`, `F16`, `B32`, `I64`, `F64`.
    pub ty: &'static str,
}

#[derive(Clone, Debug, Default)]
pub struct OpDesc {
    pub name: String,
    pub class: &'static str,
    pub dst: [Slot; 2],
    pub src: [Slot; 3],
    /// Encodings the op was seen in (over all targets).
    pub encs: Vec<Enc>,
    /// Modifiers LLVM prints for the op (constants of `sim::isa::info::mods`).
    pub mods: Vec<&'static str>,
    /// Flags learned from the printed text (`E32_SUFFIX`, `E64_SUFFIX`).
    pub text_flags: Vec<&'static str>,
}

fn class_of(enc: Enc, name: &str) -> &'static str {
    match enc {
        Enc::Sop2 | Enc::Sopk | Enc::Sop1 | Enc::Sopc => "Salu",
        Enc::Sopp => "Sopp",
        Enc::Smem => "Smem",
        Enc::Vop2 | Enc::Vop1 | Enc::Vopc | Enc::Vop3 => "Valu",
        Enc::Vop3p if name.starts_with("v_mfma") || name.starts_with("v_smfmac") => "Mfma",
        Enc::Vop3px => "Mfma",
        Enc::Vop3p => "Valu",
        Enc::Ds => "Ds",
        Enc::Flat => "Flat",
        Enc::Global => "Global",
        Enc::Scratch => "Scratch",
        Enc::Mubuf => "Mubuf",
        Enc::Mtbuf => "Mtbuf",
        Enc::Mimg => "Mimg",
    }
}

fn is_store_like(name: &str) -> bool {
    name.contains("store") || name.contains("atomic") || name.contains("_dcache_")
}

fn ty_for(name: &str, regs: u32) -> &'static str {
    // Packed-f32 ops read two dwords, each with the 32-bit constant; f64 MFMA accumulators
    // are tuples of doubles.
    if regs < 2 || name.starts_with("v_pk_") {
        "B32"
    } else if name.contains("f64") {
        "F64"
    } else if regs == 2 {
        "I64"
    } else {
        "B32"
    }
}

/// Learns an op's slots from one probe's printed operands.
pub fn describe(p: &Probe) -> OpDesc {
    let (mn, ops) = split(&p.text);
    let name = base_name(mn).to_string();
    let mut d = OpDesc { name: name.clone(), class: class_of(p.enc, &name), ..Default::default() };
    if mn.ends_with("_e32") {
        d.text_flags.push("E32_SUFFIX");
    }
    if mn.ends_with("_e64") {
        d.text_flags.push("E64_SUFFIX");
    }
    let slot = |r: Reg, name: &str| Slot {
        regs: r.n,
        file: match r.file {
            's' => 'S',
            'a' => 'A',
            _ => 'V',
        },
        ty: ty_for(name, r.n),
    };
    for (i, tok) in ops.iter().enumerate() {
        let Some(r) = parse_reg(tok) else {
            // VOPC e32 prints its implicit destination.
            if tok == "vcc" && i == 0 && p.enc == Enc::Vopc {
                d.dst[0] = Slot { regs: 2, file: 'S', ty: "I64" };
            }
            continue;
        };
        let s = slot(r, &name);
        match p.enc {
            Enc::Mubuf | Enc::Mtbuf | Enc::Mimg => match (r.file, r.base) {
                ('s', 8) => d.src[2] = s,
                ('v' | 'a', 16) => {
                    if is_store_like(&name) {
                        d.src[1] = s;
                    }
                    if !name.contains("store") {
                        d.dst[0] = s;
                    }
                }
                ('v', 32) => d.src[0] = s,
                _ => {}
            },
            Enc::Smem => match r.base {
                16 | 8 => {
                    if is_store_like(&name) {
                        d.src[1] = s;
                    }
                    if !name.contains("store") && !name.contains("dcache") {
                        d.dst[0] = s;
                    }
                }
                32 => d.src[0] = s,
                _ => {}
            },
            Enc::Sopk if r.base == 16 => {
                // The SDST field is a source for compares, s_setreg and the fork.
                if name.starts_with("s_cmpk") || name == "s_setreg_b32" || name == "s_cbranch_i_fork" {
                    d.src[0] = s;
                } else {
                    d.dst[0] = s;
                }
            }
            Enc::Sopk => {}
            _ => match (r.file, r.base) {
                (_, 16) => d.dst[0] = s,
                ('s', 0) => d.dst[1] = s,
                (_, 32) => d.src[0] = Slot { file: if s.file == 'A' { 'A' } else { 'X' }, ..s },
                (_, 48) => d.src[1] = Slot { file: if s.file == 'A' { 'A' } else { 'X' }, ..s },
                (_, 64) => d.src[2] = Slot { file: if s.file == 'A' { 'A' } else { 'X' }, ..s },
                _ => {}
            },
        }
    }
    // The vector-memory and DS operand files are fixed by the encoding; their data is raw
    // dwords.
    if matches!(p.enc, Enc::Ds | Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf | Enc::Mtbuf | Enc::Mimg) {
        let n = if p.enc == Enc::Ds { 3 } else { 2 };
        for s in d.src.iter_mut().take(n).chain(d.dst.iter_mut()) {
            if s.regs > 0 && s.file == 'X' {
                s.file = 'V';
            }
        }
        for s in d.src.iter_mut().chain(d.dst.iter_mut()) {
            s.ty = "B32";
        }
        // The scalar address: `off` in the probes.
        match p.enc {
            Enc::Global => d.src[2] = Slot { regs: 2, file: 'S', ty: "B32" },
            Enc::Scratch => d.src[2] = Slot { regs: 1, file: 'S', ty: "B32" },
            _ => {}
        }
    }
    if p.enc == Enc::Smem {
        for s in d.src.iter_mut().chain(d.dst.iter_mut()) {
            s.ty = "B32";
        }
    }
    // v_madmk/v_fmamk: D = S0 * K + S1; v_madak/v_fmaak: D = S0 * S1 + K. The literal K takes
    // the slot in the order LLVM prints it.
    if name.contains("madmk") || name.contains("fmamk") {
        d.src[2] = d.src[1];
        d.src[1] = Slot { regs: 1, file: 'X', ty: d.src[0].ty };
    } else if name.contains("madak") || name.contains("fmaak") {
        d.src[2] = Slot { regs: 1, file: 'X', ty: d.src[0].ty };
    }
    if matches!(p.enc, Enc::Sop2 | Enc::Sop1 | Enc::Sopc) {
        for s in d.src.iter_mut() {
            if s.regs > 0 {
                s.file = 'X';
            }
        }
    }
    if p.enc == Enc::Smem {
        d.src[0].file = 'S';
    }
    // MFMA operands are VGPRs or AGPRs (acc and acc_cd bits), so "vector".
    if p.enc == Enc::Vop3px || (p.enc == Enc::Vop3p && (name.starts_with("v_mfma") || name.starts_with("v_smfmac"))) {
        for s in d.src.iter_mut().chain(d.dst.iter_mut()) {
            if s.regs > 0 {
                s.file = 'V';
            }
        }
    }
    d
}

/// Flag names (constants of `sim::isa::info::flags`) implied by an op's name and class.
pub fn flags(d: &OpDesc) -> Vec<&'static str> {
    let n = d.name.as_str();
    let mut f = Vec::new();
    let branch = matches!(
        n,
        "s_branch"
            | "s_setpc_b64"
            | "s_swappc_b64"
            | "s_call_b64"
            | "s_cbranch_i_fork"
            | "s_cbranch_g_fork"
            | "s_cbranch_join"
            | "s_rfe_b64"
            | "s_rfe_restore_b64"
    ) || n.starts_with("s_cbranch_");
    if branch {
        f.push("BRANCH");
    }
    if n.starts_with("s_cbranch_") && !n.contains("fork") && !n.contains("join") {
        f.push("CONDITIONAL");
    }
    let mem = matches!(d.class, "Smem" | "Ds" | "Flat" | "Global" | "Scratch" | "Mubuf" | "Mtbuf" | "Mimg");
    if mem {
        f.push("MEMORY");
        if n.contains("atomic") || (d.class == "Ds" && d.src[1].regs > 0 && d.dst[0].regs > 0) {
            f.push("ATOMIC");
        }
        if n.contains("load") || n.contains("read") || n.contains("sample") || n.contains("gather") {
            f.push("LOAD");
        }
        if n.contains("store") || n.contains("write") {
            f.push("STORE");
        }
    }
    if d.class == "Salu" {
        let writes_scc = !(n.starts_with("s_mov")
            || n.starts_with("s_cmov")
            || n.starts_with("s_cselect")
            || n.starts_with("s_getpc")
            || n.starts_with("s_setpc")
            || n.starts_with("s_swappc")
            || n.starts_with("s_rfe")
            || n.starts_with("s_brev")
            || n.starts_with("s_pack")
            || n.starts_with("s_sext")
            || n.starts_with("s_bitset")
            || n.starts_with("s_getreg")
            || n.starts_with("s_setreg")
            || n.starts_with("s_call")
            || n.starts_with("s_mul_i32")
            || n.starts_with("s_mul_hi")
            || n.starts_with("s_mulk")
            || n.starts_with("s_movk")
            || n.starts_with("s_bitreplicate")
            || n.starts_with("s_set_gpr_idx")
            || n.starts_with("s_setvskip")
            || n.starts_with("s_cbranch")
            || n.starts_with("s_ff")
            || n.starts_with("s_flbit")
            || n.starts_with("s_bfm")
            || n.starts_with("s_movrel"));
        if writes_scc {
            f.push("WRITES_SCC");
        }
        if n.starts_with("s_cselect") || n.starts_with("s_cmov") || n.starts_with("s_addc") || n.starts_with("s_subb") {
            f.push("READS_SCC");
        }
        if n.contains("saveexec") || n.contains("wrexec") {
            f.push("WRITES_EXEC");
        }
    }
    f.extend(d.text_flags.iter().copied());
    if d.class == "Valu" {
        if n.starts_with("v_cmpx") {
            f.push("WRITES_EXEC");
        }
        if n == "v_div_fmas_f32" || n == "v_div_fmas_f64" {
            f.push("READS_VCC");
        }
    }
    f
}

fn slot_code(s: &Slot) -> String {
    if s.regs == 0 {
        return "NO".to_string();
    }
    let f = match s.file {
        'S' => "sg",
        'A' => "ag",
        'V' => "vg",
        _ => "any",
    };
    format!("{f}({}, {})", s.regs, s.ty)
}

/// Renders `gen/op.rs`: the `Op` enum and the op-info table.
pub fn render_ops(ops: &BTreeMap<String, OpDesc>) -> String {
    let mut s = String::new();
    s.push_str("//! Generated by `cargo xtask isa-vectors` from LLVM's AMDGPU disassembler. Do not edit.\n\n");
    s.push_str("use crate::isa::info::{flags::*, Ty::*, *};\n\n");
    s.push_str("/// One variant per base mnemonic (`v_add_f32_e32`, `_e64`, `_sdwa`, `_dpp` are all `VAddF32`).\n");
    s.push_str("#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]\n#[repr(u16)]\n#[rustfmt::skip]\npub enum Op {\n");
    for (name, _) in ops.iter() {
        writeln!(s, "    {},", variant(name)).unwrap();
    }
    s.push_str("}\n\n");
    writeln!(s, "/// Number of `Op` variants.\npub const OP_COUNT: usize = {};\n", ops.len()).unwrap();
    s.push_str(
        "/// Every `Op`, indexed by its discriminant.\n#[rustfmt::skip]\npub static ALL_OPS: [Op; OP_COUNT] = [\n",
    );
    for (name, _) in ops.iter() {
        writeln!(s, "    Op::{},", variant(name)).unwrap();
    }
    s.push_str("];\n\n");
    s.push_str("/// Per-op description, indexed by the `Op` discriminant.\n#[rustfmt::skip]\npub(crate) static OP_INFO: [OpInfo; OP_COUNT] = [\n");
    for (name, d) in ops.iter() {
        let fl = flags(d);
        let fl = if fl.is_empty() { "0".to_string() } else { fl.join(" | ") };

        writeln!(
            s,
            "    OpInfo {{ name: \"{name}\", class: OpClass::{}, dst: [{}, {}], src: [{}, {}, {}], flags: {fl} }},",
            d.class,
            slot_code(&d.dst[0]),
            slot_code(&d.dst[1]),
            slot_code(&d.src[0]),
            slot_code(&d.src[1]),
            slot_code(&d.src[2]),
        )
        .unwrap();
    }
    s.push_str("];\n");
    s
}

/// The opcode field of a VOP1/VOP2/VOPC first word.
fn vop_opcode(enc: Enc, w: u32) -> u32 {
    match enc {
        Enc::Vop1 => (w >> 9) & 0xff,
        Enc::Vop2 => (w >> 25) & 0x3f,
        _ => (w >> 17) & 0xff,
    }
}

/// Renders `gen/<target>.rs`: one `fn <encoding>(opcode) -> Option<Op>` per encoding (for
/// VOP1/VOP2/VOPC also the forms LLVM accepts: `SDWA`, `DPP`), and the printed mnemonics.
pub fn render_target(
    target: &str,
    probes: &[Probe],
    accepted: &super::variants::Accepted,
    all_ops: &BTreeMap<String, OpDesc>,
    mods: &BTreeMap<String, Vec<&'static str>>,
) -> String {
    let mut s = String::new();
    writeln!(
        s,
        "//! Generated by `cargo xtask isa-vectors` from LLVM's AMDGPU disassembler. Do not edit.\n//! Opcode maps of {target}, one function per encoding.\n"
    )
    .unwrap();
    s.push_str("use super::op::Op::{self, *};\nuse super::op::OP_COUNT;\nuse crate::isa::info::forms::*;\nuse crate::isa::info::mods::*;\n\n");
    writeln!(s, "/// Modifiers LLVM prints for each op on {target} (`info::mods`), by `Op` index.\n#[rustfmt::skip]\npub(crate) static MODS: [u32; OP_COUNT] = [").unwrap();
    for name in all_ops.keys() {
        let mut m = mods.get(name).cloned().unwrap_or_default();
        m.sort();
        let m = if m.is_empty() { "0".to_string() } else { m.join(" | ") };
        writeln!(s, "    {m}, // {name}").unwrap();
    }
    s.push_str("];\n\n");
    let mut mnemonics = std::collections::BTreeSet::new();
    for texts in accepted.values() {
        for t in texts.values() {
            mnemonics.insert(split(t).0.to_string());
        }
    }
    writeln!(s, "/// Every mnemonic LLVM prints for {target}, suffix included.\n#[rustfmt::skip]\npub(crate) static MNEMONICS: [&str; {}] = [", mnemonics.len()).unwrap();
    for m in &mnemonics {
        writeln!(s, "    \"{m}\",").unwrap();
    }
    s.push_str("];\n\n");
    for enc in [Enc::Vop1, Enc::Vop2, Enc::Vopc] {
        let mut forms: BTreeMap<u32, u8> = BTreeMap::new();
        for (w, t) in &accepted[&enc] {
            let mn = split(t).0;
            let f = if mn.ends_with("_sdwa") {
                1
            } else if mn.ends_with("_dpp") {
                2
            } else {
                0
            };
            *forms.entry(vop_opcode(enc, w[0])).or_default() |= f;
        }
        let list: Vec<&Probe> = probes.iter().filter(|p| p.enc == enc).collect();
        writeln!(s, "/// {} opcodes and their SDWA/DPP forms.\n#[rustfmt::skip]\npub(crate) fn {}(op: u32) -> Option<(Op, u8)> {{", enc.name().to_uppercase(), enc.name()).unwrap();
        s.push_str("    Some(match op {\n");
        for chunk in list.chunks(2) {
            s.push_str("       ");
            for p in chunk {
                let (mn, _) = split(&p.text);
                let f = forms.get(&p.opcode).copied().unwrap_or(0);
                let f = match f {
                    0 => "E32",
                    1 => "E32 | SDWA",
                    2 => "E32 | DPP",
                    _ => "E32 | SDWA | DPP",
                };
                write!(s, " 0x{:03x} => ({}, {f}),", p.opcode, variant(base_name(mn))).unwrap();
            }
            s.push('\n');
        }
        s.push_str("        _ => return None,\n    })\n}\n\n");
    }
    for enc in super::enc::ALL {
        if matches!(enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) {
            continue;
        }
        let list: Vec<&Probe> = probes.iter().filter(|p| p.enc == enc).collect();
        writeln!(
            s,
            "/// {} opcodes.\n#[rustfmt::skip]\npub(crate) fn {}(op: u32) -> Option<Op> {{",
            enc.name().to_uppercase(),
            enc.name()
        )
        .unwrap();
        if list.is_empty() {
            s.push_str("    let _ = op;\n    None\n}\n\n");
            continue;
        }
        s.push_str("    Some(match op {\n");
        for chunk in list.chunks(3) {
            s.push_str("       ");
            for p in chunk {
                let (mn, _) = split(&p.text);
                write!(s, " 0x{:03x} => {},", p.opcode, variant(base_name(mn))).unwrap();
            }
            s.push('\n');
        }
        s.push_str("        _ => return None,\n    })\n}\n\n");
    }
    s
}
