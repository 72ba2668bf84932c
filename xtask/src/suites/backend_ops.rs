//! llama.cpp's `test-backend-ops`: every ggml operation run on the HIP backend (`ROCm0`, i.e.
//! our simulated MI210) and compared with the CPU backend, each operation run in parts of a
//! few hundred cases (by their leading parameters) so a crash costs one part and an
//! interrupted run resumes by part.

use super::gtest::{Progress, Status};
use super::store::{Record, Store};
use super::{runner, Ctx, Summary};
use anyhow::{Context, Result};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

const PROGRAM: &str = "/usr/libexec/x86_64-linux-gnu/llama.cpp-tests/test-backend-ops";
const BACKEND: &str = "ROCm0";

/// Without the terminal colour escapes the program prints.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // `ESC [ … letter`
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One case's result line: `  OP(params): OK`, `…: [OP] NMSE = … > … FAIL`, or
/// `…: not supported [ROCm0]`. Lines of other kinds (banners, totals) give `None`.
pub fn case(line: &str) -> Option<(String, Status)> {
    let line = plain(line);
    let body = line.strip_prefix("  ")?.trim_end();
    let open = body.find('(')?;
    if open == 0 || !body[..open].bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        return None;
    }
    let (name, verdict) = body.rsplit_once("): ")?;
    let status = if verdict.contains("not supported") {
        Status::Skipped
    } else if verdict.ends_with("FAIL") {
        Status::Failed
    } else if verdict.ends_with("OK") {
        Status::Passed
    } else {
        return None;
    };
    Some((format!("{name})"), status))
}

/// [`runner::Parser`] for the program: each case is reported when it ends; the backend's
/// memory line is the last before its first case (a case's time is then its own, not the
/// program's start-up).
fn progress(line: &str) -> Option<Progress<'_>> {
    if line.starts_with("  Device memory:") {
        return Some(Progress::Ready);
    }
    // The runner needs the name borrowed from the line: find it again in the raw line (the
    // colour escapes come after the name).
    let (name, status) = case(line)?;
    let at = line.find(&name)?;
    Some(Progress::Ended(&line[at..at + name.len()], status))
}

/// The type a case runs in: its `type=`, `type_a=` or (attention's K cache) `type_K=`
/// parameter (`other` for operations without one).
pub fn case_type(case: &str) -> &str {
    let params = case.split_once('(').map_or("", |(_, p)| p);
    params
        .split(',')
        .find_map(|p| {
            p.strip_prefix("type=").or_else(|| p.strip_prefix("type_a=")).or_else(|| p.strip_prefix("type_K="))
        })
        .unwrap_or("other")
}

