//! `cargo xtask isa-vectors`: uses LLVM's AMDGPU disassembler as the reference for the decoder.
//!
//! 1. Probes every opcode of every encoding (`enc::probes`) and keeps the first candidate LLVM
//!    accepts. From the printed operands it learns each op's operand slots (`tables::describe`)
//!    and writes the decoder's generated tables: `sim/src/isa/gen/op.rs` (the `Op` enum and the
//!    op-info table, over all targets) and `sim/src/isa/gen/<target>.rs` (opcode maps).
//! 2. Mutates each accepted probe (registers, constants, literals, modifiers, offsets, DPP, SDWA;
//!    `variants`) and records every candidate with LLVM's text, or as rejected, in
//!    `sim/tests/data/isa/<target>/*.txt`, which `sim/tests/isa_decode_vectors.rs` replays.

mod enc;
mod llvm;
mod tables;
mod variants;

use enc::Enc;
use llvm::{Mc, Tool};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tables::{OpDesc, Probe};

struct TargetSpec {
    name: &'static str,
    mc: Mc,
}

fn targets() -> Vec<TargetSpec> {
    // gfx950 needs LLVM ≥ 20, which Debian 12 does not ship; Rust's llvm-tools component has one.
    let objdump =
        llvm::rust_llvm_objdump().unwrap_or_else(|| PathBuf::from("llvm-objdump (rustup component add llvm-tools)"));
    vec![
        TargetSpec { name: "gfx90a", mc: Mc { tool: Tool::Mc("llvm-mc-15"), cpu: "gfx90a" } },
        TargetSpec { name: "gfx942", mc: Mc { tool: Tool::Mc("llvm-mc-19"), cpu: "gfx942" } },
        TargetSpec { name: "gfx950", mc: Mc { tool: Tool::Objdump(objdump), cpu: "gfx950" } },
    ]
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let want = match args {
        [] => "all".to_string(),
        [flag, t] if flag == "--target" => t.clone(),
        _ => anyhow::bail!("usage: cargo xtask isa-vectors [--target gfx90a|gfx942|gfx950|all]"),
    };
    let root = root();
    let mut all_ops: BTreeMap<String, OpDesc> = BTreeMap::new();
    let mut per_target = Vec::new();
    // The `Op` enum spans all targets, so the tables are only rewritten when every target's
    // LLVM is at hand; otherwise just the selected targets' vectors are.
    let mut all_tools = true;
    for t in targets() {
        let selected = want == "all" || want == t.name;
        if !t.mc.available() {
            if selected && want != "all" {
                anyhow::bail!("{} is not installed", t.mc.bin());
            }
            eprintln!("isa-vectors: {} not found, skipping {}", t.mc.bin(), t.name);
            all_tools = false;
            continue;
        }
        eprintln!("isa-vectors: probing {} with {}", t.name, t.mc.bin());
        let probes = probe_target(&t.mc)?;
        let descs = describe_all(&t.mc, &probes)?;
        // Printed modifiers differ between LLVM versions, so they stay per target.
        let mods: BTreeMap<String, Vec<&'static str>> =
            descs.iter().map(|(n, d)| (n.clone(), d.mods.clone())).collect();
        for (name, d) in descs {
            merge_desc(&mut all_ops, name, d);
        }
        per_target.push((t, probes, selected, mods));
    }
    let gen_dir = root.join("sim/src/isa/gen");
    std::fs::create_dir_all(&gen_dir)?;
    if all_tools {
        std::fs::write(gen_dir.join("op.rs"), tables::render_ops(&all_ops))?;
    } else {
        eprintln!("isa-vectors: not all LLVM versions found; tables left unchanged");
    }
    for (t, probes, selected, mods) in &per_target {
        // Vectors are always computed (the opcode maps need the SDWA/DPP forms LLVM accepts)
        // but only written for the selected targets.
        let dir = if *selected {
            root.join("sim/tests/data/isa").join(t.name)
        } else {
            std::env::temp_dir().join("isa-vectors").join(t.name)
        };
        let accepted = variants::write_vectors(&t.mc, probes, &dir)?;
        if all_tools {
            std::fs::write(
                gen_dir.join(format!("{}.rs", t.name)),
                tables::render_target(t.name, probes, &accepted, &all_ops, mods),
            )?;
        }
    }
    // Keep the generated files exactly as `cargo fmt` leaves them.
    let status = std::process::Command::new("rustfmt")
        .args(["--edition", "2021"])
        .args(std::fs::read_dir(&gen_dir)?.filter_map(|e| e.ok().map(|e| e.path())))
        .status()?;
    anyhow::ensure!(status.success(), "rustfmt failed on {}", gen_dir.display());
    eprintln!("isa-vectors: {} ops", all_ops.len());
    Ok(())
}

