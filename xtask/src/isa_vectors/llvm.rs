//! Running LLVM's AMDGPU disassembler on many candidate instructions, through `llvm-mc
//! --disassemble` (Debian's LLVM 15 and 19) or `llvm-objdump` (the LLVM of Rust's
//! `llvm-tools` component, the only LLVM ≥ 20 this machine's registries offer, needed for gfx950).
//!
//! llvm-mc reads its input as one byte stream, so each candidate is written as a bracketed group
//! (`[0x..,0x..]`, which llvm-mc decodes on its own) and followed by a marker group (`s_nop 0xabcd`)
//! that separates the printed lines of one candidate from the next. A candidate is accepted when it
//! printed exactly one line: then LLVM consumed exactly the bytes we gave it.
//!
//! llvm-objdump reads an ELF file instead: candidates and markers are laid out in one `.text`
//! section and each printed line carries its offset, so a candidate is accepted when exactly one
//! instruction starts at its offset and the next one is the marker right after its last byte.

use std::io::Write;
use std::process::{Command, Stdio};

/// `s_nop 0xabcd`: a marker that no candidate is allowed to be.
const MARKER: u32 = 0xbf80_abcd;
const MARKER_TEXT: &str = "s_nop 0xabcd";
/// Candidates per llvm-mc run: big enough to amortise process start-up.
const BATCH: usize = 20_000;

/// How LLVM's disassembler is run.
#[derive(Clone, Debug)]
pub enum Tool {
    /// `llvm-mc --disassemble` on bracketed byte groups; the binary's name on `PATH`.
    Mc(&'static str),
    /// `llvm-objdump -d` on an ELF file; the binary's path.
    Objdump(std::path::PathBuf),
}

/// One LLVM disassembler and the processor it disassembles for.
pub struct Mc {
    pub tool: Tool,
    pub cpu: &'static str,
}

impl Mc {
    /// The binary, for messages.
    pub fn bin(&self) -> String {
        match &self.tool {
            Tool::Mc(bin) => bin.to_string(),
            Tool::Objdump(path) => path.display().to_string(),
        }
    }

    /// Whether the binary runs here.
    pub fn available(&self) -> bool {
        let bin = match &self.tool {
            Tool::Mc(bin) => std::path::PathBuf::from(bin),
            Tool::Objdump(path) => path.clone(),
        };
        Command::new(bin).arg("--version").output().is_ok_and(|o| o.status.success())
    }

    /// Disassembles every candidate; `Some(text)` for those LLVM decodes as exactly one
    /// instruction of exactly the given length, `None` otherwise.
    pub fn disasm(&self, cands: &[Vec<u32>]) -> anyhow::Result<Vec<Option<String>>> {
        let mut out = Vec::with_capacity(cands.len());
        for chunk in cands.chunks(BATCH) {
            out.extend(self.disasm_batch(chunk)?);
        }
        Ok(out)
    }

    fn disasm_batch(&self, cands: &[Vec<u32>]) -> anyhow::Result<Vec<Option<String>>> {
        match &self.tool {
            Tool::Mc(bin) => self.mc_batch(bin, cands),
            Tool::Objdump(path) => self.objdump_bisect(path, cands),
        }
    }

    /// LLVM 22's disassembler crashes on a few invalid encodings (an out-of-range SGPR class in
    /// `getSgprClassId`); a batch that crashes is split until the culprits stand alone, and they
    /// count as rejected, which is what a disassembler that did not crash would say.
    fn objdump_bisect(&self, bin: &std::path::Path, cands: &[Vec<u32>]) -> anyhow::Result<Vec<Option<String>>> {
        match self.objdump_batch(bin, cands)? {
            Some(res) => Ok(res),
            None if cands.len() == 1 => Ok(vec![None]),
            None => {
                let (a, b) = cands.split_at(cands.len() / 2);
                let mut res = self.objdump_bisect(bin, a)?;
                res.extend(self.objdump_bisect(bin, b)?);
                Ok(res)
            }
        }
    }

