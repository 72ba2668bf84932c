//! `cargo xtask suites [NAME…] [--filter PATTERN] [--smoke] [--daemon] [--fresh] [--stall SECS]
//! [--sample N] [--jobs N] [--count-slowest]`:
//! the libraries' own test suites (Debian sid's `*-tests` packages, built for gfx90a) under
//! `rocjitsu` on the default MI210 config.
//!
//! Each test program runs in the sid root with its tests in chunks; its progress lines are
//! followed live, so a test that crashes the program or hangs (no output for `--stall`
//! seconds) is recorded as such and the rest of its chunk runs again without it. Every finished
//! test is appended to `target/suites/<mode>/<suite>/results.jsonl` at once: an interrupted run
//! resumes where it stopped (`--fresh` starts again). Each failing test's output is kept in
//! `failures/`. At the end a table: suite, tests, passed, failed, skipped, wall time, and the
//! ten slowest tests; with `--count-slowest` each of those runs once more alone with run
//! statistics (`ROCJITSU_STATS_JSON`) and the table gives its wave-instructions (the input
//! for the speed work).
//!
//! `--jobs N` runs N program runs of a test program side by side: its selection split by
//! gtest's own sharding (`GTEST_TOTAL_SHARDS`) for a first run, every N-th test to a lane
//! otherwise. Most of these programs' time is host code on one thread, so a machine with more
//! cores finishes a full suite that many times sooner.
//!
//! `--smoke` runs the fixed subset CI runs (each suite's `smoke` filter, always fresh) and fails
//! if any of it fails.

mod backend_ops;
mod catalog;
mod gtest;
mod runner;
mod store;

use anyhow::{bail, ensure, Context, Result};
use catalog::{Kind, Suite};
use gtest::Status;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use integration::stack;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;
use store::{Record, Store};

/// Tests per run of a test program after a crash: small enough that another crash costs
/// little, large enough that the program's start-up (HIP and the library initialising) is
/// shared.
const CHUNK: usize = 800;
/// Bytes of test names in one `--gtest_filter` argument (Linux takes at most 128 KiB per
/// argument).
const FILTER_BYTES: usize = 100 << 10;

/// How many of `queue`'s first tests go into the next run.
fn chunk_len(queue: &[String]) -> usize {
    let mut bytes = 0;
    queue
        .iter()
        .take(CHUNK)
        .take_while(|t| {
            bytes += t.len() + 1;
            bytes <= FILTER_BYTES
        })
        .count()
        .max(1)
}

