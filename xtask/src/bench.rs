//! `cargo xtask bench`: the figures the issues ask for, measured on the real ROCm stack
//! and on the embedding API, printed as one table (benchmarks, never timed assertions in
//! tests). Each measuring program prints `name<TAB>value<TAB>unit` lines; this collects
//! them, tagged with the mode they ran in.

use crate::tasks::{bin_dir, build, root};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One row of the table.
struct Row {
    name: String,
    value: String,
    unit: String,
}

fn row(name: impl Into<String>, value: impl Into<String>, unit: impl Into<String>) -> Row {
    Row { name: name.into(), value: value.into(), unit: unit.into() }
}

/// Median of a set of durations.
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_runs(runs: usize, mut make: impl FnMut() -> Command) -> Result<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut cmd = make();
        let start = Instant::now();
        let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().context("cannot run benchmark")?;
        let t = start.elapsed();
        if !status.success() {
            bail!("{cmd:?} failed with {status}");
        }
        times.push(t);
    }
    Ok(median(times))
}

/// Runs `cmd` and returns the `name<TAB>value<TAB>unit` lines it printed, names prefixed.
fn figures(prefix: &str, mut cmd: Command) -> Result<Vec<Row>> {
    let out = cmd.stderr(Stdio::inherit()).output().with_context(|| format!("cannot run {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed with {}:\n{}", out.status, String::from_utf8_lossy(&out.stdout));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some(row(format!("{prefix}{}", f.next()?), f.next()?, f.next()?))
        })
        .collect())
}

fn out_dir() -> PathBuf {
    root().join("target/bench")
}

/// Compiles `integration/programs/<source>` with `cmd args -o exe source libs`.
fn compile(cmd: &str, args: &[&str], source: &str, name: &str, libs: &[&str]) -> Result<PathBuf> {
    let exe = out_dir().join(name);
    let status = Command::new(cmd)
        .args(args)
        .arg("-o")
        .arg(&exe)
        .arg(root().join("integration/programs").join(source))
        .args(libs)
        .status()
        .with_context(|| format!("cannot run {cmd}"))?;
    if !status.success() {
        bail!("{cmd} failed on {source}");
    }
    Ok(exe)
}

/// `cmd` with the interpreter alone (`ROCJITSU_ENGINE=interp`; the translator is the
/// default).
fn interpreted(mut cmd: Command) -> Command {
    cmd.env("ROCJITSU_ENGINE", "interp");
    cmd
}

fn rocjitsu(args: &[&str], program: &Path, program_args: &[&str]) -> Command {
    let mut c = Command::new(bin_dir().join("rocjitsu"));
    c.args(args).arg("--").arg(program).args(program_args);
    c
}

/// A daemon in the foreground on a private socket, stopped when dropped.
struct Daemon {
    child: std::process::Child,
    dir: PathBuf,
}

