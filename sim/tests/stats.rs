//! Run statistics through the real dispatch path (embedding API, a KFD process with
//! statistics on): exact instruction counts by class for straight-line kernels, computed here
//! from `llvm-objdump-15`'s disassembly and the grid; memory traffic from what the kernels
//! read and write; names from the code object's symbols. And the timeline's charge of
//! translation time to the dispatch that made it.

use sim::gpu::stats::StatsReport;
use sim::runner::{CodeObject, KernelRunner};
use sim::testing::{kernargs, opencl_kernels, runner};
use std::collections::BTreeMap;

fn code_object() -> Vec<u8> {
    opencl_kernels("clang-15", "gfx90a", "stats.cl")
}

/// The mnemonics of `kernel` up to its `s_endpgm`, from `llvm-objdump-15`.
fn disassembly(elf: &[u8], kernel: &str) -> Vec<String> {
    // A file of its own per call: the tests run in parallel.
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("rocjitsu-stats-{}-{n}.co", std::process::id()));
    std::fs::write(&path, elf).unwrap();
    let out = std::process::Command::new("llvm-objdump-15")
        .args(["-d", "--mcpu=gfx90a"])
        .arg(&path)
        .output()
        .expect("llvm-objdump-15 runs (`cargo xtask deps` installs it)");
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut mnemonics = Vec::new();
    for line in text.lines().skip_while(|l| !l.ends_with(&format!("<{kernel}>:"))).skip(1) {
        let mnemonic = line.split_whitespace().next().unwrap_or("").to_string();
        let end = mnemonic == "s_endpgm";
        mnemonics.push(mnemonic);
        if end {
            return mnemonics;
        }
    }
    panic!("no s_endpgm in {kernel}");
}

/// Instructions by class, as this test classifies mnemonics (written independently of the
/// simulator's table).
fn classes(mnemonics: &[String]) -> BTreeMap<&'static str, u64> {
    let mut classes = BTreeMap::new();
    for m in mnemonics {
        let class = match m.as_str() {
            m if m.starts_with("s_load") || m.starts_with("s_buffer_load") => "SMEM",
            m if m.starts_with("s_branch") || m.starts_with("s_cbranch") || m.starts_with("s_setpc") => "branch",
            "s_waitcnt" | "s_endpgm" | "s_nop" | "s_barrier" => "other",
            m if m.starts_with("s_") => "SALU",
            m if m.starts_with("v_mfma") => "MFMA",
            m if m.starts_with("v_") => "VALU",
            m if m.starts_with("global_") || m.starts_with("buffer_") || m.starts_with("flat_") => "VMEM",
            m if m.starts_with("ds_") => "LDS",
            m => panic!("unclassified {m:?}"),
        };
        *classes.entry(class).or_default() += 1;
    }
    classes
}

/// Bytes a wave's scalar loads read: `s_load_dword` 4, `s_load_dwordxN` 4N.
fn scalar_load_bytes(mnemonics: &[String]) -> u64 {
    mnemonics
        .iter()
        .filter_map(|m| m.strip_prefix("s_load_dword"))
        .map(|rest| 4 * rest.strip_prefix('x').map_or(1, |n| n.parse::<u64>().unwrap()))
        .sum()
}

/// A kernel runner on the MI210 whose process keeps statistics (`stats`) or not, with the
/// test kernels loaded.
fn setup(stats: bool) -> (sim::Machine, KernelRunner, CodeObject) {
    let (m, r) = runner("mi210", None);
    if stats {
        r.process().enable_stats();
    }
    let co = r.load_code_object(&code_object()).unwrap();
    (m, r, co)
}

/// `triple4` on `items` work-items in blocks of 64 (the last block partly off).
fn run_triple4(r: &KernelRunner, co: &CodeObject, items: u32) {
    let x4 = r.upload(&vec![1.0f32; 4 * 128]).unwrap();
    let y4 = r.alloc(16 * 128).unwrap();
    r.dispatch(co.kernel("triple4").unwrap(), [items, 1, 1], [64, 1, 1], &kernargs(&[x4, y4])).unwrap();
}