/// Phase 1: the first accepted probe of every opcode of every encoding.
fn probe_target(mc: &Mc) -> anyhow::Result<Vec<Probe>> {
    let mut out = Vec::new();
    for enc in enc::ALL.into_iter().filter(|e| e.on(mc.cpu)) {
        let mut cands = Vec::new();
        let mut owner = Vec::new();
        for op in 0..enc.opcodes() {
            for p in enc::probes(enc, op) {
                cands.push(p);
                owner.push(op);
            }
        }
        let res = mc.disasm(&cands)?;
        let mut done = std::collections::BTreeSet::new();
        for ((words, op), text) in cands.into_iter().zip(owner).zip(res) {
            let Some(text) = text else { continue };
            if done.contains(&op) {
                continue;
            }
            // An opcode whose probe decodes as another encoding's instruction (e.g. VOP3
            // opcodes that LLVM reads as VOP3P) does not belong to this encoding.
            if !belongs(enc, &text) {
                continue;
            }
            done.insert(op);
            out.push(Probe { enc, opcode: op, words, text });
        }
    }
    Ok(out)
}

/// Whether a printed instruction is plausibly of the probed encoding (guards against
/// encodings whose prefixes overlap).
fn belongs(enc: Enc, text: &str) -> bool {
    let mn = text.split(' ').next().unwrap_or("");
    match enc {
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc => mn.ends_with("_e32") || !mn.ends_with("_e64"),
        Enc::Vop3 => mn.starts_with("v_") && !mn.ends_with("_e32"),
        Enc::Flat => mn.starts_with("flat_"),
        Enc::Global => mn.starts_with("global_"),
        Enc::Scratch => mn.starts_with("scratch_"),
        _ => true,
    }
}

