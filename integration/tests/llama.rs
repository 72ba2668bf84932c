//! llama.cpp on the simulated MI210 (Debian sid: libllama and ggml's HIP backend, built for
//! gfx90a): a tiny llama-architecture model with random weights, written as GGUF by the test
//! (`programs/tiny_llama.py`, python3-gguf) and quantised by `llama-quantize`, decodes the
//! same greedy tokens with every layer on the simulated GPU as on the CPU backend
//! (issue "The libraries' own test suites pass"). ggml's quantised matrix products are also
//! checked on their own, against an emulation of the arithmetic ggml's kernels are written to
//! do.
//!
//! Two correct backends round differently, so a step where the CPU's two best logits are
//! nearly equal may go either way, and the sequences part there. Tokens are compared up to
//! the first such step, and the comparison must cover most of the sequence: the model is
//! built with widely spread logits, so that happens late or never.

use integration::{Mode, Stack};
use std::path::{Path, PathBuf};
use std::time::Duration;

const STEPS: usize = 24;
/// A CPU margin (best minus second-best logit) below this ends the comparison.
const CLOSE: f32 = 0.1;
/// Steps that must be compared before a close call may end the comparison.
const MIN_COMPARED: usize = 12;

/// `tiny.gguf` (f32) and its quantised copies, made once per test binary.
fn models() -> &'static Vec<(&'static str, PathBuf)> {
    static MODELS: std::sync::OnceLock<Vec<(&'static str, PathBuf)>> = std::sync::OnceLock::new();
    MODELS.get_or_init(|| {
        let dir = integration::bin_dir().join("test-programs/sid/llama");
        std::fs::create_dir_all(&dir).expect("a directory for the models");
        let f32_model = dir.join("tiny-f32.gguf");
        let script = integration::root().join("integration/programs/tiny_llama.py");
        let mut make = Stack::Sid.command("python3");
        make.arg(&script).arg(&f32_model).arg("1234");
        Stack::Sid.run(make, Duration::from_secs(120)).assert_success_of("writing the GGUF model");
        let mut all = vec![("f32", f32_model.clone())];
        for ty in ["F16", "Q8_0"] {
            let out = dir.join(format!("tiny-{}.gguf", ty.to_lowercase()));
            let mut q = Stack::Sid.command("llama-quantize");
            q.arg(&f32_model).arg(&out).arg(ty);
            Stack::Sid.run(q, Duration::from_secs(120)).assert_success_of("llama-quantize");
            all.push((if ty == "F16" { "f16" } else { "q8_0" }, out));
        }
        all
    })
}

/// (token, margin) per step, from `llama_greedy`'s output.
fn tokens(out: &str) -> Vec<(u32, f32)> {
    out.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            match (f.next(), f.next(), f.next(), f.next()) {
                (Some("token"), Some(t), Some("margin"), Some(m)) => Some((t.parse().ok()?, m.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

fn greedy_on_cpu(exe: &Path, model: &Path) -> Vec<(u32, f32)> {
    // Outside rocjitsu there is no GPU: ggml's HIP backend finds no device, the CPU runs it.
    let mut c = Stack::Sid.command(exe);
    c.arg(model).arg("0").arg(STEPS.to_string()).arg("hello world");
    let o = Stack::Sid.run(c, Duration::from_secs(120));
    o.assert_success_of("greedy decoding on the CPU backend");
    tokens(&o.stdout)
}

fn assert_same_tokens(ty: &str, mode: Mode, exe: &Path, model: &Path) {
    let cpu = greedy_on_cpu(exe, model);
    let o = Stack::Sid.run_program(
        mode,
        exe,
        &[&model.to_string_lossy(), "99", &STEPS.to_string(), "hello world"],
        Duration::from_secs(600),
    );
    o.assert_success_of(&format!("greedy decoding on the simulated GPU ({ty}, {})", mode.name()));
    assert!(o.stderr.contains("offloaded 3/3 layers to GPU"), "every layer runs on the GPU:\n{}", o.stderr);
    let gpu = tokens(&o.stdout);
    assert_eq!((cpu.len(), gpu.len()), (STEPS, STEPS), "{ty}: every step printed a token");
    let compared = cpu.iter().take_while(|(_, margin)| *margin >= CLOSE).count().clamp(MIN_COMPARED, STEPS);
    for (step, ((want, margin), (got, _))) in cpu.iter().zip(&gpu).enumerate().take(compared) {
        assert!(
            *margin >= CLOSE,
            "{ty}: the CPU's choice at step {step} is a close call (margin {margin}); pick another seed"
        );
        assert_eq!(
            got,
            want,
            "{ty} ({}): token {step} differs (CPU margin {margin})\nCPU {cpu:?}\nGPU {gpu:?}",
            mode.name()
        );
    }
}

#[test]
fn a_tiny_llama_decodes_the_same_greedy_tokens_on_the_gpu_as_on_the_cpu() {
    let exe = Stack::Sid.hip_program("llama_greedy", "gfx90a", &["llama"]);
    for (ty, model) in models() {
        assert_same_tokens(ty, Mode::Local, &exe, model);
    }
}

#[test]
fn a_tiny_llama_decodes_through_the_daemon() {
    let exe = Stack::Sid.hip_program("llama_greedy", "gfx90a", &["llama"]);
    let (ty, model) = &models()[0];
    assert_same_tokens(ty, Mode::Daemon, &exe, model);
}

/// The matrix products behind every quantised layer: for q4_0, q4_1, q5_0 and q8_0 weights and
/// 1, 4, 16 and 64 activation columns (ggml's matrix-vector path with `v_dot4_i32_i8`, and its
/// matrix-matrix path with MFMA tiles and the stream-k fix-up), the simulated GPU computes what
/// ggml's kernels are written to compute: `programs/ggml_quant_matvec.hip` emulates their
/// arithmetic (8-bit activation blocks with half scales and sums, integer dot products, the
/// offset applied as each path applies it) and allows only float rounding, 1e-5 of the
/// largest output. The two paths round differently from the CPU backend (the matrix-vector
/// path's q4_0 error is about twice the CPU's), which is why q4_0's greedy tokens may part
/// from the CPU's (docs/SUITES.md).
#[test]
fn ggml_quantised_products_compute_what_ggml_s_kernels_are_written_to() {
    let exe = Stack::Sid.hip_program("ggml_quant_matvec", "gfx90a", &["ggml", "ggml-base"]);
    let mut run = Stack::Sid.rocjitsu_in(Mode::Local);
    run.arg("--stats").arg("--").arg(&exe);
    let o = Stack::Sid.run(run, Duration::from_secs(300));
    o.assert_success_of("ggml's quantised products against their emulation");
    let cases: Vec<&str> = o.stdout.lines().filter(|l| l.contains(" n=")).collect();
    assert_eq!(cases.len(), 16, "four types by four column counts:\n{}", o.stdout);
    assert!(cases.iter().all(|l| l.ends_with(" PASS")), "{}", o.stdout);
    // Both paths ran (`--stats` lists the kernels dispatched).
    for kernel in ["quantize_q8_1", "mul_mat_vec_q<", "quantize_mmq_q8_1<", "mul_mat_q<"] {
        assert!(o.stderr.contains(kernel), "no {kernel} kernel ran:\n{}", o.stderr);
    }
}
