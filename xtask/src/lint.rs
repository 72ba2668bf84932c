//! `cargo xtask lint`: the layering of `sim` holds — no import cycle between its top-level
//! modules, nor between the modules of each layer (`driver::*`, `gpu::*`). A cycle means
//! two parts cannot be understood or tested apart; the layers exist to prevent that.
//!
//! It reads the sources as text: every `crate::…`, `super::…` and `self::…` path (in `use`
//! items and in code, outside comments) is an edge from the module of the file to the module
//! the path names. Written here rather than with a crate: the few dependency-graph tools
//! for Rust work on whole crates, not on modules within one.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One edge with where it comes from (for the report).
type Edges = BTreeMap<(String, String), (PathBuf, usize)>;

pub fn run() -> Result<()> {
    let src = crate::tasks::root().join("sim/src");
    let mut failures = Vec::new();
    // Top level, then each layer's own modules.
    for scope in [vec![], vec!["driver".to_string()], vec!["gpu".to_string()]] {
        let edges = edges(&src, &scope)?;
        if let Some(cycle) = find_cycle(&edges) {
            failures.push(describe(&scope, &cycle, &edges));
        }
    }
    if failures.is_empty() {
        eprintln!("xtask lint: no import cycle in sim (top level, driver::*, gpu::*)");
        Ok(())
    } else {
        bail!("import cycles in sim:\n{}", failures.join("\n"))
    }
}

/// The module path of a source file: `gpu/cp/engine.rs` → [gpu, cp, engine];
/// `gpu/cp/mod.rs` → [gpu, cp]; `lib.rs` → [].
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// Resolves a path's leading segments (`crate::a::b`, `super::x`, `self::y`) against the
/// module `from` to an absolute module path (as far as the segments go).
fn resolve(from: &[String], segments: &[&str]) -> Option<Vec<String>> {
    let mut it = segments.iter();
    let mut base: Vec<String> = match *it.next()? {
        "crate" => Vec::new(),
        "self" => from.to_vec(),
        "super" => {
            let mut b = from.to_vec();
            b.pop()?;
            b
        }
        _ => return None,
    };
    for s in it {
        match *s {
            "super" => {
                base.pop()?;
            }
            "self" => {}
            name => base.push(name.to_string()),
        }
    }
    Some(base)
}

/// Removes `//` comments (doc comments included) from a line, leaving strings alone enough
/// for our purpose (paths never appear inside string literals in this crate).
fn code_part(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// Every path starting with `crate`, `super` or `self` in `line`, split into segments.
fn paths_in(line: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    for key in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = line[at..].find(key) {
            let start = at + i;
            at = start + key.len();
            // A whole word: not `xsuper::`.
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            // Count only the first key of a path (`super::super::x` once).
            if start >= 2 && &line[start - 2..start] == "::" {
                continue;
            }
            let end = line[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(line.len(), |e| start + e);
            out.push(line[start..end].split("::").filter(|s| !s.is_empty()).collect());
        }
    }
    out
}

/// The edges between the children of `scope` (the top level when empty).
fn edges(src: &Path, scope: &[String]) -> Result<Edges> {
    let mut edges = Edges::new();
    for file in rust_files(&src.join(scope.join("/")))? {
        let from = module_of(src, &file);
        if from.len() <= scope.len() || from[..scope.len()] != *scope {
            continue;
        }
        let from_child = from[scope.len()].clone();
        let text = std::fs::read_to_string(&file)?;
        for (n, line) in text.lines().enumerate() {
            for segments in paths_in(code_part(line)) {
                let Some(target) = resolve(&from, &segments) else { continue };
                if target.len() <= scope.len() || target[..scope.len()] != *scope {
                    continue;
                }
                let to_child = target[scope.len()].clone();
                if to_child != from_child {
                    edges.entry((from_child.clone(), to_child)).or_insert((file.clone(), n + 1));
                }
            }
        }
    }
    Ok(edges)
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A cycle in the graph, as the list of its nodes (first repeated at the end).
fn find_cycle(edges: &Edges) -> Option<Vec<String>> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().insert(b);
    }
    // Depth-first search with the current path on a stack.
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| *p == n) {
            let mut c: Vec<String> = path[i..].iter().map(|s| s.to_string()).collect();
            c.push(n.to_string());
            return Some(c);
        }
        if !done.insert(n) {
            return None;
        }
        path.push(n);
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, &graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

fn describe(scope: &[String], cycle: &[String], edges: &Edges) -> String {
    let prefix = if scope.is_empty() { String::new() } else { format!("{}::", scope.join("::")) };
    let mut s = format!("  {prefix}{{{}}}:", cycle.join(" -> "));
    for pair in cycle.windows(2) {
        if let Some((file, line)) = edges.get(&(pair[0].clone(), pair[1].clone())) {
            s.push_str(&format!("\n    {} -> {}: {}:{line}", pair[0], pair[1], file.display()));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_against_the_file_module() {
        let from: Vec<String> = ["gpu", "cp", "engine"].map(String::from).to_vec();
        assert_eq!(resolve(&from, &["super", "queue", "Queue"]).unwrap(), ["gpu", "cp", "queue", "Queue"]);
        assert_eq!(resolve(&from, &["super", "super", "exec"]).unwrap(), ["gpu", "exec"]);
        assert_eq!(resolve(&from, &["crate", "driver", "kfd"]).unwrap(), ["driver", "kfd"]);
        assert_eq!(resolve(&from, &["std", "sync"]), None);
        let found = paths_in("use super::super::exec::gws; x = crate::clock::now(); // crate::machine");
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(paths_in(code_part("let a = 1; // crate::machine")).len(), 0);
    }

    #[test]
    fn a_cycle_is_found_and_named() {
        let mut e = Edges::new();
        for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
            e.insert((a.into(), b.into()), (PathBuf::from("f.rs"), 1));
        }
        let c = find_cycle(&e).unwrap();
        assert_eq!(c.first(), c.last());
        assert_eq!(c.len(), 4);
        e.remove(&("c".to_string(), "a".to_string()));
        assert_eq!(find_cycle(&e), None);
    }
}
