//! gfx90a kernels compiled by Debian's clang-19 (`tests/kernels/vmem_gfx90a.cl`)
//! exercising vector memory, LDS, scratch and atomics as a compiler emits
//! them, run on the default (gfx90a) machine through the embedding API, and
//! checked against CPU references.

use sim::runner::KernelRunner;
use sim::testing::opencl_kernels;
use sim::Machine;
use std::path::Path;
use std::process::Command;

/// The code object for `mcpu`, compiled once per test process.
fn compile(mcpu: &'static str) -> Vec<u8> {
    opencl_kernels("clang-19", mcpu, "vmem_gfx90a.cl")
}

fn code_object() -> Vec<u8> {
    compile("gfx90a")
}

fn runner() -> (Machine, KernelRunner) {
    sim::testing::runner("mi210", Some(2))
}

use sim::testing::kernargs as args;

#[test]
fn private_arrays_spill_to_per_lane_scratch() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 64 * 40u32;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101).collect();
    let din = s.upload(&input).unwrap();
    let dout = s.alloc(n as u64 * 4).unwrap();
    let k = 9i32;
    s.dispatch(co.kernel("scratch").unwrap(), [n, 1, 1], [64, 1, 1], &args(&[din, dout, k as u64])).unwrap();
    let out: Vec<i32> = s.read_vec(dout, n as usize).unwrap();
    for g in 0..n as usize {
        let v = input[g];
        let a = |i: i32| v.wrapping_mul(i).wrapping_add(k);
        let want = a((v + k) % 48) - a((g as i32 * 7) % 48);
        assert_eq!(out[g], want, "item {g}");
    }
}

#[test]
fn lds_tree_reduction_with_barriers() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 256 * 64u32;
    let input: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) >> 20).collect();
    let din = s.upload(&input).unwrap();
    let total = s.upload(&[0u32]).unwrap();
    s.dispatch(co.kernel("lds_sum").unwrap(), [n, 1, 1], [256, 1, 1], &args(&[din, total])).unwrap();
    let want = input.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    assert_eq!(s.read_vec::<u32>(total, 1).unwrap()[0], want);

    let wide: Vec<u64> = (0..n as u64).map(|i| i * 0x1_0000_0001 + 7).collect();
    let din = s.upload(&wide).unwrap();
    let dout = s.alloc(n as u64 * 8).unwrap();
    s.dispatch(co.kernel("reverse").unwrap(), [n, 1, 1], [256, 1, 1], &args(&[din, dout])).unwrap();
    let out: Vec<u64> = s.read_vec(dout, n as usize).unwrap();
    for i in 0..n as usize {
        assert_eq!(out[i], wide[i / 256 * 256 + 255 - i % 256], "element {i}");
    }
}

#[test]
fn contended_global_atomics() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 64 * 100u32;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 20011 - 10000).collect();
    let din = s.upload(&input).unwrap();
    let stats = s.upload(&[0i32, i32::MAX, i32::MIN, 0, 0]).unwrap();
    let fsum = s.upload(&[0f32]).unwrap();
    let umax = s.upload(&[0u32]).unwrap();
    s.dispatch(co.kernel("atomics").unwrap(), [n, 1, 1], [64, 1, 1], &args(&[din, stats, fsum, umax])).unwrap();
    let got: Vec<i32> = s.read_vec(stats, 5).unwrap();
    let or = input.iter().fold(0i32, |a, &v| a | 1 << (v & 31));
    let xor = input.iter().fold(0i32, |a, &v| a ^ v);
    let sum = input.iter().fold(0i32, |a, &v| a.wrapping_add(v));
    let want = [sum, *input.iter().min().unwrap(), *input.iter().max().unwrap(), or, xor];
    assert_eq!(got, want);
    assert_eq!(s.read_vec::<f32>(fsum, 1).unwrap()[0], n as f32 * 0.5, "no lost compare-exchange updates");
    assert_eq!(s.read_vec::<u32>(umax, 1).unwrap()[0], input.iter().map(|&v| v as u32).max().unwrap());
}