/// Learns every op's slots; the VOP3/VOP3P form wins over e32 because it prints all operands.
/// Extra probes find 16-bit sources: an inline 1/(2*pi) prints as `0x3118` in an integer
/// 16-bit slot, and a literal 0x3c00 prints as `1.0` in a float 16-bit slot.
fn describe_all(mc: &Mc, probes: &[Probe]) -> anyhow::Result<BTreeMap<String, OpDesc>> {
    let mut descs: BTreeMap<String, OpDesc> = BTreeMap::new();
    let mut ty_cands = Vec::new();
    let mut ty_owner = Vec::new();
    for p in probes {
        let mut d = tables::describe(p);
        d.encs.push(p.enc);
        for i in 0..3 {
            if d.src[i].regs != 1 {
                continue;
            }
            if let Some(w) = variants::with_src(p, i, 0xf8, None) {
                ty_cands.push(w);
                ty_owner.push((d.name.clone(), i, "I16"));
            }
            if let Some(w) = variants::with_src(p, i, 0xff, Some(0x3c00)) {
                ty_cands.push(w);
                ty_owner.push((d.name.clone(), i, "F16"));
            }
        }
        for i in 0..3 {
            if d.src[i].regs == 0 {
                continue;
            }
            if let Some(w) = variants::with_src(p, i, 0x80, None) {
                ty_cands.push(w);
                ty_owner.push((d.name.clone(), i, "NOCONST"));
            }
            if p.enc == Enc::Vop3 {
                let mut w = p.words.clone();
                w[1] |= 1 << (29 + i);
                ty_cands.push(w);
                ty_owner.push((d.name.clone(), i, "SEXT"));
            }
        }
        let name = d.name.clone();
        merge_desc(&mut descs, name, d);
    }
    // Which modifiers each op prints (and so has): set the modifier's bits in the probe and
    // see whether LLVM accepts the word and prints something else.
    let mut mod_cands = Vec::new();
    let mut mod_owner = Vec::new();
    for p in probes {
        let name = tables::base_name(tables::split(&p.text).0).to_string();
        for (flag, base, cand) in variants::modifier_probes(p) {
            mod_cands.push(base);
            mod_cands.push(cand);
            mod_owner.push((name.clone(), flag));
        }
    }
    let res = mc.disasm(&mod_cands)?;
    for (pair, (name, flag)) in res.chunks(2).zip(mod_owner) {
        if let [Some(base), Some(with)] = pair {
            if base != with {
                if let Some(d) = descs.get_mut(&name) {
                    if !d.mods.contains(&flag) {
                        d.mods.push(flag);
                    }
                }
            }
        }
    }
    let res = mc.disasm(&ty_cands)?;
    for ((name, i, ty), text) in ty_owner.into_iter().zip(res) {
        let Some(text) = text else { continue };
        let hit = match ty {
            "I16" => text.contains("0x3118"),
            "NOCONST" => text.to_ascii_lowercase().contains("invalid immediate*/"),
            "SEXT" => text.contains("sext("),
            _ => text.contains(" 1.0"),
        };
        if hit && (ty == "NOCONST" || ty == "SEXT") {
            let flag = match ty {
                "NOCONST" => ["SRC0_NOCONST", "SRC1_NOCONST", "SRC2_NOCONST"][i],
                _ => ["SRC0_SEXT", "SRC1_SEXT", "SRC2_SEXT"][i],
            };
            if let Some(d) = descs.get_mut(&name) {
                if !d.mods.contains(&flag) {
                    d.mods.push(flag);
                }
            }
        } else if hit {
            if let Some(d) = descs.get_mut(&name) {
                d.src[i].ty = ty;
            }
        }
    }
    // Only src0 can take a literal; a 16-bit float op's other sources are 16-bit floats too
    // (except exponents, class masks and conversions).
    for d in descs.values_mut() {
        let keep = ["ldexp", "cvt", "class", "frexp"];
        if d.src[0].ty == "F16" && !keep.iter().any(|k| d.name.contains(k)) {
            for s in d.src.iter_mut().skip(1) {
                if s.regs == 1 && s.ty == "B32" {
                    s.ty = "F16";
                }
            }
        }
    }
    // VOP3-only 16-bit float ops cannot be probed with a literal; go by the name.
    for d in descs.values_mut() {
        let vop3_only = d.encs.iter().all(|e| matches!(e, Enc::Vop3 | Enc::Vop3p));
        if vop3_only && d.name.ends_with("_f16") && !d.name.contains("mix") {
            for s in d.src.iter_mut() {
                if s.regs == 1 && s.ty == "B32" {
                    s.ty = "F16";
                }
            }
        }
    }
    // Packed 16-bit operands.
    for d in descs.values_mut() {
        if d.name.starts_with("v_pk_") || d.name.starts_with("v_dot2") {
            for s in d.src.iter_mut() {
                s.ty = match s.ty {
                    "F16" => "PkF16",
                    "I16" => "PkI16",
                    t => t,
                };
            }
        }
    }
    Ok(descs)
}

fn rank(d: &OpDesc) -> u32 {
    let explicit = d.encs.iter().any(|e| matches!(e, Enc::Vop3 | Enc::Vop3p)) as u32;
    let n = d.dst.iter().chain(d.src.iter()).filter(|s| s.regs > 0).count() as u32;
    explicit * 100 + n
}

fn merge_desc(map: &mut BTreeMap<String, OpDesc>, name: String, d: OpDesc) {
    match map.get_mut(&name) {
        None => {
            map.insert(name, d);
        }
        Some(old) => {
            let mut encs = old.encs.clone();
            for e in &d.encs {
                if !encs.contains(e) {
                    encs.push(*e);
                }
            }
            let mut best = if rank(&d) > rank(old) { d } else { old.clone() };
            // Keep a 16-bit type learned from either description.
            for i in 0..3 {
                let ty = old.src[i].ty;
                if matches!(ty, "I16" | "F16" | "PkI16" | "PkF16") {
                    best.src[i].ty = ty;
                }
            }
            best.encs = encs;
            for m in &old.mods {
                if !best.mods.contains(m) {
                    best.mods.push(m);
                }
            }
            for m in &old.text_flags {
                if !best.text_flags.contains(m) {
                    best.text_flags.push(m);
                }
            }
            best.text_flags.sort();
            *old = best;
        }
    }
}