    /// `None` when llvm-objdump crashed.
    fn objdump_batch(&self, bin: &std::path::Path, cands: &[Vec<u32>]) -> anyhow::Result<Option<Vec<Option<String>>>> {
        let mut code = Vec::new();
        let mut spans = Vec::with_capacity(cands.len());
        for c in cands {
            anyhow::ensure!(c.first() != Some(&MARKER), "candidate equals the marker");
            let start = code.len() as u64;
            code.extend(c.iter().flat_map(|w| w.to_le_bytes()));
            spans.push((start, code.len() as u64));
            code.extend(MARKER.to_le_bytes());
        }
        let file = std::env::temp_dir().join(format!("isa-vectors-{}-{}.o", self.cpu, std::process::id()));
        std::fs::write(&file, amdgpu_elf(&code))?;
        let output = Command::new(bin)
            .args(["-d", "--no-show-raw-insn", "--no-leading-addr", &format!("--mcpu={}", self.cpu)])
            .arg("--triple=amdgcn-amd-amdhsa")
            .arg(&file)
            .output()
            .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", bin.display()))?;
        let _ = std::fs::remove_file(&file);
        if !output.status.success() {
            let err = String::from_utf8_lossy(&output.stderr);
            anyhow::ensure!(err.contains("Stack dump"), "{} failed: {err}", bin.display());
            return Ok(None);
        }
        // offset -> printed text, from lines like `v_add_f32_e32 v0, v1, v2   // 000000000000: 02000501`.
        let mut lines = std::collections::BTreeMap::new();
        for line in String::from_utf8(output.stdout)?.lines() {
            let Some((text, rest)) = line.rsplit_once("// ") else { continue };
            let Some((addr, _)) = rest.split_once(':') else { continue };
            let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else { continue };
            lines.insert(addr, normalize(text));
        }
        let res = spans
            .iter()
            .map(|&(start, end)| {
                let text = lines.get(&start)?;
                let single = lines.range(start + 1..end).next().is_none();
                let marker = lines.get(&end).is_some_and(|t| t == MARKER_TEXT);
                let decoded = !text.starts_with(".long") && !text.starts_with("<unknown>");
                (single && marker && decoded).then(|| text.clone())
            })
            .collect();
        Ok(Some(res))
    }