#[test]
fn narrow_and_wide_accesses() {
    let (_m, s) = runner();
    let co = s.load_code_object(&code_object()).unwrap();
    let n = 64 * 8u32;
    let c: Vec<i8> = (0..n).map(|i| (i as i32 * 13 % 256 - 128) as i8).collect();
    let sh: Vec<i16> = (0..n).map(|i| (i as i32 * 977 % 65536 - 32768) as i16).collect();
    let (dc, ds) = (s.upload(&c).unwrap(), s.upload(&sh).unwrap());
    let dout = s.alloc(n as u64 * 4).unwrap();
    let dbytes = s.upload(&vec![0xeeu8; n as usize + 16]).unwrap();
    let dshorts = s.alloc(n as u64 * 2).unwrap();
    s.dispatch(co.kernel("narrow").unwrap(), [n, 1, 1], [64, 1, 1], &args(&[dc, ds, dout, dbytes, dshorts])).unwrap();
    let out: Vec<i32> = s.read_vec(dout, n as usize).unwrap();
    let bytes: Vec<u8> = s.read_vec(dbytes, n as usize + 16).unwrap();
    let shorts: Vec<u16> = s.read_vec(dshorts, n as usize).unwrap();
    for i in 0..n as usize {
        assert_eq!(out[i], c[i] as i32 * 1000 + sh[i] as i32, "out[{i}]");
        assert_eq!(bytes[i], (c[i] as i32 + sh[i] as i32) as u8, "bytes[{i}]");
        assert_eq!(shorts[i], (sh[i] as i32 * 3) as u16, "shorts[{i}]");
    }
    assert_eq!(&bytes[n as usize..], &[0xee; 16], "no byte past the end is written");

    let a: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let v: Vec<u32> = (0..4 * n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let (da, dv) = (s.upload(&a).unwrap(), s.upload(&v).unwrap());
    let (db, dw) = (s.alloc(n as u64 * 8).unwrap(), s.alloc(n as u64 * 16).unwrap());
    s.dispatch(co.kernel("wide").unwrap(), [n, 1, 1], [64, 1, 1], &args(&[da, db, dv, dw])).unwrap();
    let b: Vec<u64> = s.read_vec(db, n as usize).unwrap();
    let w: Vec<u32> = s.read_vec(dw, 4 * n as usize).unwrap();
    for i in 0..n as usize {
        assert_eq!(b[i], a[i].wrapping_mul(3).wrapping_add(a[i] >> 40));
        for c in 0..4 {
            assert_eq!(w[4 * i + c], v[4 * i + 3 - c].wrapping_add(i as u32));
        }
    }
}

/// The same scratch kernel on gfx942, where the compiler uses `scratch_*`
/// instructions (architected flat scratch) instead of buffer accesses.
#[test]
fn scratch_instructions_on_gfx942() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/gfx942_cdna3_kmd.json");
    let machine = Machine::new(sim::config::load_file(&config).expect("the gfx942 config"));
    let s = machine.kernel_runner_with_workers(2).expect("a kernel runner");
    let co = s.load_code_object(&compile("gfx942")).unwrap();
    let n = 64 * 20u32;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 53) % 97).collect();
    let din = s.upload(&input).unwrap();
    let dout = s.alloc(n as u64 * 4).unwrap();
    let k = 4i32;
    s.dispatch(co.kernel("scratch").unwrap(), [n, 1, 1], [64, 1, 1], &args(&[din, dout, k as u64])).unwrap();
    let out: Vec<i32> = s.read_vec(dout, n as usize).unwrap();
    for g in 0..n as usize {
        let v = input[g];
        let a = |i: i32| v * i + k;
        assert_eq!(out[g], a((v + k) % 48) - a((g as i32 * 7) % 48), "item {g}");
    }
}

/// `tests/kernels/vmem_images.cl` compiled like the ROCclr blit kernels
/// (clang-15 with rocm-device-libs), once per test process.
fn image_code_object() -> Vec<u8> {
    static ELF: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    ELF.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/vmem_images.cl");
        let libs = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("images.co");
        let mut cmd = Command::new("clang-15");
        cmd.args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-O3", "-nogpulib"]);
        cmd.args(["-Xclang", "-finclude-default-header"]);
        for lib in ["opencl", "ocml", "ockl", "oclc_isa_version_90a", "oclc_abi_version_400", "oclc_wavefrontsize64_on"]
        {
            cmd.args(["-Xclang", "-mlink-bitcode-file", "-Xclang"]).arg(libs.join(format!("{lib}.bc")));
        }
        let status = cmd.arg("-o").arg(&out).arg(&src).status().expect("clang-15 runs (`cargo xtask deps`)");
        assert!(status.success(), "clang-15 failed on {}", src.display());
        std::fs::read(&out).unwrap()
    })
    .clone()
}

