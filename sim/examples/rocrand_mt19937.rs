//! Barrier-bound throughput on real library code: rocRAND's MT19937 jump-ahead kernel, taken
//! from the gfx90a code object in Debian's `librocrand.so` (the sid root that
//! `cargo xtask rootfs` builds), run through the embedding API on one worker.
//!
//! The kernel is what makes every MT19937 test of rocRAND and hipRAND slow under the
//! simulator (issue 12): two-wave workgroups, a 624-word state in LDS, 19 937 steps per
//! jump, each a one-lane state update, two barriers and an LDS pass of both waves. Its speed
//! is the speed of the waves kept in step after each barrier.
//!
//! `cargo run --release -p sim --example rocrand_mt19937 [LIBROCRAND [GROUPS]]` (used by
//! `cargo xtask bench`; the library defaults to the sid root's). Prints one
//! `name<TAB>value<TAB>unit` line per figure, and the output's hash (the jump table is
//! random, so only runs of one build and engine compare).

use object::{Object, ObjectSection};
use sim::gpu::exec::workgroup::instructions_retired;
use sim::testing::{kernargs, splitmix};
use sim::Machine;
use std::path::PathBuf;
use std::time::Instant;

/// The jump-ahead kernel's symbol (`jump_ahead_mt19937<128, default config, true>`).
const KERNEL: &str = "_ZN12rocrand_impl6system6detail14kernel_wrapperITnDaXadL_ZNS_4host18jump_ahead_mt19937ILj128ENS3_23default_config_providerIL16rocrand_rng_type407EEELb1EEEv4dim3S8_S8_S8_PjyPKjEENS3_33static_block_size_config_providerILj128EEEjLb0EJS9_yS9_EEEvDpT3_";

/// The code objects for `gfx90a` in a HIP fat binary: clang offload bundles, each a magic,
/// an entry count and per entry its offset (from the bundle's start), size and target id.
/// Written here because no crate reads the format (it is a few fixed-size fields).
fn gfx90a_code_objects(fatbin: &[u8]) -> Vec<&[u8]> {
    const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
    let u64_at = |at: usize| fatbin.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(start) = fatbin[at..].windows(MAGIC.len()).position(|w| w == MAGIC).map(|p| p + at) {
        at = start + MAGIC.len();
        let Some(entries) = u64_at(at) else { break };
        let mut field = at + 8;
        for _ in 0..entries {
            let (Some(offset), Some(size), Some(id_len)) = (u64_at(field), u64_at(field + 8), u64_at(field + 16))
            else {
                break;
            };
            let id = fatbin.get(field + 24..field + 24 + id_len as usize).unwrap_or_default();
            field += 24 + id_len as usize;
            let body = start + offset as usize;
            if id.ends_with(b"gfx90a") {
                if let Some(code) = fatbin.get(body..body + size as usize) {
                    found.push(code);
                }
            }
        }
    }
    found
}

fn main() {
    let library = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/roots/sid/usr/lib/x86_64-linux-gnu/librocrand.so.1")
    });
    let groups: u32 = std::env::args().nth(2).and_then(|g| g.parse().ok()).unwrap_or(64);
    let bytes = std::fs::read(&library).unwrap_or_else(|e| panic!("{}: {e}", library.display()));
    let elf = object::File::parse(&*bytes).expect("an ELF library");
    let fatbin = elf.section_by_name(".hip_fatbin").and_then(|s| s.data().ok()).expect("a .hip_fatbin section");
    let code = gfx90a_code_objects(fatbin)
        .into_iter()
        .find(|co| co.windows(KERNEL.len()).any(|w| w == KERNEL.as_bytes()))
        .expect("the gfx90a code object of the MT19937 jump-ahead kernel");

    // `THROUGHPUT_CONFIG`: a config with a smaller `local_mem_size` for valgrind, as in the
    // `throughput` example.
    let machine = match std::env::var_os("THROUGHPUT_CONFIG") {
        Some(path) => {
            Machine::new(sim::config::load_file(std::path::Path::new(&path)).expect("the THROUGHPUT_CONFIG file"))
        }
        None => Machine::new(sim::config::default_config()),
    };
    let s = machine.kernel_runner_with_workers(1).expect("a kernel runner");
    let co = s.load_code_object(code).expect("load");
    let kernel = co.kernel(KERNEL).expect("the jump-ahead kernel");
    // Jump polynomials: 624 words for each digit of the engine id (random words: the work
    // per set bit is the same, and only the time is measured).
    let jump: Vec<u32> = (0..64 * 255 * 624).map(|i| splitmix(i as u64)).collect();
    let jump = s.upload(&jump).expect("the jump table");
    let engines = s.alloc(groups as u64 * 624 * 4).expect("the engines");
    let args = kernargs(&[engines, 1234, jump]);
    // Warm-up: the translator's runs are made here (its cache is process-wide).
    s.dispatch(kernel, [16 * 128, 1, 1], [128, 1, 1], &args).expect("the warm-up dispatch");
    let (before, start) = (instructions_retired(), Instant::now());
    s.dispatch(kernel, [groups * 128, 1, 1], [128, 1, 1], &args).expect("the dispatch");
    let (n, t) = (instructions_retired() - before, start.elapsed().as_secs_f64());
    let out: Vec<u32> = s.read_vec(engines, groups as usize * 624).expect("the engines' states");
    let hash = out.iter().fold(0u64, |h, &v| h.wrapping_mul(31).wrapping_add(v as u64));
    println!(
        "rocRAND MT19937 jump-ahead ({groups} workgroups), 1 worker\t{:.1}\tM wave-instructions/s",
        n as f64 / t / 1e6
    );
    eprintln!("{n} wave-instructions in {t:.3} s; engines' hash {hash:016x}");
}
