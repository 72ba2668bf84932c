//! Interpreter throughput on kernels compiled by clang-15 for gfx90a, run through the
//! embedding API (no ROCm runtime in the way): wave-instructions per second on a
//! VALU-heavy, an FMA-bound (lane-FMAs per second) and a memory-heavy kernel, with 1 and 2
//! worker threads, and MFMA
//! multiply-accumulates per second; then the VALU kernel on one worker with nothing observed,
//! with run statistics and with a timeline (their overhead).
//!
//! `cargo run --release -p sim --example throughput [mfma [NAME-PART]|valu|memory|vadd|barriers|poisson|fdiv|observe]` (used by
//! `cargo xtask bench`; with a section name only that section runs, for a profiler).
//! Prints one `name<TAB>value<TAB>unit` line per figure.

use sim::gpu::exec::workgroup::instructions_retired;
use sim::testing::{compile_opencl, kernargs};
use sim::Machine;
use std::path::Path;
use std::time::Instant;

/// Multiply-accumulates per second of one MFMA op run back to back on one wave.
fn mfma_rate(name: &str, words: [u32; 2], macs: u64) {
    mfma_rate_on(sim::isa::Target::Gfx90a, name, words, macs);
}

fn mfma_rate_on(target: sim::isa::Target, name: &str, words: [u32; 2], macs: u64) {
    // `throughput mfma NAME-PART` measures only the matching ops (for a profiler).
    if std::env::args().nth(2).is_some_and(|part| !name.contains(&part)) {
        return;
    }
    let mut h = sim::testing::Harness::for_target(target);
    for (r, reg) in h.wave.vgpr.iter_mut().enumerate() {
        reg.iter_mut().enumerate().for_each(|(l, v)| *v = 0x3c00_3c00 ^ ((r * 64 + l) as u32 & 0x0101));
    }
    // Decoded once and its handler called directly, as a kernel's step does with its decoded
    // instruction (the harness's `run` would decode it and look up a translation each time).
    let inst = h.decode(&words).expect("an MFMA");
    let handler = sim::gpu::exec::ops::handler(inst.op);
    // Warm: the first MFMA builds every op's operand tables.
    h.with_ctx(|wave, ctx| handler(wave, &inst, ctx)).expect("the MFMA runs");
    // `MFMA_COUNT`: fewer instructions for an instruction-counting run (valgrind).
    let n: u64 = std::env::var("MFMA_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let start = Instant::now();
    h.with_ctx(|wave, ctx| {
        for _ in 0..n {
            handler(wave, &inst, ctx).expect("the MFMA runs");
        }
    });
    let t = start.elapsed().as_secs_f64();
    println!("{name}, one core\t{:.2}\tG MAC/s", (n * macs) as f64 / t / 1e9);
}

fn main() {
    let only = std::env::args().nth(1);
    let wanted = |section: &str| only.as_deref().is_none_or(|o| o == section);
    if wanted("mfma") {
        mfma_rates();
    }
    if wanted("valu") || wanted("memory") || wanted("vadd") {
        kernel_rates(wanted("valu"), wanted("memory"), wanted("vadd"));
    }
    if wanted("barriers") {
        barrier_rate();
    }
    if wanted("poisson") {
        poisson_rate();
    }
    if wanted("fdiv") {
        fdiv_rate();
    }
    if wanted("observe") {
        observation_cost();
    }
    if sim::gpu::exec::jit::Engine::from_env() == sim::gpu::exec::jit::Engine::Jit {
        let (runs, _) = sim::gpu::exec::jit::stats();
        let (total, (longest, n)) = sim::gpu::exec::jit::translation_time();
        println!("translation, {runs} runs\t{:.2}\tms", total.as_secs_f64() * 1e3);
        println!("translation, longest run ({n} instructions)\t{:.3}\tms", longest.as_secs_f64() * 1e3);
    }
}

/// The built-in MI210, or the config file `THROUGHPUT_CONFIG` names: under valgrind
/// (`valgrind --tool=callgrind`, exact host-instruction counts where this VM's timings vary
/// twofold) a config with a smaller `local_mem_size`, as valgrind cannot map the 64 GiB arena.
fn machine() -> Machine {
    match std::env::var_os("THROUGHPUT_CONFIG") {
        Some(path) => Machine::new(sim::config::load_file(Path::new(&path)).expect("the THROUGHPUT_CONFIG file")),
        None => Machine::new(sim::config::default_config()),
    }
}

fn throughput_kernels() -> Vec<u8> {
    compile_opencl("clang-15", "gfx90a", &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kernels/throughput.cl"))
}

fn mfma_rates() {
    // Encodings by llvm-mc-15 (A in v0.., B in v2.., C = D at v32).
    mfma_rate("v_mfma_f32_32x32x8f16", [0xd3cc_0020, 0x0482_0500], 32 * 32 * 8);
    mfma_rate("v_mfma_f32_32x32x8bf16_1k", [0xd3e6_0020, 0x0482_0500], 32 * 32 * 8);
    mfma_rate("v_mfma_f32_32x32x2f32", [0xd3c4_0020, 0x0482_0500], 32 * 32 * 2);
    mfma_rate("v_mfma_i32_32x32x8i8", [0xd3d4_0020, 0x0482_0500], 32 * 32 * 8);
    mfma_rate("v_mfma_f64_16x16x4f64", [0xd3ee_0020, 0x0482_0500], 16 * 16 * 4);
    // gfx950 (llvm-objdump of LLVM 22; A in v0.., B in v8.., C = D at v32): fp8 and fp4.
    let gfx950 = sim::isa::Target::Gfx950;
    mfma_rate_on(gfx950, "gfx950 v_mfma_f32_16x16x128_f8f6f4 fp8", [0xd3ad_0020, 0x0482_1100], 16 * 16 * 128);
    mfma_rate_on(gfx950, "gfx950 v_mfma_f32_16x16x128_f8f6f4 fp4", [0xd3ad_0420, 0x8482_1100], 16 * 16 * 128);
    mfma_rate_on(gfx950, "gfx950 v_mfma_f32_32x32x64_f8f6f4 fp8", [0xd3ae_0020, 0x0482_1100], 32 * 32 * 64);
}

fn kernel_rates(valu: bool, memory: bool, vadd: bool) {
    let elf = throughput_kernels();
    let machine = machine();
    for workers in [1, 2] {
        let s = machine.kernel_runner_with_workers(workers).expect("a kernel runner");
        let co = s.load_code_object(&elf).expect("load");
        if valu {
            // 64 workgroups x 4 waves x 2000 iterations.
            let out = s.alloc(64 * 256 * 4).unwrap();
            let valu = co.kernel("valu").unwrap();
            s.dispatch(valu, [256, 1, 1], [256, 1, 1], &kernargs(&[out, 10])).unwrap(); // warm-up
            let (before, start) = (instructions_retired(), Instant::now());
            s.dispatch(valu, [64 * 256, 1, 1], [256, 1, 1], &kernargs(&[out, 2000])).unwrap();
            let (n, t) = (instructions_retired() - before, start.elapsed().as_secs_f64());
            println!("valu kernel, {workers} worker(s)\t{:.1}\tM wave-instructions/s", n as f64 / t / 1e6);
            // Eight FMAs per work-item and iteration, all 64 lanes active.
            let fma = co.kernel("fma_chains").unwrap();
            s.dispatch(fma, [256, 1, 1], [256, 1, 1], &kernargs(&[out, 10])).unwrap(); // warm-up
            let (items, iters) = (64 * 256u64, 2000u64);
            let start = Instant::now();
            s.dispatch(fma, [items as u32, 1, 1], [256, 1, 1], &kernargs(&[out, iters])).unwrap();
            let t = start.elapsed().as_secs_f64();
            let per_core = (items * iters * 8) as f64 / t / 1e9 / workers as f64;
            println!("fma kernel, {workers} worker(s)\t{per_core:.2}\tG lane-FMAs/s per worker");
        }
        if memory {
            // 16 M floats read and written, 1024 workgroups grid-striding: mostly the host's
            // memory system (each wave's next 256 bytes are 1 MiB further on). Then 256 K
            // floats by 16 workgroups, in the host's caches: mostly our code. The first
            // pass touches the buffers' pages for the first time (the host's page faults,
            // which a GPU's memory does not have): the second is measured.
            for (label, n_floats, workgroups) in [("", 16u64 << 20, 1024u64), (" (in cache)", 256 << 10, 16)] {
                let (src, dst) = (s.alloc(n_floats * 4).unwrap(), s.alloc(n_floats * 4).unwrap());
                let stream = co.kernel("stream").unwrap();
                let grid = workgroups * 256;
                let args = kernargs(&[src, dst, n_floats | (grid << 32)]);
                let (before, start) = (instructions_retired(), Instant::now());
                s.dispatch(stream, [grid as u32, 1, 1], [256, 1, 1], &args).unwrap();
                let t_cold = start.elapsed().as_secs_f64();
                let cold = (instructions_retired() - before) as f64 / t_cold / 1e6;
                let (before, start) = (instructions_retired(), Instant::now());
                s.dispatch(stream, [grid as u32, 1, 1], [256, 1, 1], &args).unwrap();
                let (n, t) = (instructions_retired() - before, start.elapsed().as_secs_f64());
                let rate = n as f64 / t / 1e6;
                println!("memory kernel{label}, {workers} worker(s)\t{rate:.1}\tM wave-instructions/s");
                println!(
                    "memory kernel{label}, {workers} worker(s)\t{:.2}\tGB/s moved",
                    (n_floats * 8) as f64 / t / 1e9
                );
                println!("memory kernel{label}, {workers} worker(s), first touch\t{cold:.1}\tM wave-instructions/s");
            }
        }
        if vadd {
            // Vector add, 16 M floats, one element per work-item: 262 144 waves of one pass.
            let n = 16u64 << 20;
            let (a, b, c) = (s.alloc(n * 4).unwrap(), s.alloc(n * 4).unwrap(), s.alloc(n * 4).unwrap());
            let vadd = co.kernel("vadd").unwrap();
            let args = kernargs(&[a, b, c, n]);
            s.dispatch(vadd, [n as u32, 1, 1], [256, 1, 1], &args).unwrap(); // first touch
            let (before, start) = (instructions_retired(), Instant::now());
            s.dispatch(vadd, [n as u32, 1, 1], [256, 1, 1], &args).unwrap();
            let (insts, t) = (instructions_retired() - before, start.elapsed().as_secs_f64());
            let waves = n / 64;
            println!("vector add 16 M, {workers} worker(s)\t{:.1}\tms", t * 1e3);
            println!(
                "vector add 16 M, {workers} worker(s)\t{:.0}\tns per wave per worker",
                t * 1e9 * workers as f64 / waves as f64
            );
            println!("vector add 16 M, {workers} worker(s)\t{:.1}\tM wave-instructions/s", insts as f64 / t / 1e6);
        }
    }
}

/// A barrier-bound kernel like rocRAND's MT19937 jump-ahead: two-wave workgroups, a state
/// in LDS, two barriers per step and mostly one active lane between them.
fn barrier_rate() {
    let elf =
        compile_opencl("clang-15", "gfx90a", &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/lockstep.cl"));
    let machine = machine();
    let s = machine.kernel_runner_with_workers(1).expect("a kernel runner");
    let co = s.load_code_object(&elf).expect("load");
    let out = s.alloc(64 * 624 * 4).unwrap();
    let kernel = co.kernel("barriers").unwrap();
    // Warm-up: the translator's runs are made here (its cache is process-wide).
    s.dispatch(kernel, [64 * 128, 1, 1], [128, 1, 1], &kernargs(&[out, 100])).unwrap();
    let (before, start) = (instructions_retired(), Instant::now());
    s.dispatch(kernel, [64 * 128, 1, 1], [128, 1, 1], &kernargs(&[out, 2000])).unwrap();
    let (n, t) = (instructions_retired() - before, start.elapsed().as_secs_f64());
    println!("barrier kernel, 1 worker\t{:.1}\tM wave-instructions/s", n as f64 / t / 1e6);
}

/// f64 division in a lane-divergent loop (rocRAND's Poisson sampler), on one worker.
/// `POISSON_SAMPLES` sets the samples per work-item (fewer for valgrind).
fn poisson_rate() {
    let samples: u64 = std::env::var("POISSON_SAMPLES").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let rate = one_worker_rate("poisson", (16, samples), (16, samples));
    println!("poisson kernel (f64 division), 1 worker\t{rate:.1}\tM wave-instructions/s");
}

/// f32 division (HIP's correctly rounded sequence) and absolute values, the shape of
/// ggml's q8_1 quantization, whose 2-billion-work-item dispatches took minutes.
fn fdiv_rate() {
    let rate = one_worker_rate("quantize", (16, 20), (64, 200));
    println!("quantize kernel (f32 division), 1 worker\t{rate:.1}\tM wave-instructions/s");
}

/// M wave-instructions per second of `kernel(out, iterations)` on one worker, measured on
/// its second dispatch: `(workgroups, iterations)` of 256 work-items for the warm-up, then
/// for the measured one. The warm-up makes the translator's runs (its cache is
/// process-wide; code is compiled once a worker reached it `jit::hot_threshold()` times).
fn one_worker_rate(kernel: &str, warm_up: (u32, u64), measured: (u32, u64)) -> f64 {
    let elf = throughput_kernels();
    let machine = machine();
    let s = machine.kernel_runner_with_workers(1).expect("a kernel runner");
    let co = s.load_code_object(&elf).expect("load");
    let out = s.alloc(64 * 256 * 4).unwrap();
    let kernel = co.kernel(kernel).unwrap();
    let dispatch = |(workgroups, iterations): (u32, u64)| {
        s.dispatch(kernel, [workgroups * 256, 1, 1], [256, 1, 1], &kernargs(&[out, iterations])).unwrap()
    };
    dispatch(warm_up);
    let (before, start) = (instructions_retired(), Instant::now());
    dispatch(measured);
    (instructions_retired() - before) as f64 / start.elapsed().as_secs_f64() / 1e6
}

/// The VALU kernel with nothing observed, with statistics and with a timeline.
fn observation_cost() {
    let elf = throughput_kernels();
    let machine = machine();
    // Observation overhead: the best of three runs each, alternating, on one worker.
    let mut best = [0f64; 3];
    for _ in 0..3 {
        for (mode, best) in best.iter_mut().enumerate() {
            let s = machine.kernel_runner_with_workers(1).expect("a kernel runner");
            match mode {
                1 => s.process().enable_stats(),
                2 => s.process().enable_trace(),
                _ => {}
            }
            let co = s.load_code_object(&elf).expect("load");
            let out = s.alloc(64 * 256 * 4).unwrap();
            let valu = co.kernel("valu").unwrap();
            let (before, start) = (instructions_retired(), Instant::now());
            s.dispatch(valu, [64 * 256, 1, 1], [256, 1, 1], &kernargs(&[out, 2000])).unwrap();
            let rate = (instructions_retired() - before) as f64 / start.elapsed().as_secs_f64() / 1e6;
            *best = best.max(rate);
        }
    }
    for (label, rate) in ["nothing observed", "statistics on", "timeline on"].iter().zip(best) {
        println!("valu kernel, 1 worker, {label}\t{rate:.1}\tM wave-instructions/s");
    }
}