/// A 256-bit gfx9 image descriptor (T#) for a linear image.
#[allow(clippy::too_many_arguments)]
fn tsharp(base: u64, dfmt: u32, nfmt: u32, ty: u32, w: u32, h: u32, depth: u32, pitch: u32) -> [u32; 8] {
    let xyzw = 4 | 5 << 3 | 6 << 6 | 7 << 9;
    [
        (base >> 8) as u32,
        (base >> 40) as u32 & 0xff | dfmt << 20 | nfmt << 26,
        (w - 1) | (h - 1) << 14,
        xyzw | ty << 28,
        (depth - 1) | (pitch - 1) << 13,
        0,
        0,
        0,
    ]
}

#[test]
fn compiled_image_kernels_load_and_store_texels() {
    let (_m, s) = runner();
    let co = s.load_code_object(&image_code_object()).unwrap();
    // 2D copy: 8_8_8_8 uint (17 x 5, pitch 32) to 16_16_16_16 uint (pitch 24).
    let (w, h) = (17u32, 5u32);
    let src: Vec<u8> = (0..32 * h * 4).map(|i| (i * 7 % 251) as u8).collect();
    let dsrc = s.upload(&src).unwrap();
    let ddst = s.alloc(24 * h as u64 * 8).unwrap();
    let tsrc = s.upload(&tsharp(dsrc, 10, 4, 9, w, h, 1, 32)).unwrap();
    let tdst = s.upload(&tsharp(ddst, 12, 4, 9, w, h, 1, 24)).unwrap();
    s.dispatch(co.kernel("copy2d").unwrap(), [32, 8, 1], [16, 4, 1], &args(&[tsrc, tdst])).unwrap();
    let dst: Vec<u16> = s.read_vec(ddst, (24 * h * 4) as usize).unwrap();
    for y in 0..h as usize {
        for x in 0..24usize {
            let got = &dst[(y * 24 + x) * 4..(y * 24 + x) * 4 + 4];
            if x >= w as usize {
                assert_eq!(got, &[0; 4], "padding ({x}, {y}) untouched");
                continue;
            }
            let t = |c: usize| src[(y * 32 + x) * 4 + c] as u16;
            assert_eq!(got, &[t(2) + 1000, t(1) + 2000, t(0) + 3000, t(3) + 4000], "texel ({x}, {y})");
        }
    }

    // 2D array of 32_32_32_32 float (4 x 3 x 2 slices) to a buffer.
    let (w, h, d) = (4u32, 3u32, 2u32);
    let texels: Vec<f32> = (0..w * h * d * 4).map(|i| i as f32 * 0.25 - 3.0).collect();
    let dimg = s.upload(&texels).unwrap();
    let timg = s.upload(&tsharp(dimg, 14, 7, 13, w, h, d, w)).unwrap();
    let dout = s.alloc((w * h * d * 16) as u64).unwrap();
    s.dispatch(
        co.kernel("array_to_buffer").unwrap(),
        [w, h, d],
        [4, 3, 1],
        &args(&[timg, dout, (h as u64) << 32 | w as u64]),
    )
    .unwrap();
    assert_eq!(s.read_vec::<f32>(dout, texels.len()).unwrap(), texels);

    // Buffer to a 3D image of 16_16_16_16 float (values exact in f16).
    let din = s.upload(&texels).unwrap();
    let d3 = s.alloc((w * h * d * 8) as u64).unwrap();
    let t3 = s.upload(&tsharp(d3, 12, 7, 10, w, h, d, w)).unwrap();
    s.dispatch(
        co.kernel("buffer_to_3d").unwrap(),
        [w, h, d],
        [4, 3, 1],
        &args(&[din, t3, (h as u64) << 32 | w as u64]),
    )
    .unwrap();
    let halves: Vec<u16> = s.read_vec(d3, texels.len()).unwrap();
    for (i, (&hbits, &want)) in halves.iter().zip(&texels).enumerate() {
        let sign = if hbits & 0x8000 != 0 { -1.0 } else { 1.0 };
        let e = (hbits >> 10 & 0x1f) as i32;
        let m = (hbits & 0x3ff) as f32;
        let v = if e == 0 { sign * m * (-24f32).exp2() } else { sign * (1.0 + m / 1024.0) * ((e - 15) as f32).exp2() };
        assert_eq!(v, want, "component {i}");
    }
}