fn list_ops(ctx: &Ctx, cache: &Path, fresh: bool) -> Result<Vec<String>> {
    if !fresh {
        if let Ok(text) = std::fs::read_to_string(cache) {
            return Ok(text.lines().map(str::to_string).collect());
        }
    }
    let out = ctx.command(PROGRAM, &["--list-ops".into()]).output().context("cannot list ggml's operations")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let ops: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(str::trim)
        .filter(|op| !op.is_empty() && op.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
        .map(str::to_string)
        .collect();
    anyhow::ensure!(!ops.is_empty(), "test-backend-ops --list-ops listed nothing ({})", out.status);
    std::fs::write(cache, ops.join("\n") + "\n")?;
    Ok(ops)
}

pub fn run(ctx: &Ctx, filter: &str, fresh: bool, dir: &Path, bar: &ProgressBar) -> Result<Summary> {
    let mut store = Store::open(&dir.join("results.jsonl"), fresh)?;
    let ops = list_ops(ctx, &dir.join("ops.list"), fresh)?;
    let selected: Vec<String> = ops.into_iter().filter(|op| super::gtest::matches_filter(op, filter)).collect();
    bar.set_length(selected.len() as u64);
    for op in &selected {
        // Earlier runs recorded whole operations under the operation's name; one that ended
        // abnormally (a crash, the OOM killer) stopped short of its later cases, so it runs
        // again in parts, and their records supersede it.
        if store.ran(op) && !stopped_short(&store, op) {
            bar.inc(1);
            continue;
        }
        for part in parts(ctx, op)? {
            let key = part_key(op, &part.prefix);
            // A part whose last run stopped short (the OOM killer, a crash, an interruption)
            // resumes after the cases it recorded, the one that stopped it included.
            let done: Vec<&str> = part.cases.iter().map(String::as_str).filter(|c| store.has(&key, c)).collect();
            if store.ran(&key) && (ended_normally(&store, &key) || done.len() == part.cases.len()) {
                continue;
            }
            bar.set_message(key.clone());
            run_part(ctx, &mut store, dir, op, &part, &key, &done)?;
        }
        bar.inc(1);
    }
    let cases: Vec<(String, String)> = store
        .cases
        .keys()
        .filter(|(key, test)| {
            selected.iter().any(|op| op == op_of(key)) && !superseded(&store, key) && !stale_stop(&store, key, test)
        })
        .cloned()
        .collect();
    let mut summary = super::summarize("llama-backend-ops", &store, &cases);
    summary.extra = by_type(&store, &cases);
    summary.alone = Some(Box::new(|_, case| Some((PROGRAM.to_string(), alone_args(case)))));
    Ok(summary)
}

/// The arguments that run `case` (`OP(params)`) alone on the backend.
fn alone_args(case: &str) -> Vec<String> {
    let (op, params) = case.split_once('(').unwrap_or((case, ""));
    let params = params.strip_suffix(')').unwrap_or(params);
    ["test", "-b", BACKEND, "-o", &format!("^{op}$"), "-p", &format!("^{}$", regex_escape(params))]
        .map(String::from)
        .to_vec()
}

/// Runs the cases of `part` (all of `op`'s when its prefix is empty) but those in `skip`,
/// recording each under `key`. When the program stops short, the case it was running (the
/// first of the part's that neither ended nor was skipped: the program runs them in the
/// order `support` lists them) is recorded as the one that stopped it, unless a person
/// interrupted the run (SIGINT, SIGTERM): then it runs again next time.
fn run_part(ctx: &Ctx, store: &mut Store, dir: &Path, op: &str, part: &Part, key: &str, skip: &[&str]) -> Result<()> {
    let log = dir.join("logs").join(format!("{}.log", key.replace(['/', ' '], "_")));
    let mut args = vec!["test".into(), "-b".into(), BACKEND.into(), "-o".into(), format!("^{op}$")];
    if !part.prefix.is_empty() || !skip.is_empty() {
        args.extend(["-p".into(), part_pattern(&part.prefix, skip)]);
    }
    let run = runner::run(ctx.command(PROGRAM, &args), &log, ctx.stall, progress, |_| {})?;
    for e in &run.ended {
        if e.status == Status::Failed {
            let name = super::log_name(op, &e.name);
            std::fs::write(dir.join("failures").join(name), format!("{}\n{}", e.name, plain(&e.output)))?;
        }
        store.record(Record::Case {
            program: key.to_string(),
            test: e.name.clone(),
            status: e.status,
            seconds: e.seconds,
        })?;
    }
    // Exit 0 is a pass, 1 a failure of some case; anything else stopped the program.
    let normal = matches!(&run.stop, runner::Stop::Exited(s) if matches!(s.code(), Some(0 | 1)));
    if !normal {
        let interrupted = matches!(&run.stop, runner::Stop::Exited(s) if matches!(s.signal(), Some(2 | 15)));
        let ended: Vec<&str> = run.ended.iter().map(|e| e.name.as_str()).collect();
        let why = format!("the program stopped: {}", run.stop);
        match fatal_case(&part.cases, skip, &ended) {
            _ if interrupted => {}
            Some(case) => {
                std::fs::write(
                    dir.join("failures").join(super::log_name(op, case)),
                    format!("{case} ({why})\n{}", plain(&run.tail)),
                )?;
                store.record(Record::Case {
                    program: key.to_string(),
                    test: case.to_string(),
                    status: Status::Crashed,
                    seconds: 0.0,
                })?;
            }
            None => {
                let test = format!("{key} ({why})");
                std::fs::write(
                    dir.join("failures").join(super::log_name(key, "stopped")),
                    format!("{test}\n{}", plain(&run.tail)),
                )?;
                store.record(Record::Case { program: key.to_string(), test, status: Status::Crashed, seconds: 0.0 })?;
            }
        }
    }
    store.record(Record::Run {
        program: key.to_string(),
        tests: run.ended.len(),
        seconds: run.seconds,
        stop: run.stop.to_string(),
        lanes: 1,
    })
}

/// The case a run that stopped short was running: the first of `cases` (in the program's
/// order) it neither skipped nor finished; `None` if it finished them all.
fn fatal_case<'a>(cases: &'a [String], skipped: &[&str], ended: &[&str]) -> Option<&'a str> {
    cases.iter().map(String::as_str).find(|c| !skipped.contains(c) && !ended.contains(c))
}

