//! Running LLVM's AMDGPU disassembler (`llvm-mc --disassemble`) on many candidate instructions.
//!
//! llvm-mc reads its input as one byte stream, so each candidate is written as a bracketed group
//! (`[0x..,0x..]`, which llvm-mc decodes on its own) and followed by a marker group (`s_nop 0xabcd`)
//! that separates the printed lines of one candidate from the next. A candidate is accepted when it
//! printed exactly one line: then LLVM consumed exactly the bytes we gave it.

use std::io::Write;
use std::process::{Command, Stdio};

/// `s_nop 0xabcd`: a marker that no candidate is allowed to be.
const MARKER: u32 = 0xbf80_abcd;
const MARKER_TEXT: &str = "s_nop 0xabcd";
/// Candidates per llvm-mc run: big enough to amortise process start-up.
const BATCH: usize = 20_000;

/// One llvm-mc binary and the processor it disassembles for.
pub struct Mc {
    pub bin: &'static str,
    pub cpu: &'static str,
}

impl Mc {
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
        let mut child = Command::new(self.bin)
            .args(["--disassemble", &format!("-mcpu={}", self.cpu), "-triple=amdgcn-amd-amdhsa"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", self.bin))?;
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
        anyhow::ensure!(res.len() == cands.len(), "{}: expected {} results, got {}", self.bin, cands.len(), res.len());
        Ok(res)
    }
}

/// Collapses runs of whitespace to one space (LLVM pads the mnemonic with spaces or a tab).
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