    fn mc_batch(&self, bin: &str, cands: &[Vec<u32>]) -> anyhow::Result<Vec<Option<String>>> {
        let mut input = String::new();
        let group = |words: &[u32], s: &mut String| {
            s.push('[');
            let mut first = true;
            for w in words {
                for b in w.to_le_bytes() {
                    if !first {
                        s.push(',');
                    }
                    first = false;
                    s.push_str(&format!("0x{b:02x}"));
                }
            }
            s.push_str("]\n");
        };
        for c in cands {
            anyhow::ensure!(c.first() != Some(&MARKER), "candidate equals the marker");
            group(c, &mut input);
            group(&[MARKER], &mut input);
        }
        let mut child = Command::new(bin)
            .args(["--disassemble", &format!("-mcpu={}", self.cpu), "-triple=amdgcn-amd-amdhsa"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot run {bin}: {e}"))?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output()?;
        writer.join().map_err(|_| anyhow::anyhow!("writer thread panicked"))??;
        let text = String::from_utf8(output.stdout)?;
        // Candidate k is on input line 2k+1; a warning on that line means LLVM could not
        // decode some of its bytes (e.g. a trailing dword), even if it printed one line.
        let mut bad_lines = std::collections::HashSet::new();
        for line in String::from_utf8_lossy(&output.stderr).lines() {
            if let Some(rest) = line.strip_prefix("<stdin>:") {
                if let Some(n) = rest.split(':').next().and_then(|n| n.parse::<usize>().ok()) {
                    bad_lines.insert(n);
                }
            }
        }
        let mut res = Vec::with_capacity(cands.len());
        let mut cur: Vec<String> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line == ".text" {
                continue;
            }
            if line == MARKER_TEXT {
                let input_line = 2 * res.len() + 1;
                let ok = cur.len() == 1 && !bad_lines.contains(&input_line);
                res.push(if ok { cur.pop() } else { None });
                cur.clear();
            } else {
                cur.push(normalize(line));
            }
        }
        anyhow::ensure!(res.len() == cands.len(), "{bin}: expected {} results, got {}", cands.len(), res.len());
        Ok(res)
    }
}

/// Collapses runs of whitespace to one space (LLVM pads the mnemonic with spaces or a tab).
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A minimal ELF64 relocatable object for AMDGPU holding `code` as its `.text`: all
/// llvm-objdump needs. Written by hand because the `object` crate's writer has no AMDGPU
/// architecture, and the layout is three section headers.
fn amdgpu_elf(code: &[u8]) -> Vec<u8> {
    const EM_AMDGPU: u16 = 224;
    const ELFOSABI_AMDGPU_HSA: u8 = 64;
    const SHT_PROGBITS: u32 = 1;
    const SHT_STRTAB: u32 = 3;
    const SHF_ALLOC_EXEC: u64 = 0x2 | 0x4;
    let shstrtab = b"\0.text\0.shstrtab\0";
    let text_off = 64u64;
    let shstr_off = text_off + code.len() as u64;
    let sh_off = (shstr_off + shstrtab.len() as u64).next_multiple_of(8);
    let mut f = Vec::with_capacity(sh_off as usize + 3 * 64);
    f.extend_from_slice(b"\x7fELF");
    f.extend_from_slice(&[2, 1, 1, ELFOSABI_AMDGPU_HSA, 3, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&1u16.to_le_bytes()); // ET_REL
    f.extend_from_slice(&EM_AMDGPU.to_le_bytes());
    f.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
    f.extend_from_slice(&0u64.to_le_bytes()); // entry
    f.extend_from_slice(&0u64.to_le_bytes()); // program headers
    f.extend_from_slice(&sh_off.to_le_bytes());
    f.extend_from_slice(&0u32.to_le_bytes()); // e_flags: the processor comes from --mcpu
    for v in [64u16, 0, 0, 64, 3, 2] {
        // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
        f.extend_from_slice(&v.to_le_bytes());
    }
    f.extend_from_slice(code);
    f.extend_from_slice(shstrtab);
    f.resize(sh_off as usize, 0);
    let mut section = |name: u32, ty: u32, flags: u64, off: u64, size: u64, align: u64| {
        f.extend_from_slice(&name.to_le_bytes());
        f.extend_from_slice(&ty.to_le_bytes());
        for v in [flags, 0, off, size] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(&[0; 8]); // link, info
        f.extend_from_slice(&align.to_le_bytes());
        f.extend_from_slice(&0u64.to_le_bytes()); // entsize
    };
    section(0, 0, 0, 0, 0, 0);
    section(1, SHT_PROGBITS, SHF_ALLOC_EXEC, text_off, code.len() as u64, 4);
    section(7, SHT_STRTAB, 0, shstr_off, shstrtab.len() as u64, 1);
    f
}

/// Rust's `llvm-tools` copy of `llvm-objdump` (`rustup component add llvm-tools`), if present.
pub fn rust_llvm_objdump() -> Option<std::path::PathBuf> {
    let out = Command::new("rustc").args(["--print", "sysroot"]).output().ok()?;
    let sysroot = String::from_utf8(out.stdout).ok()?;
    let out = Command::new("rustc").arg("-vV").output().ok()?;
    let host =
        String::from_utf8(out.stdout).ok()?.lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string))?;
    let path = std::path::Path::new(sysroot.trim()).join("lib/rustlib").join(host).join("bin/llvm-objdump");
    path.exists().then_some(path)
}
