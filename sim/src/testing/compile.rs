//! Real compiled kernels without ROCm: OpenCL C through Debian's clangs, LLVM IR through the
//! LLVM of Rust's llvm-tools component (the only one here that knows gfx950).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Compiles the OpenCL C file `src` with one of Debian's clangs (`clang-15`, `clang-19`)
/// for `mcpu`, using compiler builtins only (`-nogpulib`), and returns the code object:
/// how tests, benchmarks and examples get real compiled kernels without ROCm.
///
/// # Panics
/// When the compiler is missing (`cargo xtask deps` installs it) or fails.
pub fn compile_opencl(clang: &str, mcpu: &str, src: &Path) -> Vec<u8> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("rocjitsu-{}-{n}.co", std::process::id()));
    let status = std::process::Command::new(clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-O2", "-nogpulib"])
        .arg(format!("-mcpu={mcpu}"))
        .arg("-o")
        .arg(&out)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {clang} (`cargo xtask deps` installs it): {e}"));
    assert!(status.success(), "{clang} failed on {}", src.display());
    let elf = std::fs::read(&out).expect("the compiled code object");
    let _ = std::fs::remove_file(&out);
    elf
}

/// The directory of Rust's `llvm-tools` component (`llc`, `llvm-objdump`) and of `rust-lld`:
/// the only LLVM ≥ 20 (the first to know gfx950) that this project's registries provide.
pub fn rust_llvm_bin() -> PathBuf {
    let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().expect("rustc --print sysroot");
    let sysroot = String::from_utf8(out.stdout).expect("utf-8 sysroot");
    let out = std::process::Command::new("rustc").arg("-vV").output().expect("rustc -vV");
    let verbose = String::from_utf8(out.stdout).expect("utf-8 rustc -vV");
    let host = verbose.lines().find_map(|l| l.strip_prefix("host: ")).expect("host triple");
    Path::new(sysroot.trim()).join("lib/rustlib").join(host).join("bin")
}

/// Compiles LLVM IR for `mcpu` with llvm-tools' `llc` and links it with `rust-lld` into a code
/// object: how tests get gfx950 kernels.
///
/// # Panics
/// When llvm-tools is missing (`cargo xtask deps` adds it: `rustup component add llvm-tools`)
/// or compilation fails.
pub fn compile_llvm_ir(mcpu: &str, src: &Path) -> Vec<u8> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = std::env::temp_dir();
    let (obj, co) = (
        tmp.join(format!("rocjitsu-{}-{n}.o", std::process::id())),
        tmp.join(format!("rocjitsu-{}-{n}.co", std::process::id())),
    );
    let bin = rust_llvm_bin();
    let run = |cmd: &mut std::process::Command, what: &str| {
        let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {what} (`cargo xtask deps` installs it): {e}"));
        assert!(status.success(), "{what} failed on {}", src.display());
    };
    run(
        std::process::Command::new(bin.join("llc"))
            .args(["-mtriple=amdgcn-amd-amdhsa", "-O2", "-filetype=obj", &format!("-mcpu={mcpu}"), "-o"])
            .arg(&obj)
            .arg(src),
        "llc (rustup component add llvm-tools)",
    );
    run(
        std::process::Command::new(bin.join("rust-lld")).args(["-flavor", "gnu", "-shared", "-o"]).arg(&co).arg(&obj),
        "rust-lld",
    );
    let elf = std::fs::read(&co).expect("the linked code object");
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_file(&co);
    elf
}

/// [`compile_opencl`] of `tests/kernels/<file>` of the `sim` crate, compiled once per test
/// process: tests of one file share the code object.
pub fn opencl_kernels(clang: &str, mcpu: &str, file: &str) -> Vec<u8> {
    /// Code objects by (compiler, target, source file).
    type Cache = HashMap<(String, String, String), Vec<u8>>;
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let key = (clang.to_string(), mcpu.to_string(), file.to_string());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(elf) = map.get(&key) {
        return elf.clone();
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(file);
    let elf = compile_opencl(clang, mcpu, &path);
    map.insert(key, elf.clone());
    elf
}