/// (translation, duration) in microseconds of each dispatch of `kernel` in a timeline
/// document, in dispatch order.
fn translation_by_dispatch(doc: &serde_json::Value, kernel: &str) -> Vec<(u64, f64)> {
    let mut v: Vec<_> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == kernel && e["args"]["translation_us"].is_u64())
        .map(|e| {
            let translated = e["args"]["translation_us"].as_u64().unwrap();
            (e["args"]["dispatch"].as_u64().unwrap(), (translated, e["dur"].as_f64().unwrap_or(0.0)))
        })
        .collect();
    v.sort_by_key(|(id, _)| *id);
    v.into_iter().map(|(_, d)| d).collect()
}

fn report(r: &KernelRunner) -> StatsReport {
    r.process().stats_report().expect("statistics are on")
}

#[test]
fn straight_line_kernels_count_what_their_disassembly_says_times_their_waves() {
    let elf = code_object();
    let (_m, r, co) = setup(true);
    let n = 64 * 40u32;
    let x = r.upload(&vec![1.5f32; n as usize]).unwrap();
    let y = r.upload(&vec![2.0f32; n as usize]).unwrap();
    let args = kernargs(&[x, y, 0.5f32.to_bits() as u64]);
    for _ in 0..3 {
        r.dispatch(co.kernel("axpy").unwrap(), [n, 1, 1], [64, 1, 1], &args).unwrap();
    }
    run_triple4(&r, &co, 128);
    let y_back: Vec<f32> = r.read_vec(y, n as usize).unwrap();
    assert!(y_back.iter().all(|&v| v == 2.0 + 3.0 * 0.75), "the kernel ran: {}", y_back[0]);

    let report = report(&r);
    assert_eq!(report.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["axpy", "triple4"]);
    for (k, waves, dispatches) in [(&report.kernels[0], 3 * 40u64, 3u64), (&report.kernels[1], 2, 1)] {
        let expected = classes(&disassembly(&elf, &k.name));
        assert_eq!(k.dispatches, dispatches);
        assert_eq!(k.workgroups, waves, "one wave per workgroup of 64");
        for class in ["SALU", "VALU", "MFMA", "SMEM", "VMEM", "LDS", "branch", "other"] {
            let want = expected.get(class).copied().unwrap_or(0) * waves;
            assert_eq!(k.by_class[class], want, "{} {class}: {expected:?}", k.name);
        }
        assert_eq!(k.wave_instructions, expected.values().sum::<u64>() * waves);
        assert!(k.host_seconds > 0.0);
    }
    // axpy reads x[i] and y[i] and writes y[i]: 8 and 4 bytes per lane, plus its kernel
    // arguments by scalar loads (the disassembly's s_load sizes, per wave).
    let smem_bytes = |name: &str| scalar_load_bytes(&disassembly(&elf, name));
    let axpy = &report.kernels[0];
    assert_eq!(axpy.bytes_read, 3 * (8 * n as u64 + 40 * smem_bytes("axpy")));
    assert_eq!(axpy.bytes_written, 3 * 4 * n as u64);
    let triple4 = &report.kernels[1];
    assert_eq!(triple4.bytes_read, 16 * 128 + 2 * smem_bytes("triple4"));
    assert_eq!(triple4.bytes_written, 16 * 128);
    let totals = report.totals();
    assert_eq!(totals.dispatches, 4);
    assert_eq!(totals.wave_instructions, axpy.wave_instructions + triple4.wave_instructions);
}

#[test]
fn inactive_lanes_move_no_memory() {
    let (_m, r, co) = setup(true);
    // A grid of 40 work-items: one wave with 24 lanes off.
    run_triple4(&r, &co, 40);
    let k = &report(&r).kernels[0];
    let smem = scalar_load_bytes(&disassembly(&code_object(), "triple4"));
    assert_eq!((k.bytes_read, k.bytes_written), (16 * 40 + smem, 16 * 40));
}

#[test]
fn without_statistics_nothing_is_kept() {
    let (_m, r, co) = setup(false);
    run_triple4(&r, &co, 64);
    assert!(r.process().stats_report().is_none());
}

