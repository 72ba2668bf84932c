//! A bad config stops `rocjitsu` before anything runs: exit 2 and one line naming the file,
//! the key and the reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A valid MI210-like config with one substitution applied to its text.
const GOOD: &str = r#"{
  "max_ticks": 0,
  "vm": {
    "arch": "cdna2",
    "gpu": {
      "num_gpus": 1,
      "device": {
        "gpu_id": 50149,
        "gfx_target_version": 90010,
        "simd_count": 416,
        "simd_per_cu": 4,
        "num_shader_engines": 8,
        "num_cu_per_sh": 14,
        "wave_front_size": 64,
        "drm_render_minor": 128,
        "local_mem_size": 68702699520
      }
    }
  }
}
"#;

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        Case { dir: tempfile::tempdir().unwrap() }
    }

    fn write(&self, text: &str) -> PathBuf {
        let path = self.dir.path().join("config.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn marker(&self) -> PathBuf {
        self.dir.path().join("app-ran")
    }

    /// Runs `rocjitsu --config <config> -- sh -c 'touch marker'`.
    fn run(&self, config: &Path) -> Output {
        let script = format!("touch '{}'", self.marker().display());
        Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
            .arg("--config")
            .arg(config)
            .args(["--", "/bin/sh", "-c", &script])
            // Config errors must come before the interposer is looked for.
            .env("ROCJITSU_PRELOAD_LIB", self.dir.path().join("missing.so"))
            .env_remove("LD_PRELOAD")
            .output()
            .expect("run rocjitsu")
    }
}

fn assert_config_error(text: Option<&str>, key: &str, reason: &str) {
    let case = Case::new();
    let path = match text {
        Some(t) => case.write(t),
        None => case.dir.path().join("absent.json"),
    };
    let o = case.run(&path);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let expected_prefix = format!("rocjitsu: {}: {key}: ", path.display());
    assert!(err.starts_with(&expected_prefix), "{err:?} should start with {expected_prefix:?}");
    assert!(err.contains(reason), "{err:?} should contain {reason:?}");
    assert!(!case.marker().exists(), "the application must not run");
}

fn with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn the_base_config_is_valid() {
    let case = Case::new();
    let path = case.write(GOOD);
    let o = case.run(&path);
    // Valid config, so it gets as far as the (missing) interposer.
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn missing_file() {
    assert_config_error(None, "(file)", "cannot read: No such file or directory");
}

#[test]
fn bad_json() {
    assert_config_error(
        Some(&with("\"arch\": \"cdna2\",", "\"arch\": \"cdna2\",,")),
        "line 4:21",
        "invalid JSON: key must be a string",
    );
}

#[test]
fn wrong_type() {
    assert_config_error(
        Some(&with("\"simd_count\": 416", "\"simd_count\": \"416\"")),
        "vm.gpu.device.simd_count",
        "invalid type: string \"416\", expected u32",
    );
}

#[test]
fn simd_count_zero() {
    assert_config_error(
        Some(&with("\"simd_count\": 416", "\"simd_count\": 0")),
        "vm.gpu.device.simd_count",
        "must be at least 1",
    );
}

#[test]
fn simd_count_not_divisible() {
    assert_config_error(
        Some(&with("\"simd_count\": 416", "\"simd_count\": 417")),
        "vm.gpu.device.simd_count",
        "not divisible by simd_per_cu 4",
    );
}

#[test]
fn wave_front_size() {
    assert_config_error(
        Some(&with("\"wave_front_size\": 64", "\"wave_front_size\": 16")),
        "vm.gpu.device.wave_front_size",
        "must be 32 or 64, got 16",
    );
}

#[test]
fn render_minor_out_of_range() {
    assert_config_error(
        Some(&with("\"drm_render_minor\": 128", "\"drm_render_minor\": 300")),
        "vm.gpu.device.drm_render_minor",
        "must be 128..=255, got 300",
    );
}

#[test]
fn render_minor_out_of_range_for_the_last_gpu() {
    let text = with("\"drm_render_minor\": 128", "\"drm_render_minor\": 255").replacen(
        "\"num_gpus\": 1",
        "\"num_gpus\": 2",
        1,
    );
    assert_config_error(Some(&text), "vm.gpu.device.drm_render_minor", "exceeds 255");
}

#[test]
fn num_gpus_out_of_range() {
    assert_config_error(Some(&with("\"num_gpus\": 1", "\"num_gpus\": 0")), "vm.gpu.num_gpus", "must be 1..=16, got 0");
    assert_config_error(Some(&with("\"num_gpus\": 1", "\"num_gpus\": 17")), "vm.gpu.num_gpus", "got 17");
}

#[test]
fn local_mem_size_zero() {
    assert_config_error(
        Some(&with("\"local_mem_size\": 68702699520", "\"local_mem_size\": 0")),
        "vm.gpu.device.local_mem_size",
        "must be greater than 0",
    );
}

#[test]
fn unknown_arch() {
    assert_config_error(Some(&with("\"arch\": \"cdna2\"", "\"arch\": \"cdna7\"")), "vm.arch", "unknown arch \"cdna7\"");
}

#[test]
fn arch_we_cannot_simulate() {
    assert_config_error(Some(&with("\"arch\": \"cdna2\"", "\"arch\": \"rdna4\"")), "vm.arch", "cannot be simulated");
}

#[test]
fn unknown_gfx_version() {
    assert_config_error(
        Some(&with("\"gfx_target_version\": 90010", "\"gfx_target_version\": 100300")),
        "vm.gpu.device.gfx_target_version",
        "unknown gfx_target_version 100300",
    );
}

#[test]
fn unknown_builtin_name() {
    let o =
        Command::new(env!("CARGO_BIN_EXE_rocjitsu")).args(["--config", "mi9999", "--", "/bin/true"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rocjitsu: mi9999: (file): cannot read"), "{err}");
    assert!(
        err.contains("built-ins: mi210, mi210-2gpu, mi210-4gpu, mi210-8gpu, mi300x, mi300x-4gpu, mi300x-8gpu, mi350x, mi350x-2gpu"),
        "{err}"
    );
}