/// The `-p` pattern (an ECMAScript regular expression over a case's parameters) of the cases
/// whose parameters start with `prefix` (all, when it is empty), but the cases named in
/// `skip` (`OP(params)`).
fn part_pattern(prefix: &str, skip: &[&str]) -> String {
    let params = |name: &'_ str| -> String {
        let inside = name.split_once('(').map_or("", |(_, p)| p);
        regex_escape(inside.strip_suffix(')').unwrap_or(inside))
    };
    let mut pattern = String::from("^");
    if !skip.is_empty() {
        let names: Vec<String> = skip.iter().map(|n| params(n)).collect();
        pattern += &format!("(?!(?:{})$)", names.join("|"));
    }
    if !prefix.is_empty() {
        pattern += &format!("{}(,|$)", regex_escape(prefix));
    }
    pattern
}

/// Whether the latest run recorded for `key` ended normally (exit 0 or 1).
fn ended_normally(store: &Store, key: &str) -> bool {
    store.last_stop.get(key).is_some_and(|stop| stop == "exit 0" || stop == "exit 1")
}

/// Whether `test` is the record of `key`'s program stopping short that a later run, which
/// ended normally, has made out of date.
fn stale_stop(store: &Store, key: &str, test: &str) -> bool {
    test.starts_with(&format!("{key} (the program stopped")) && ended_normally(store, key)
}

/// The most cases a part holds unless they cannot be told apart by their parameters. A part
/// is what a crash or an interrupted run loses, and a case of `FLASH_ATTN_EXT` takes seconds.
/// It is above `MUL_MAT`'s largest type (363 cases of `type_a=f16`), so the parts earlier
/// runs recorded keep their names.
const PART_LIMIT: usize = 400;

/// One part of an operation's cases: the parameters they share at their start (empty: all
/// of the operation's) and the cases' names (`OP(params)`, as test mode reports them), in
/// the order the program runs them.
#[derive(Debug, PartialEq)]
struct Part {
    prefix: String,
    cases: Vec<String>,
}

/// The parts an operation's cases run in, as `support` mode lists the cases (quickly: it runs
/// nothing): see [`split_into_parts`]. An operation whose cases have no parameter runs whole
/// (one part without a prefix).
fn parts(ctx: &Ctx, op: &str) -> Result<Vec<Part>> {
    let args = vec!["support".into(), "-b".into(), BACKEND.into(), "-o".into(), format!("^{op}$")];
    let out = ctx.command(PROGRAM, &args).output().with_context(|| format!("cannot list the cases of {op}"))?;
    let cases = support_cases(op, &String::from_utf8_lossy(&out.stdout));
    let parts = split_into_parts(&cases, PART_LIMIT);
    Ok(if parts.is_empty() {
        vec![Part { prefix: String::new(), cases: cases.into_iter().map(|(name, _)| name).collect() }]
    } else {
        parts
    })
}

/// `op`'s cases in `text` (one line per case, in order): each one's name (`OP(params)`) and
/// its parameters, split at the commas outside brackets (`ne=[10,5,3,1]` is one parameter).
fn support_cases(op: &str, text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(|line| {
            let line = plain(line);
            let params = line.trim_start().strip_prefix(op)?.strip_prefix('(')?;
            let params = params.rsplit_once(')').map_or(params, |(inside, _)| inside);
            let mut list = Vec::new();
            let (mut depth, mut start) = (0i32, 0);
            for (at, c) in params.char_indices() {
                match c {
                    '[' | '(' => depth += 1,
                    ']' | ')' => depth -= 1,
                    ',' if depth == 0 => {
                        list.push(params[start..at].to_string());
                        start = at + 1;
                    }
                    _ => {}
                }
            }
            list.push(params[start..].to_string());
            list.retain(|p| !p.is_empty());
            Some((format!("{op}({params})"), list))
        })
        .filter(|(_, list)| !list.is_empty())
        .collect()
}