impl Daemon {
    fn start() -> Result<Daemon> {
        let dir = out_dir().join(format!("daemon-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        let child = Command::new(bin_dir().join("rocjitsu"))
            .args(["--daemon", "--socket"])
            .arg(dir.join("s.sock"))
            .env("ROCJITSU_RUNTIME_DIR", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(dir.join("s.sock")).is_err() {
            if start.elapsed() > Duration::from_secs(20) {
                bail!("the daemon did not start");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Daemon { child, dir })
    }

    fn attach(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = rocjitsu(&["--attach", "--socket", &self.dir.join("s.sock").to_string_lossy()], program, args);
        c.env("ROCJITSU_RUNTIME_DIR", &self.dir);
        c
    }

    fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn run(args: &[String]) -> Result<()> {
    crate::deps::install()?;
    build()?;
    std::fs::create_dir_all(out_dir())?;
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10);
    let hip =
        |src: &str, name: &str, libs: &[&str]| compile("hipcc", &["--offload-arch=gfx90a", "-O2"], src, name, libs);
    let bench_hip = hip("bench_hip.hip", "bench_hip", &[])?;
    let bench_rocrand = hip("bench_rocrand.hip", "bench_rocrand", &["-lhiprand", "-lrocrand"])?;
    let bench_streams = hip("bench_streams.hip", "bench_streams", &[])?;
    let long_kernel = hip("long_kernel.hip", "long_kernel", &[])?;
    let ioctl_rate = compile("gcc", &["-O2"], "ioctl_rate.c", "ioctl_rate", &[])?;
    let idle = compile("gcc", &["-O2"], "idle_runtime.c", "idle_runtime", &["-lhsa-runtime64"])?;

    let mut rows = Vec::new();
    let rocminfo = Path::new("rocminfo");
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    rows.push(row(
        format!("rocminfo wall, local (median of {runs})"),
        ms(time_runs(runs, || rocjitsu(&[], rocminfo, &[]))?),
        "ms",
    ));
    rows.push(row(
        format!("rocminfo wall, --daemon (median of {runs})"),
        ms(time_runs(runs, || rocjitsu(&["--daemon"], rocminfo, &[]))?),
        "ms",
    ));
    {
        let d = Daemon::start()?;
        rows.push(row(
            format!("rocminfo wall, --attach (median of {runs})"),
            ms(time_runs(runs, || d.attach(rocminfo, &[]))?),
            "ms",
        ));
    }

    let example = || {
        let mut c = Command::new("cargo");
        c.current_dir(root()).args(["run", "--quiet", "--release", "-p", "sim", "--example", "throughput"]);
        c
    };
    rows.extend(figures("", example())?);
    // The same with the interpreter alone (issue 15), side by side.
    rows.extend(figures("interpreter: ", interpreted(example()))?);

    rows.extend(figures("local: ", rocjitsu(&[], &bench_hip, &[]))?);
    rows.extend(figures("daemon: ", rocjitsu(&["--daemon"], &bench_hip, &[]))?);
    // The cost of observing: statistics and a timeline kept (written to a scratch file).
    let observed = out_dir().join("observed.json");
    let observed = observed.to_string_lossy();
    rows.extend(figures("local, --stats: ", rocjitsu(&["--stats-json", &observed], &bench_hip, &[]))?);
    rows.extend(figures("local, --trace: ", rocjitsu(&["--trace", &observed], &bench_hip, &[]))?);
    rows.extend(figures("local, interpreter: ", interpreted(rocjitsu(&[], &bench_hip, &[])))?);
    rows.extend(figures("local: ", rocjitsu(&[], &bench_rocrand, &[]))?);
    rows.extend(figures("local, interpreter: ", interpreted(rocjitsu(&[], &bench_rocrand, &[])))?);
    rows.extend(figures("local: ", rocjitsu(&[], &bench_streams, &["throughput"]))?);
    {
        // Client B's small kernels while client A's long kernel holds the GPU.
        let d = Daemon::start()?;
        rows.extend(figures("daemon, idle GPU: ", d.attach(&bench_streams, &["latency", "300"]))?);
        let mut a = d.attach(&long_kernel, &["2000000000"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let mut launched = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(a.stdout.as_mut().context("client A's stdout")?),
            &mut launched,
        )?;
        if launched.trim() != "launched" {
            bail!("client A did not launch its long kernel: {launched:?}");
        }
        let beside =
            figures("daemon, beside another client's long kernel: ", d.attach(&bench_streams, &["latency", "300"]));
        a.kill()?;
        a.wait()?;
        rows.extend(beside?);
    }

    rows.extend(figures("local: KFD ", rocjitsu(&[], &ioctl_rate, &["1000000"]))?);
    {
        let d = Daemon::start()?;
        rows.extend(figures("daemon, 1 client: KFD ", d.attach(&ioctl_rate, &["100000"]))?);
        let clients: Vec<_> = (0..8)
            .map(|_| {
                let mut c = d.attach(&ioctl_rate, &["50000"]);
                c.stdout(Stdio::piped()).stderr(Stdio::null());
                c.spawn()
            })
            .collect::<std::io::Result<_>>()?;
        let mut total = 0.0;
        for c in clients {
            let out = c.wait_with_output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            total += text
                .lines()
                .find_map(|l| l.strip_prefix("ioctls_per_second\t"))
                .and_then(|v| v.split('\t').next()?.parse::<f64>().ok())
                .unwrap_or(0.0);
        }
        rows.push(row("daemon, 8 clients at once: KFD ioctls_per_second (sum)", format!("{total:.0}"), "/s"));
    }
    {
        let d = Daemon::start()?;
        let idle_rss = d.rss_kib();
        let mut clients: Vec<_> = (0..8)
            .map(|_| d.attach(&idle, &["4"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn())
            .collect::<std::io::Result<_>>()?;
        std::thread::sleep(Duration::from_secs(2));
        rows.push(row("daemon RSS, no clients", format!("{:.1}", idle_rss as f64 / 1024.0), "MiB"));
        rows.push(row("daemon RSS, 8 idle clients", format!("{:.1}", d.rss_kib() as f64 / 1024.0), "MiB"));
        for c in &mut clients {
            c.wait()?;
        }
    }

    // The newer stacks, in their Debian roots: start-up and launch latency.
    std::env::set_var("ROCJITSU_BIN_DIR", bin_dir());
    for stack in [integration::Stack::Trixie, integration::Stack::Sid] {
        let name = stack.name();
        let rocminfo_in_root = || {
            let mut c = stack.rocjitsu();
            c.args(["--", "rocminfo"]);
            c
        };
        rows.push(row(
            format!("{name}: rocminfo wall, local (median of {runs})"),
            ms(time_runs(runs, rocminfo_in_root)?),
            "ms",
        ));
        let exe = stack.hip_program("bench_hip", "gfx90a", &[]);
        let mut local = stack.rocjitsu();
        local.arg("--").arg(&exe);
        rows.extend(figures(&format!("{name} local: "), local)?);
        let mut daemon = stack.rocjitsu();
        daemon.args(["--daemon", "--"]).arg(&exe);
        rows.extend(figures(&format!("{name} daemon: "), daemon)?);
    }

    // rocRAND's own MT19937 jump-ahead kernel (barrier-bound; the sid root's librocrand),
    // with each engine.
    let sid = integration::Stack::Sid.root_dir().context("the sid root")?;
    let librocrand = sid.join("usr/lib/x86_64-linux-gnu/librocrand.so.1");
    let mt19937 = || {
        let mut c = Command::new("cargo");
        c.current_dir(root()).args(["run", "--quiet", "--release", "-p", "sim", "--example", "rocrand_mt19937", "--"]);
        c.arg(&librocrand);
        c
    };
    rows.extend(figures("", mt19937())?);
    rows.extend(figures("interpreter: ", interpreted(mt19937()))?);

    // RCCL (Debian 13's) all-reducing 64 MiB of f32 in one process over 2, 4 and 8 simulated
    // GPUs, beside the same reduction done by a loop on the host.
    let count = (16u64 << 20).to_string();
    let rccl = integration::Stack::Trixie.hip_program("rccl_allreduce", "gfx90a", &["rccl"]);
    let host_reduce = compile("gcc", &["-O2"], "host_reduce.c", "host_reduce", &[])?;
    for (config, gpus) in [("mi210-2gpu", "2"), ("mi210-4gpu", "4"), ("mi210-8gpu", "8")] {
        let mut c = integration::Stack::Trixie.rocjitsu();
        c.args(["--config", config, "--"]).arg(&rccl).args(["single", gpus, &count]);
        rows.extend(figures("trixie local: ", c)?);
        let mut host = Command::new(&host_reduce);
        host.args([gpus, &count]);
        rows.extend(figures("", host)?);
    }

    println!("| benchmark | result | unit |\n|---|---|---|");
    for r in rows {
        println!("| {} | {} | {} |", r.name, r.value, r.unit);
    }
    Ok(())
}