struct Options {
    names: Vec<String>,
    filter: Option<String>,
    smoke: bool,
    daemon: bool,
    fresh: bool,
    stall: Duration,
    /// Run only this many tests of each program's selection, spread evenly over it.
    sample: Option<usize>,
    /// Run the ten slowest tests again, alone, counting their wave-instructions.
    count_slowest: bool,
    /// Program runs of a test program side by side.
    jobs: usize,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        names: Vec::new(),
        filter: None,
        smoke: false,
        daemon: false,
        fresh: false,
        stall: Duration::from_secs(1800),
        sample: None,
        count_slowest: false,
        jobs: 1,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--filter" => o.filter = Some(it.next().context("--filter needs a pattern")?.clone()),
            "--smoke" => o.smoke = true,
            "--sample" => {
                o.sample = Some(it.next().context("--sample needs a count")?.parse().context("--sample needs a count")?)
            }
            "--daemon" => o.daemon = true,
            "--jobs" => {
                o.jobs = it.next().context("--jobs needs a count")?.parse().context("--jobs needs a count")?;
                ensure!(o.jobs > 0, "--jobs needs a count of at least 1");
            }
            "--count-slowest" => o.count_slowest = true,
            "--fresh" => o.fresh = true,
            "--stall" => {
                let s: u64 = it.next().context("--stall needs seconds")?.parse().context("--stall needs seconds")?;
                o.stall = Duration::from_secs(s);
            }
            name if catalog::find(name).is_some() => o.names.push(name.to_string()),
            other => bail!(
                "unknown suite or option {other:?} (suites: {})",
                catalog::SUITES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    if o.names.is_empty() {
        o.names = catalog::SUITES.iter().map(|s| s.name.to_string()).collect();
    }
    Ok(o)
}

/// What every run of a suite shares.
pub struct Ctx {
    root: PathBuf,
    rocjitsu: PathBuf,
    daemon: Option<integration::Daemon>,
    stall: Duration,
    /// Program runs side by side (`--jobs`).
    jobs: usize,
    /// rocFFT's cache of the kernels it compiles at run time, shared by every run of this mode.
    rocfft_kernels: PathBuf,
    /// rocFFT's database of result hashes for its bitwise reproducibility tests, shared by
    /// every run of this mode.
    rocfft_repro: PathBuf,
}

impl Ctx {
    /// `program args…` under `rocjitsu` in the sid root, in this run's mode.
    fn command(&self, program: &str, args: &[String]) -> Command {
        let mut c = stack::bwrap(&self.root);
        // rocBLAS's own gtest listener prints no line per passing test unless asked.
        c.env("GTEST_LISTENER", "PASS_LINE_IN_LOG");
        // rocFFT compiles most of its kernels when a plan is made (hipRTC, on the host), which
        // takes 1-4 s per plan and, without a cache file, is done again by every program run:
        // that, not the simulated GPU, was 90-98 % of rocFFT's and hipFFT's test time. With
        // rocFFT's documented cache each kernel is compiled once; the GPU still runs it every
        // time.
        c.env("ROCFFT_RTC_CACHE_PATH", &self.rocfft_kernels);
        c.args(["--", "env", "PATH=/usr/bin:/bin"]).arg(&self.rocjitsu);
        if let Some(d) = &self.daemon {
            c.arg("--attach").arg("--socket").arg(&d.socket).env("ROCJITSU_RUNTIME_DIR", d.dir.path());
        }
        c.arg("--").arg(program).args(args);
        // rocFFT's `bitwise_repro_test`s (nearly half of its tests) skip without a database
        // ("A database file is required for this test"): with one, a test records its
        // transform's result hash the first time and compares the bits with it in every
        // later run, which checks that the simulated GPU computes the same bits every time.
        if Path::new(program).file_name().is_some_and(|f| f == "rocfft-test") {
            c.arg("--repro-db").arg(&self.rocfft_repro);
        }
        c.env_remove("ROCJITSU_CONFIG");
        c
    }
}

/// One suite's figures for the table.
#[derive(Default)]
pub struct Summary {
    pub name: String,
    pub tests: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Selected tests without a result (an interrupted run).
    pub missing: usize,
    pub seconds: f64,
    /// (seconds, program, test) of every test with a result.
    pub times: Vec<(f64, String, String)>,
    /// More of the suite's own figures, printed after the table.
    pub extra: String,
    /// How to run one of its tests alone (`--count-slowest`).
    pub alone: Option<Alone>,
}

/// The program's path and arguments that run one test, by (program, test) as the results
/// name them.
pub type Alone = Box<dyn Fn(&str, &str) -> Option<(String, Vec<String>)>>;

/// Wave-instructions of tests run alone, by (program, test).
type Counts = std::collections::HashMap<(String, String), u64>;

/// `cargo xtask suites --help`.
const USAGE: &str = "usage: cargo xtask suites [NAME...] [--filter PATTERN] [--sample N] [--smoke] [--daemon]
                          [--fresh] [--stall SECONDS] [--jobs N] [--count-slowest]

Runs the libraries' own test programs (Debian sid's, built for gfx90a) under rocjitsu on the
MI210 config; results in target/suites/<local|daemon>/<suite>/ (results.jsonl: a run resumes
from it; failures/: each failing test's output; table.md). docs/SUITES.md has the details.

  NAME             a suite (all when none is named)
  --filter P       gtest filter (a pattern of test names)
  --sample N       at most N tests of each program's selection, spread evenly over it
  --smoke          each suite's fixed subset (what CI runs)
  --daemon         through rocjitsud instead of in each test process
  --fresh          forget earlier results instead of resuming
  --stall S        kill a program run that reports nothing for S seconds (default 1800)
  --jobs N         N program runs of a test program side by side (default 1)
  --count-slowest  run the ten slowest tests again alone, counting their wave-instructions";

pub fn run(args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}\n\nsuites: {}", catalog::SUITES.iter().map(|s| s.name).collect::<Vec<_>>().join(", "));
        return Ok(());
    }
    let o = parse(args)?;
    let flavor = crate::rootfs::FLAVORS.iter().find(|f| f.name == "sid").expect("sid is a flavor");
    let root = crate::rootfs::ensure(flavor, &stack::roots_dir())?;
    let suites: Vec<&Suite> = o.names.iter().filter_map(|n| catalog::find(n)).collect();
    let packages: Vec<&str> = suites.iter().flat_map(|s| s.packages.iter().copied()).collect();
    crate::rootfs::install_missing(&root, &packages)?;
    crate::tasks::build()?;
    let daemon = if o.daemon {
        // `integration::Daemon` starts the rocjitsu of `$ROCJITSU_BIN_DIR`: the release build.
        std::env::set_var("ROCJITSU_BIN_DIR", crate::tasks::bin_dir());
        let config = integration::config("gfx90a_mi210_kmd.json");
        Some(integration::Daemon::start(config.to_str().context("config path")?))
    } else {
        None
    };
    let mode = if o.daemon { "daemon" } else { "local" };
    let out = stack::target_dir().join("suites").join(if o.smoke { format!("{mode}-smoke") } else { mode.into() });
    std::fs::create_dir_all(&out)?;
    let rocfft_kernels = out.join("rocfft-kernels.db");
    let rocfft_repro = out.join("rocfft-repro.db");
    let ctx = Ctx {
        root,
        rocjitsu: crate::tasks::bin_dir().join("rocjitsu"),
        daemon,
        stall: o.stall,
        jobs: o.jobs,
        rocfft_kernels,
        rocfft_repro,
    };
    let bars = MultiProgress::new();
    let mut summaries = Vec::new();
    for suite in &suites {
        let filter = match (&o.filter, o.smoke) {
            (Some(f), _) => f.clone(),
            (None, true) => suite.smoke.to_string(),
            (None, false) => String::new(),
        };
        let dir = out.join(suite.name);
        let fresh = o.fresh || o.smoke;
        if fresh {
            // Logs of an earlier run would read as this run's.
            for sub in ["logs", "failures"] {
                let _ = std::fs::remove_dir_all(dir.join(sub));
            }
        }
        std::fs::create_dir_all(dir.join("logs"))?;
        std::fs::create_dir_all(dir.join("failures"))?;
        let bar = bars.add(ProgressBar::new(0));
        bar.set_style(
            ProgressStyle::with_template("{prefix:>18} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(suite.name);
        let sample = o.sample.or(if o.smoke { suite.smoke_sample } else { None });
        if let Some(setup) = suite.setup {
            setup(&ctx.root)?;
        }
        let summary = match &suite.kind {
            Kind::Gtest { dir: bin_dir, programs, args } => {
                run_gtest(&ctx, suite, bin_dir, programs, args, &filter, sample, fresh, &dir, &bar)?
            }
            Kind::BackendOps => backend_ops::run(&ctx, &filter, fresh, &dir, &bar)?,
        };
        bar.finish_with_message(format!("{} failed", summary.failed));
        // A line per suite also where no terminal shows the bars (CI logs).
        eprintln!(
            "xtask suites: {}: {} tests, {} passed, {} failed, {} skipped, {} not run, {}",
            summary.name,
            summary.tests,
            summary.passed,
            summary.failed,
            summary.skipped,
            summary.missing,
            duration(summary.seconds)
        );
        summaries.push(summary);
    }
    let counts = if o.count_slowest { count_slowest(&ctx, &summaries, &out)? } else { Counts::new() };
    let table = table(&summaries, &counts);
    println!("{table}");
    std::fs::write(out.join("table.md"), &table)?;
    eprintln!("xtask suites: results in {}", out.display());
    let failed: usize = summaries.iter().map(|s| s.failed).sum();
    if o.smoke && failed > 0 {
        bail!("{failed} test(s) of the smoke subset failed: their output is in {}/*/failures", out.display());
    }
    Ok(())
}

/// The test programs of a gtest suite: `programs`, or every `test*` file in `dir`.
fn gtest_programs(root: &Path, dir: &str, programs: &[&str]) -> Result<Vec<String>> {
    if !programs.is_empty() {
        return Ok(programs.iter().map(|p| format!("{dir}/{p}")).collect());
    }
    let host_dir = root.join(dir.trim_start_matches('/'));
    let mut found: Vec<String> = std::fs::read_dir(&host_dir)
        .with_context(|| format!("cannot list {}", host_dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("test"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    found.sort();
    Ok(found)
}

/// The test names of `program` (cached next to the results; `fresh` lists again).
fn list_tests(ctx: &Ctx, program: &str, args: &[String], cache: &Path, fresh: bool) -> Result<Vec<String>> {
    if !fresh {
        if let Ok(text) = std::fs::read_to_string(cache) {
            return Ok(text.lines().map(str::to_string).collect());
        }
    }
    let mut list_args = args.to_vec();
    list_args.push("--gtest_list_tests".into());
    let out = ctx.command(program, &list_args).output().with_context(|| format!("cannot list {program}"))?;
    let names = gtest::parse_list(&String::from_utf8_lossy(&out.stdout));
    if names.is_empty() {
        bail!(
            "{program} --gtest_list_tests listed no test ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(cache, names.join("\n") + "\n")?;
    Ok(names)
}

fn short(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A file name for a test's log.
fn log_name(program: &str, test: &str) -> String {
    let clean: String =
        test.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    format!("{}__{}.log", short(program), clean.chars().take(180).collect::<String>())
}

#[allow(clippy::too_many_arguments)]
fn run_gtest(
    ctx: &Ctx,
    suite: &Suite,
    bin_dir: &str,
    programs: &[&str],
    args: &[&str],
    filter: &str,
    sample: Option<usize>,
    fresh: bool,
    dir: &Path,
    bar: &ProgressBar,
) -> Result<Summary> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let mut store = Store::open(&dir.join("results.jsonl"), fresh)?;
    let mut work = Vec::new();
    let mut selected_all = Vec::new();
    for program in gtest_programs(&ctx.root, bin_dir, programs)? {
        bar.set_message(format!("listing {}", short(&program)));
        let cache = dir.join(format!("{}.list", short(&program)));
        let names = list_tests(ctx, &program, &args, &cache, fresh)?;
        let mut selected: Vec<String> = names.into_iter().filter(|n| gtest::matches_filter(n, filter)).collect();
        let sampled = sample.is_some_and(|n| selected.len() > n);
        if let Some(n) = sample.filter(|_| sampled) {
            selected = evenly(&selected, n);
        }
        let pending: Vec<String> = selected.iter().filter(|n| !store.has(short(&program), n)).cloned().collect();
        selected_all.extend(selected.iter().map(|n| (short(&program).to_string(), n.clone())));
        bar.inc_length(selected.len() as u64);
        bar.inc((selected.len() - pending.len()) as u64);
        // Nothing of the selection ran yet: the first run takes it whole, by the pattern.
        let whole = pending.len() == selected.len() && !sampled;
        work.push((program, pending, whole));
    }
    for (program, pending, whole) in work {
        let name = short(&program).to_string();
        let accept: HashSet<String> = pending.iter().cloned().collect();
        let runs = Runs {
            ctx,
            program: &program,
            name: name.clone(),
            args: &args,
            filter,
            dir,
            bar,
            store: Mutex::new(&mut store),
            primed: Mutex::new(HashSet::new()),
        };
        let lanes = ctx.jobs.min(pending.len()).max(1);
        if lanes == 1 {
            runs.drain(pending, whole.then_some(Whole { shard: 0, of: 1 }), &accept, 1, "")?;
            continue;
        }
        // Every `lanes`-th test to a lane, so that each gets some of every area.
        let parts: Vec<Vec<String>> =
            (0..lanes).map(|k| pending.iter().skip(k).step_by(lanes).cloned().collect()).collect();
        std::thread::scope(|s| {
            let (runs, accept) = (&runs, &accept);
            let handles: Vec<_> = parts
                .into_iter()
                .enumerate()
                .map(|(k, part)| {
                    let whole = whole.then_some(Whole { shard: k, of: lanes });
                    s.spawn(move || runs.drain(part, whole, accept, lanes, &format!("-lane{k}")))
                })
                .collect();
            handles.into_iter().try_for_each(|h| h.join().expect("a lane of test runs panicked"))
        })?;
        // What a crash left of a shard (gtest splits the selection by its own order): the
        // rest, one run at a time.
        let rest: Vec<String> = {
            let store = runs.store();
            pending.iter().filter(|t| !store.has(&name, t)).cloned().collect()
        };
        runs.drain(rest, None, &accept, 1, "")?;
    }
    let mut summary = summarize(suite.name, &store, &selected_all);
    let by_name: std::collections::HashMap<String, String> =
        gtest_programs(&ctx.root, bin_dir, programs)?.into_iter().map(|p| (short(&p).to_string(), p)).collect();
    summary.alone = Some(Box::new(move |program, test| {
        let mut run_args = args.clone();
        // `-` would start gtest's negative patterns; `?` matches it.
        run_args.push(format!("--gtest_filter={}", test.replace('-', "?")));
        Some((by_name.get(program)?.clone(), run_args))
    }));
    Ok(summary)
}

/// The first run of a selection of which nothing has run yet: by the selection's pattern
/// (the program starts once, which matters where start-up is long: rocBLAS reads its test
/// data for a minute, and gtest need not match a long list), as gtest's shard `shard` of `of`
/// when runs go side by side (`--jobs`).
#[derive(Clone, Copy)]
struct Whole {
    shard: usize,
    of: usize,
}

/// What the runs of one test program share; lanes of runs side by side share it too.
struct Runs<'a> {
    ctx: &'a Ctx,
    program: &'a str,
    name: String,
    args: &'a [String],
    filter: &'a str,
    dir: &'a Path,
    bar: &'a ProgressBar,
    store: Mutex<&'a mut Store>,
    /// Tests that only recorded their reference once ([`recorded_its_reference`]) and run again.
    primed: Mutex<HashSet<String>>,
}

/// Whether a skipped test's output says it skipped only because it recorded its reference:
/// rocFFT's bitwise reproducibility tests, the first time a result is missing from the
/// database (`--repro-db`), store its hash and skip; the next run compares the bits with it.
fn recorded_its_reference(output: &str) -> bool {
    output.contains("FFT result entry added to the repro-db file")
}

impl<'a> Runs<'a> {
    fn store(&self) -> std::sync::MutexGuard<'_, &'a mut Store> {
        self.store.lock().expect("no lane panics while it records")
    }

    /// Runs `queue`'s tests until each has a result: the first run by the pattern when
    /// `whole` says so, then, after a crash, the rest named in chunks. A run may record any
    /// test of `accept` (the program's selection without results: a shard's tests are
    /// gtest's choice). `lanes` runs go on side by side; `tag` tells this lane's logs apart.
    fn drain(
        &self,
        mut queue: Vec<String>,
        mut whole: Option<Whole>,
        accept: &HashSet<String>,
        lanes: usize,
        tag: &str,
    ) -> Result<()> {
        let name = &self.name;
        while !queue.is_empty() {
            let mut run_args = self.args.to_vec();
            let first = whole.take();
            let chunk: Vec<String> = if first.is_some() {
                if !self.filter.is_empty() {
                    run_args.push(format!("--gtest_filter={}", self.filter));
                }
                std::mem::take(&mut queue)
            } else {
                let take = chunk_len(&queue);
                let chunk: Vec<String> = queue.drain(..take).collect();
                // `-` would start gtest's negative patterns; `?` matches it.
                run_args.push(format!("--gtest_filter={}", gtest::filter_for(&chunk).replace('-', "?")));
                chunk
            };
            let shard = first.filter(|w| w.of > 1);
            let n = self.store().runs;
            let xml = self.dir.join("logs").join(format!("{name}-{n}{tag}.xml"));
            let _ = std::fs::remove_file(&xml);
            run_args.push(format!("--gtest_output=xml:{}", xml.display()));
            self.bar.set_message(name.clone());
            let log = self.dir.join("logs").join(format!("{name}-{n}{tag}.log"));
            let mut cmd = self.ctx.command(self.program, &run_args);
            if let Some(w) = shard {
                cmd.env("GTEST_TOTAL_SHARDS", w.of.to_string()).env("GTEST_SHARD_INDEX", w.shard.to_string());
            }
            let in_chunk: HashSet<&String> =
                if shard.is_some() { accept.iter().collect() } else { chunk.iter().collect() };
            // A test that passed or was skipped is recorded as soon as its line is read, so an
            // interrupted run (a long suite in one program run) resumes after it; failures wait
            // for the program's XML report, which carries their messages. A test that only
            // recorded its reference is not recorded: it runs once more, to compare.
            let mut primed_now = HashSet::new();
            let run = runner::run(cmd, &log, self.ctx.stall, gtest::progress, |e| {
                self.bar.inc(1);
                let done = matches!(e.status, Status::Passed | Status::Skipped);
                if done
                    && e.status == Status::Skipped
                    && recorded_its_reference(&e.output)
                    && in_chunk.contains(&e.name)
                    && self.primed.lock().expect("no lane panics while it records").insert(e.name.clone())
                {
                    self.bar.dec(1);
                    primed_now.insert(e.name.clone());
                    return;
                }
                if done && in_chunk.contains(&e.name) {
                    let mut store = self.store();
                    if !store.has(name, &e.name) {
                        let record = Record::Case {
                            program: name.clone(),
                            test: e.name.clone(),
                            status: e.status,
                            seconds: e.seconds,
                        };
                        if let Err(err) = store.record(record) {
                            eprintln!("xtask suites: cannot record {}: {err:#}", e.name);
                        }
                    }
                }
            })?;
            let mut store = self.store();
            let in_chunk: HashSet<&String> = in_chunk.into_iter().filter(|t| !primed_now.contains(*t)).collect();
            self.record_outcome(&mut store, &run, &xml, &in_chunk)?;
            let unfinished: Vec<String> =
                chunk.iter().filter(|t| !store.has(name, t) && !primed_now.contains(*t)).cloned().collect();
            // (After every other test of the queue: the reference is in the database now.)
            queue.extend(primed_now);
            if shard.is_none() && unfinished.len() < chunk.len() {
                // The rest of the chunk runs again, without the test that stopped it.
                queue.splice(0..0, unfinished);
            } else if shard.is_none() {
                // Nothing ran: the program cannot start these tests.
                let text = format!("{}: no test of this run started ({})\n\n{}", self.program, run.stop, run.tail);
                for t in &unfinished {
                    std::fs::write(self.dir.join("failures").join(log_name(self.program, t)), &text)?;
                    store.record(Record::Case {
                        program: name.clone(),
                        test: t.clone(),
                        status: Status::Crashed,
                        seconds: 0.0,
                    })?;
                    self.bar.inc(1);
                }
            }
            // A shard's unfinished tests are left to the runs after every shard's.
            store.record(Record::Run {
                program: name.clone(),
                tests: chunk.len(),
                seconds: run.seconds,
                stop: run.stop.to_string(),
                lanes,
            })?;
        }
        Ok(())
    }

    /// Records how the tests of `in_chunk` that `run` reached ended: a crash or hang as the
    /// progress lines saw it, otherwise gtest's XML report (with its failure messages).
    fn record_outcome(
        &self,
        store: &mut Store,
        run: &runner::Run,
        xml: &Path,
        in_chunk: &HashSet<&String>,
    ) -> Result<()> {
        let (name, program) = (&self.name, self.program);
        let reports = std::fs::read_to_string(xml).ok().and_then(|t| gtest::parse_xml(&t).ok()).unwrap_or_default();
        for e in run.ended.iter().chain(run.running.iter()) {
            if !in_chunk.contains(&e.name) || store.has(name, &e.name) {
                continue;
            }
            let report = reports.get(&e.name);
            let status = match (e.status, report) {
                (Status::Crashed | Status::Hung, _) => e.status,
                (_, Some(r)) => r.status,
                (s, None) => s,
            };
            if status.is_failure() {
                let mut text = format!("{program} {}\n{status:?} after {:.1} s\n\n{}", e.name, e.seconds, e.output);
                if let Some(r) = report.filter(|r| !r.message.is_empty()) {
                    text.push_str(&format!("\n--- gtest's failure messages ---\n{}\n", r.message));
                }
                if status != Status::Failed {
                    text.push_str(&format!("\n--- the program's last lines ---\n{}", run.tail));
                }
                std::fs::write(self.dir.join("failures").join(log_name(program, &e.name)), text)?;
            }
            store.record(Record::Case { program: name.clone(), test: e.name.clone(), status, seconds: e.seconds })?;
        }
        if run.running.is_some() {
            self.bar.inc(1);
        }
        // Tests the XML report has and the progress lines did not (a listener that prints no
        // line per test, as rocBLAS's default one does).
        for t in in_chunk {
            if let Some(r) = reports.get(*t).filter(|_| !store.has(name, t)) {
                if r.status.is_failure() {
                    let text = format!("{program} {t}\n{:?} after {:.1} s\n\n{}\n", r.status, r.seconds, r.message);
                    std::fs::write(self.dir.join("failures").join(log_name(program, t)), text)?;
                }
                store.record(Record::Case {
                    program: name.clone(),
                    test: (*t).clone(),
                    status: r.status,
                    seconds: r.seconds,
                })?;
                self.bar.inc(1);
            }
        }
        Ok(())
    }
}

/// `n` of `items`, spread evenly from the first on (a sample across every area of a suite,
/// whose tests are listed area by area).
fn evenly(items: &[String], n: usize) -> Vec<String> {
    (0..n).map(|i| items[i * items.len() / n].clone()).collect()
}

/// The table's figures for `selected` tests of `store`.
fn summarize(name: &str, store: &Store, selected: &[(String, String)]) -> Summary {
    let mut s =
        Summary { name: name.to_string(), tests: selected.len(), seconds: store.run_seconds, ..Default::default() };
    for (program, test) in selected {
        match store.cases.get(&(program.clone(), test.clone())) {
            Some((status, seconds)) => {
                match status {
                    Status::Passed => s.passed += 1,
                    Status::Skipped => s.skipped += 1,
                    _ => s.failed += 1,
                }
                s.times.push((*seconds, program.clone(), test.clone()));
            }
            None => s.missing += 1,
        }
    }
    s
}

/// The ten slowest tests.
fn slowest(summaries: &[Summary]) -> Vec<(f64, String, String, &str)> {
    let mut times: Vec<(f64, String, String, &str)> = summaries
        .iter()
        .flat_map(|s| s.times.iter().map(|(t, p, n)| (*t, p.clone(), n.clone(), s.name.as_str())))
        .collect();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    times.truncate(10);
    times
}

/// Runs each of the ten slowest tests alone with run statistics and sums the
/// wave-instructions of every kernel it dispatched.
fn count_slowest(ctx: &Ctx, summaries: &[Summary], out: &Path) -> Result<Counts> {
    let dir = out.join("stats");
    std::fs::create_dir_all(&dir)?;
    let mut counts = Counts::new();
    for (_, program, test, suite) in slowest(summaries) {
        let alone = summaries.iter().find(|s| s.name == suite).and_then(|s| s.alone.as_ref());
        let Some((path, run_args)) = alone.and_then(|alone| alone(&program, &test)) else {
            continue;
        };
        let json = dir.join(log_name(&program, &test).replace(".log", ".json"));
        let _ = std::fs::remove_file(&json);
        let mut cmd = ctx.command(&path, &run_args);
        cmd.env("ROCJITSU_STATS_JSON", &json).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        eprintln!("xtask suites: counting the wave-instructions of {program} {test}");
        cmd.status().with_context(|| format!("cannot run {program}"))?;
        let Ok(text) = std::fs::read_to_string(&json) else { continue };
        let report: serde_json::Value = serde_json::from_str(&text).context("the statistics are JSON")?;
        let total = report["kernels"]
            .as_array()
            .map(|ks| ks.iter().filter_map(|k| k["wave_instructions"].as_u64()).sum())
            .unwrap_or(0);
        counts.insert((program, test), total);
    }
    Ok(counts)
}

fn table(summaries: &[Summary], counts: &Counts) -> String {
    let mut t = String::from(
        "| suite | tests | passed | failed | skipped | not run | pass rate | wall time |\n|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for s in summaries {
        let ran = s.passed + s.failed;
        let rate = if ran == 0 { "-".to_string() } else { format!("{:.2}%", 100.0 * s.passed as f64 / ran as f64) };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            s.name,
            s.tests,
            s.passed,
            s.failed,
            s.skipped,
            s.missing,
            rate,
            duration(s.seconds)
        ));
    }
    for s in summaries {
        t.push_str(&s.extra);
    }
    t.push_str(
        "\nThe ten slowest tests (wave-instructions: the test run again alone with `--count-slowest`):\n\n\
         | seconds | wave-instructions | suite | program | test |\n|--:|--:|---|---|---|\n",
    );
    for (secs, program, test, suite) in slowest(summaries) {
        let n = counts.get(&(program.clone(), test.clone())).map_or(String::new(), |n| n.to_string());
        t.push_str(&format!("| {secs:.1} | {n} | {suite} | {program} | {test} |\n"));
    }
    t
}

fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rocfft_test_that_only_stored_its_reference_is_told_from_other_skips() {
        // rocfft-test 6.4's output (clients/tests/bitwise_repro/bitwise_repro_test.cpp).
        let stored = "clients/tests/bitwise_repro/bitwise_repro_test.cpp:208: Skipped\n\
                      FFT result entry added to the repro-db file. Previously stored reference entry not found. \n";
        let no_database = "clients/tests/bitwise_repro/bitwise_repro_test.cpp:172: Skipped\n\
                           A database file is required for this test.\n";
        assert!(recorded_its_reference(stored));
        assert!(!recorded_its_reference(no_database));
        assert!(!recorded_its_reference(""));
    }
}