#[test]
fn the_timeline_charges_a_kernel_the_translation_of_its_own_code_once() {
    // Two workers, whatever the host: one of them runs at least half of the waves.
    let (_m, r) = runner("mi210", Some(2));
    let co = r.load_code_object(&code_object()).unwrap();
    r.process().enable_trace();
    // Enough waves that a worker reaches the code more often than the translator's threshold.
    let n = 64 * 4 * sim::gpu::exec::jit::hot_threshold();
    let x = r.upload(&vec![1.5f32; n as usize]).unwrap();
    let y = r.alloc(4 * n as u64).unwrap();
    for _ in 0..4 {
        r.dispatch(co.kernel("halve").unwrap(), [n, 1, 1], [64, 1, 1], &kernargs(&[x, y])).unwrap();
    }
    run_triple4(&r, &co, 128);
    let y_back: Vec<f32> = r.read_vec(y, n as usize).unwrap();
    assert!(y_back.iter().all(|&v| v == 0.75), "the kernel ran: {}", y_back[0]);
    let doc: serde_json::Value = serde_json::from_slice(&r.process().trace_document("test").unwrap()).unwrap();
    let charged = |kernel: &str| translation_by_dispatch(&doc, kernel);
    let (halve, triple4) = (charged("halve"), charged("triple4"));
    assert_eq!((halve.len(), triple4.len()), (4, 1), "{doc}");
    match sim::gpu::exec::jit::Engine::from_env() {
        sim::gpu::exec::jit::Engine::Jit => {
            // Translated at the first dispatch; the later ones reuse the translations.
            let (first, later) = halve.split_first().unwrap();
            assert!(first.0 > 0 && first.0 as f64 <= first.1, "the first dispatch translated: {halve:?}");
            assert!(later.iter().all(|d| d.0 == 0), "{halve:?}");
            // triple4's two waves reach no address often enough, and none of halve's time is
            // charged to it.
            assert_eq!(triple4[0].0, 0);
        }
        sim::gpu::exec::jit::Engine::Interp => {
            assert!(halve.iter().chain(&triple4).all(|d| d.0 == 0), "the interpreter translates nothing");
        }
    }
}

#[test]
fn translated_loops_are_counted_as_the_interpreter_counts_them() {
    let elf = code_object();
    // Two workers, whatever the host; the timeline shows whether the loop was translated.
    let (_m, r) = runner("mi210", Some(2));
    r.process().enable_stats();
    r.process().enable_trace();
    let co = r.load_code_object(&elf).unwrap();
    let (waves, items, passes) = (40u64, 64 * 40 - 24, 300u64);
    let x: Vec<f32> = (0..items * passes).map(|v| (v % 7) as f32).collect();
    let (x_gpu, y) = (r.upload(&x).unwrap(), r.alloc(4 * items).unwrap());
    let args = kernargs(&[x_gpu, y, passes | items << 32]);
    let run = || r.dispatch(co.kernel("strided_sum").unwrap(), [64 * waves as u32, 1, 1], [64, 1, 1], &args).unwrap();
    run();
    let first = report(&r).kernels[0].clone();
    run();
    let both = report(&r).kernels[0].clone();
    // The CPU's sums (small integers: exact in f32 in any order).
    let y_back: Vec<f32> = r.read_vec(y, items as usize).unwrap();
    for (i, got) in y_back.iter().enumerate() {
        let want: f32 = (0..passes).map(|k| x[(k * items) as usize + i]).sum();
        assert_eq!(*got, want, "work-item {i}");
    }
    // Exact whatever ran them: one load per pass and lane on, one store, the kernel
    // arguments' scalar loads once per wave.
    let smem = scalar_load_bytes(&disassembly(&elf, "strided_sum"));
    assert_eq!(first.by_class["VMEM"], waves * (passes + 1));
    assert_eq!(first.bytes_read, 4 * items * passes + waves * smem);
    assert_eq!(first.bytes_written, 4 * items);
    assert_eq!(first.by_class.values().sum::<u64>(), first.wave_instructions);
    // The first dispatch interprets until the loop is hot and compiles it, the second finds
    // it translated: the counts may not tell.
    assert_eq!(both.wave_instructions, 2 * first.wave_instructions);
    for (class, n) in &first.by_class {
        assert_eq!(both.by_class[class], 2 * n, "{class}");
    }
    assert_eq!((both.bytes_read, both.bytes_written), (2 * first.bytes_read, 2 * first.bytes_written));
    let doc: serde_json::Value = serde_json::from_slice(&r.process().trace_document("test").unwrap()).unwrap();
    let translated: u64 = translation_by_dispatch(&doc, "strided_sum").iter().map(|d| d.0).sum();
    match sim::gpu::exec::jit::Engine::from_env() {
        sim::gpu::exec::jit::Engine::Jit => assert!(translated > 0, "with statistics on, the loop was translated"),
        sim::gpu::exec::jit::Engine::Interp => assert_eq!(translated, 0),
    }
}