/// Parts of at most `limit` cases, each named by the parameters its cases share at their
/// start (`type_a=q4_0`, `hsk=64,hsv=64,nh=4`): the cases are grouped by their first
/// parameter, and a group larger than `limit` by its next one, and so on, in the order the
/// values first appear. Cases that have the same parameters stay in one part. (A part's
/// name selects every case that starts with it, so the split assumes what ggml's tests do:
/// the cases of one operation list the same parameters.)
fn split_into_parts(cases: &[(String, Vec<String>)], limit: usize) -> Vec<Part> {
    type Case = (String, Vec<String>);
    fn split(group: Vec<&Case>, depth: usize, limit: usize, parts: &mut Vec<Part>) {
        let longest = group.iter().map(|c| c.1.len()).max().unwrap_or(0);
        if depth > 0 && (group.len() <= limit || depth >= longest) {
            let first = &group[0].1;
            let prefix = first[..depth.min(first.len())].join(",");
            parts.push(Part { prefix, cases: group.iter().map(|c| c.0.clone()).collect() });
            return;
        }
        let mut groups: Vec<(&str, Vec<&Case>)> = Vec::new();
        for case in group {
            let value = case.1.get(depth).map_or("", String::as_str);
            match groups.iter_mut().find(|(v, _)| *v == value) {
                Some((_, members)) => members.push(case),
                None => groups.push((value, vec![case])),
            }
        }
        for (_, members) in groups {
            split(members, depth + 1, limit, parts);
        }
    }
    let mut parts = Vec::new();
    if !cases.is_empty() {
        split(cases.iter().collect(), 0, limit, &mut parts);
    }
    parts
}

/// Whether the whole-operation run of `op` recorded in `store` ended abnormally.
fn stopped_short(store: &Store, op: &str) -> bool {
    let stopped = format!("{op} (the program stopped");
    store.cases.keys().any(|(key, test)| key == op && test.starts_with(&stopped))
}

/// Whether `key` names a whole operation whose cases also ran in parts (the parts' records
/// then count instead).
fn superseded(store: &Store, key: &str) -> bool {
    let prefix = format!("{key} [");
    op_of(key) == key && store.ran.iter().any(|k| k.starts_with(&prefix))
}

/// The store's name for a part's runs and cases: `OP [its parameters]`, or `OP` alone.
fn part_key(op: &str, part: &str) -> String {
    if part.is_empty() {
        op.to_string()
    } else {
        format!("{op} [{part}]")
    }
}

/// The operation of a store key ([`part_key`]).
fn op_of(key: &str) -> &str {
    key.split_once(" [").map_or(key, |(op, _)| op)
}

/// `text` as a literal in the ECMAScript regular expression `-p` takes.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Passed / failed / not supported per type among `cases` (the summary's), the types the
/// issue names first.
fn by_type(store: &Store, cases: &[(String, String)]) -> String {
    let mut counts: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for (key, case) in cases {
        let Some((status, _)) = store.cases.get(&(key.clone(), case.clone())) else { continue };
        let c = counts.entry(case_type(case)).or_default();
        match status {
            Status::Passed => c[0] += 1,
            Status::Skipped => c[2] += 1,
            _ => c[1] += 1,
        }
    }
    let mut t =
        String::from("\ntest-backend-ops by type:\n\n| type | passed | failed | not supported |\n|---|--:|--:|--:|\n");
    let first = ["f32", "f16", "q8_0", "q4_0"];
    let order = first.iter().copied().chain(counts.keys().copied().filter(|k| !first.contains(k)).collect::<Vec<_>>());
    for ty in order {
        if let Some([p, f, s]) = counts.get(ty) {
            t.push_str(&format!("| {ty} | {p} | {f} | {s} |\n"));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_lines_give_name_and_verdict() {
        let ok = "  ADD(type=f32,ne=[1,1,8,1],nr=[1,1,1,1],nf=1): \u{1b}[1;32mOK\u{1b}[0m\n";
        assert_eq!(case(ok), Some(("ADD(type=f32,ne=[1,1,8,1],nr=[1,1,1,1],nf=1)".into(), Status::Passed)));
        assert_eq!(progress(ok), Some(Progress::Ended("ADD(type=f32,ne=[1,1,8,1],nr=[1,1,1,1],nf=1)", Status::Passed)));
        assert_eq!(progress("  Device memory: 65520 MB (65520 MB free)\n"), Some(Progress::Ready));
        let fail = "  MUL_MAT(type_a=q4_0,type_b=f32,m=16): [MUL_MAT] NMSE = 0.012 > 0.0005 \u{1b}[1;31mFAIL\u{1b}[0m";
        assert_eq!(case(fail).unwrap().1, Status::Failed);
        let unsupported = "  FLASH_ATTN_EXT(hsk=40,type_KV=q4_1): not supported [ROCm0] ";
        assert_eq!(case(unsupported).unwrap().1, Status::Skipped);
        for other in [
            "  15/15 tests passed",
            "  Backend ROCm0: \u{1b}[1;32mOK\u{1b}[0m",
            "Backend 1/2: ROCm0",
            "  Device description: AMD",
        ] {
            assert_eq!(case(other), None, "{other}");
        }
    }

    /// The prefixes of `parts`.
    fn prefixes(parts: &[Part]) -> Vec<&str> {
        parts.iter().map(|p| p.prefix.as_str()).collect()
    }

    #[test]
    fn an_operation_runs_in_parts_by_its_first_parameter() {
        let support = "Testing 2 devices\n\
            \x20 MUL_MAT(type_a=f32,type_b=f32,m=16): \u{1b}[1;32mSUPPORTED\u{1b}[0m\n\
            \x20 MUL_MAT_ID(type_a=f32,type_b=f32): SUPPORTED\n\
            \x20 MUL_MAT(type_a=q4_0,type_b=f32,m=16): SUPPORTED\n\
            \x20 MUL_MAT(type_a=f32,type_b=f16,m=1): NOT SUPPORTED\n\
            \x20 MUL_MAT(type_a=q4_0,type_b=f16,m=1): SUPPORTED\n";
        let cases = support_cases("MUL_MAT", support);
        assert_eq!(cases.len(), 4, "MUL_MAT_ID's line is not MUL_MAT's");
        assert_eq!(
            split_into_parts(&cases, 2),
            [
                Part {
                    prefix: "type_a=f32".into(),
                    cases: vec![
                        "MUL_MAT(type_a=f32,type_b=f32,m=16)".into(),
                        "MUL_MAT(type_a=f32,type_b=f16,m=1)".into()
                    ]
                },
                Part {
                    prefix: "type_a=q4_0".into(),
                    cases: vec![
                        "MUL_MAT(type_a=q4_0,type_b=f32,m=16)".into(),
                        "MUL_MAT(type_a=q4_0,type_b=f16,m=1)".into()
                    ]
                },
            ],
            "each part lists its cases by the names test mode reports, in the program's order"
        );
        assert!(split_into_parts(&support_cases("ARGMAX", ""), 2).is_empty());
        assert_eq!(
            support_cases("ROPE", "  ROPE(ne=[10,5,3,1],mode=0): SUPPORTED"),
            [("ROPE(ne=[10,5,3,1],mode=0)".to_string(), vec!["ne=[10,5,3,1]".to_string(), "mode=0".to_string()])]
        );
        assert_eq!(part_key("MUL_MAT", "type_a=q4_0"), "MUL_MAT [type_a=q4_0]");
        assert_eq!(part_key("ARGMAX", ""), "ARGMAX");
        assert_eq!(op_of("MUL_MAT [type_a=q4_0]"), "MUL_MAT");
        assert_eq!(op_of("MUL_MAT_ID"), "MUL_MAT_ID");
        assert_eq!(regex_escape("ne=[10"), "ne=\\[10");
        assert_eq!(regex_escape("a.b|c+d*e?(f){g}^$\\"), "a\\.b\\|c\\+d\\*e\\?\\(f\\)\\{g\\}\\^\\$\\\\");
        assert_eq!(part_pattern("type_a=q4_0", &[]), "^type_a=q4_0(,|$)");
        assert_eq!(part_pattern("", &[]), "^");
    }

    /// A first parameter shared by more cases than a part holds is split by the next
    /// parameters, as deep as it takes; cases with the same parameters stay together.
    #[test]
    fn a_large_part_splits_by_its_next_parameters() {
        let line = |params: &str| format!("  FLASH_ATTN_EXT({params}): SUPPORTED\n");
        let text: String = [
            "hsk=64,hsv=64,nh=4,nr23=[4,1],kv=512",
            "hsk=64,hsv=64,nh=4,nr23=[4,1],kv=1024",
            "hsk=64,hsv=64,nh=4,nr23=[1,1],kv=512",
            "hsk=64,hsv=64,nh=8,nr23=[4,1],kv=512",
            "hsk=128,hsv=128,nh=4,nr23=[4,1],kv=512",
            "hsk=40,hsv=40,nh=4,nr23=[4,1],kv=512",
            "hsk=40,hsv=40,nh=4,nr23=[4,1],kv=512",
            "hsk=40,hsv=40,nh=4,nr23=[4,1],kv=512",
        ]
        .iter()
        .map(|p| line(p))
        .collect();
        let cases = support_cases("FLASH_ATTN_EXT", &text);
        assert_eq!(
            prefixes(&split_into_parts(&cases, 2)),
            [
                "hsk=64,hsv=64,nh=4,nr23=[4,1]",
                "hsk=64,hsv=64,nh=4,nr23=[1,1]",
                "hsk=64,hsv=64,nh=8",
                "hsk=128",
                "hsk=40,hsv=40,nh=4,nr23=[4,1],kv=512",
            ]
        );
        assert_eq!(split_into_parts(&cases, 2)[4].cases.len(), 3, "same parameters, one part");
        assert_eq!(
            prefixes(&split_into_parts(&cases, 8)),
            ["hsk=64", "hsk=128", "hsk=40"],
            "the first parameter always splits"
        );
        // The pattern a part runs with: a bracketed value is one parameter, escaped.
        assert_eq!(part_pattern("hsk=64,nr23=[4,1]", &[]), "^hsk=64,nr23=\\[4,1\\](,|$)");
    }

    /// A part that stopped short runs again without the cases it recorded; the case it was
    /// running when it stopped (the first neither recorded nor finished, in the program's
    /// order) is the one recorded as having stopped it.
    #[test]
    fn a_part_that_stopped_short_resumes_after_its_recorded_cases() {
        let cases: Vec<String> =
            ["MUL_MAT(type_a=q4_0,n=1)", "MUL_MAT(type_a=q4_0,n=8400000,nr=[2,1])", "MUL_MAT(type_a=q4_0,n=2)"]
                .map(String::from)
                .to_vec();
        assert_eq!(fatal_case(&cases, &[], &["MUL_MAT(type_a=q4_0,n=1)"]), Some(cases[1].as_str()));
        assert_eq!(fatal_case(&cases, &[&cases[0], &cases[1]], &[]), Some(cases[2].as_str()));
        assert_eq!(fatal_case(&cases, &[&cases[0]], &[&cases[1], &cases[2]]), None, "all ran: a crash at exit");
        assert_eq!(
            part_pattern("type_a=q4_0", &[&cases[0], &cases[1]]),
            "^(?!(?:type_a=q4_0,n=1|type_a=q4_0,n=8400000,nr=\\[2,1\\])$)type_a=q4_0(,|$)"
        );
        assert_eq!(part_pattern("", &[&cases[0]]), "^(?!(?:type_a=q4_0,n=1)$)", "a whole operation resumes too");
    }

    /// A whole-operation run that the OOM killer stopped runs again in parts, and the parts'
    /// records replace its own; one that ended normally stays as it is.
    #[test]
    fn an_operation_stopped_short_runs_again_in_parts_that_supersede_it() {
        let path = std::env::temp_dir().join(format!("rocjitsu-backend-ops-{}.jsonl", std::process::id()));
        let mut store = Store::open(&path, true).unwrap();
        let case = |program: &str, test: &str, status| Record::Case {
            program: program.into(),
            test: test.into(),
            status,
            seconds: 0.0,
        };
        let run = |program: &str, stop: &str| Record::Run {
            program: program.into(),
            tests: 1,
            seconds: 1.0,
            stop: stop.into(),
            lanes: 1,
        };
        for record in [
            case("ADD", "ADD(type=f32)", Status::Passed),
            run("ADD", "exit 0"),
            case("MUL_MAT", "MUL_MAT(type_a=f32,m=16)", Status::Passed),
            case("MUL_MAT", "MUL_MAT (the program stopped: exit 137)", Status::Crashed),
            run("MUL_MAT", "exit 137"),
        ] {
            store.record(record).unwrap();
        }
        assert!(!stopped_short(&store, "ADD"));
        assert!(stopped_short(&store, "MUL_MAT"));
        assert!(!superseded(&store, "MUL_MAT"), "no part has run yet");
        store.record(case("MUL_MAT [type_a=f32]", "MUL_MAT(type_a=f32,m=16)", Status::Passed)).unwrap();
        store.record(run("MUL_MAT [type_a=f32]", "exit 0")).unwrap();
        assert!(superseded(&store, "MUL_MAT"));
        assert!(!superseded(&store, "MUL_MAT [type_a=f32]"));
        assert!(!superseded(&store, "ADD"));
        // A part stopped by the OOM killer (recorded before parts named the case that stopped
        // them) counts as failed until a resumed run ends normally.
        let part = "MUL_MAT [type_a=q4_0]";
        let stopped = "MUL_MAT [type_a=q4_0] (the program stopped: exit 137)";
        store.record(case(part, stopped, Status::Crashed)).unwrap();
        store.record(run(part, "exit 137")).unwrap();
        assert!(!ended_normally(&store, part) && !stale_stop(&store, part, stopped));
        store.record(run(part, "exit 0")).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(ended_normally(&store, part) && stale_stop(&store, part, stopped));
        assert!(!stale_stop(&store, part, "MUL_MAT(type_a=q4_0,m=16)"), "a case's own record stays");
    }

    #[test]
    fn cases_are_grouped_by_their_type() {
        assert_eq!(case_type("ADD(type=f16,ne=[1,1,8,1])"), "f16");
        assert_eq!(case_type("MUL_MAT(type_a=q4_0,type_b=f32,m=16)"), "q4_0");
        assert_eq!(case_type("ARGMAX(ne=[32,1,1,1])"), "other");
        assert_eq!(case_type("FLASH_ATTN_EXT(hsk=64,hsv=64,prec=f32,type_K=q8_0,type_V=q8_0)"), "q8_0");
    }

    #[test]
    fn a_case_runs_alone_by_its_operation_and_parameters() {
        let args = alone_args("MUL_MAT(type_a=q4_0,m=16,bs=[1,1],nr=[2,1])");
        let pattern = regex_escape("type_a=q4_0,m=16,bs=[1,1],nr=[2,1]");
        assert_eq!(args, ["test", "-b", BACKEND, "-o", "^MUL_MAT$", "-p", &format!("^{pattern}$")]);
        assert!(pattern.contains(r"\[1,1\]"), "{pattern}");
    }

    #[test]
    fn a_case_takes_the_time_since_the_previous_case_or_the_set_up() {
        // A program in the shape of test-backend-ops: a second of set-up, then two cases.
        let script = "sleep 1; echo '  Device memory: 1 MB'; sleep 0.3; echo '  ADD(a=1): OK'; \
                      sleep 0.2; echo '  ADD(a=2): OK'";
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script]);
        let log = std::env::temp_dir().join(format!("xtask-backend-ops-timing-{}.log", std::process::id()));
        let run = runner::run(cmd, &log, std::time::Duration::from_secs(60), progress, |_| {}).unwrap();
        let _ = std::fs::remove_file(&log);
        let times: Vec<(&str, f64)> = run.ended.iter().map(|e| (e.name.as_str(), e.seconds)).collect();
        assert_eq!(times.len(), 2, "{times:?}");
        assert_eq!((times[0].0, times[1].0), ("ADD(a=1)", "ADD(a=2)"));
        // Each at least its own sleep; the set-up (read before the memory line) in neither.
        assert!(times[0].1 >= 0.3 && times[1].1 >= 0.2, "{times:?}");
        assert!(times[0].1 + times[1].1 <= run.seconds - 1.0, "{times:?} of {} s", run.seconds);
    }
}
