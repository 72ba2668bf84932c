//! `cargo xtask lint`: the layering of `sim` holds — no import cycle between its top-level
//! modules, nor between the modules of each layer (`driver::*`, `gpu::*`). A cycle means
//! two parts cannot be understood or tested apart; the layers exist to prevent that.
//!
//! It reads the sources as text, without comments and literals: every path a `use` item
//! imports (groups in braces expanded, over any number of lines: `use crate::{a::b, c}` names
//! `crate::a::b` and `crate::c`) and every `crate::…`, `super::…` and `self::…` path in code
//! is an edge from the module of the file to the module the path names. A `use` it cannot
//! parse fails the lint, naming the file and line, rather than being skipped. Written here rather than with a crate: the few dependency-graph tools
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

/// `text` with comments (line, block, doc), string literals and character literals blanked
/// out, newlines kept, so that offsets and line numbers still match the source.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Block comments nest.
                let (mut depth, mut j) = (0usize, i);
                while j < b.len() {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if starts_word(b, i) && raw_string_hashes(&b[i + 1..]).is_some() => {
                // r"…", r#"…"#, br"…": no escapes, ends at the quote followed by as many #.
                let hashes = raw_string_hashes(&b[i + 1..]).unwrap_or(0);
                let body = i + 2 + hashes;
                let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
                let end = (body..b.len()).find(|&j| b[j..].starts_with(&close)).map_or(b.len(), |j| j + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{…}', '"'), else a lifetime or label.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    (i + 3..b.len()).find(|&j| b[j] == b'\'').map(|j| j + 1)
                } else {
                    let c = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                    (b.get(i + 1 + c) == Some(&b'\'')).then_some(i + 2 + c)
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i, end);
                        i = end;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `b[i]` starts a word, or is the `r` of a `br` prefix.
fn starts_word(b: &[u8], i: usize) -> bool {
    let not_ident_at = |j: Option<usize>| j.is_none_or(|j| !is_ident(b[j]));
    not_ident_at(i.checked_sub(1)) || (b[i - 1] == b'b' && not_ident_at(i.checked_sub(2)))
}

/// The number of `#` of a raw string starting right after its `r` (`"…"` → 0, `#"…"#` → 1).
fn raw_string_hashes(rest: &[u8]) -> Option<usize> {
    let hashes = rest.iter().take_while(|&&c| c == b'#').count();
    (rest.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// Every path starting with `crate`, `super` or `self` outside `use` items in `code` (see
/// [`code_only`]), split into segments, with its offset.
fn paths_in(code: &str) -> Vec<(Vec<&str>, usize)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for key in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(key) {
            let start = at + i;
            at = start + key.len();
            // A whole word: not `xsuper::`.
            if start > 0 && is_ident(bytes[start - 1]) {
                continue;
            }
            // Count only the first key of a path (`super::super::x` once).
            if start >= 2 && &code[start - 2..start] == "::" {
                continue;
            }
            let end = code[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| start + e);
            out.push((code[start..end].split("::").filter(|s| !s.is_empty()).collect(), start));
        }
    }
    out
}

/// One token of a `use` item.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Token<'a> {
    Ident(&'a str),
    PathSep,
    Open,
    Close,
    Comma,
    Star,
}

/// The `use` items of `code` (see [`code_only`]): for each, every path it imports, its braces
/// expanded (`use crate::{a::b, c}` → `crate::a::b`, `crate::c`), with the offset of its last
/// segment; and `code` with the items blanked out, for [`paths_in`]. An item it cannot parse
/// is an error naming its offset, never silently skipped.
#[allow(clippy::type_complexity)]
fn use_items(code: &str) -> Result<(Vec<(Vec<&str>, usize)>, String), (usize, String)> {
    let b = code.as_bytes();
    let mut paths = Vec::new();
    let mut rest = code.as_bytes().to_vec();
    let mut at = 0;
    while let Some(i) = code[at..].find("use") {
        let start = at + i;
        at = start + 3;
        let word_start = start == 0 || !(is_ident(b[start - 1]) || b[start - 1] == b'#');
        if !word_start || !b.get(start + 3).is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let end = code[start..].find(';').map(|e| start + e).ok_or((start, "a `use` without `;`".to_string()))?;
        let tokens = tokenize(&code[start + 3..end], start + 3).map_err(|e| (start, e))?;
        let mut pos = 0;
        parse_tree(&tokens, &mut pos, Vec::new(), &mut paths).map_err(|e| (start, e))?;
        if pos != tokens.len() {
            return Err((start, format!("unexpected {:?} in `{}`", tokens[pos].0, code[start..=end].trim())));
        }
        for c in &mut rest[start..=end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        at = end + 1;
    }
    Ok((paths, String::from_utf8(rest).unwrap_or_default()))
}

fn tokenize(text: &str, base: usize) -> Result<Vec<(Token<'_>, usize)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let token = match c {
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                i += 2;
                Token::PathSep
            }
            b'{' | b'}' | b',' | b'*' => {
                i += 1;
                match c {
                    b'{' => Token::Open,
                    b'}' => Token::Close,
                    b',' => Token::Comma,
                    _ => Token::Star,
                }
            }
            // `$crate` in a macro is this crate.
            c if is_ident(c) || c == b'$' => {
                let start = i;
                i += 1;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let word = text[start..i].trim_start_matches('$');
                let word = word.strip_prefix("r#").unwrap_or(word);
                out.push((Token::Ident(word), base + start));
                continue;
            }
            _ => return Err(format!("cannot read `{}` in a `use`", &text[i..].chars().next().unwrap_or(' '))),
        };
        out.push((token, base + i - 1));
    }
    Ok(out)
}

/// Parses one use tree at `tokens[*pos]` under `prefix`, pushing each path it imports.
fn parse_tree<'a>(
    tokens: &[(Token<'a>, usize)],
    pos: &mut usize,
    mut prefix: Vec<&'a str>,
    out: &mut Vec<(Vec<&'a str>, usize)>,
) -> Result<(), String> {
    let next = |pos: &usize| tokens.get(*pos).map(|t| t.0);
    if next(pos) == Some(Token::PathSep) {
        // `use ::std::…`: an extern crate, nothing of ours.
        *pos += 1;
        prefix.push("");
    }
    loop {
        match tokens.get(*pos) {
            Some(&(Token::Ident(name), offset)) => {
                *pos += 1;
                prefix.push(name);
                match next(pos) {
                    Some(Token::PathSep) => *pos += 1,
                    Some(Token::Ident("as")) => {
                        *pos += 1;
                        match next(pos) {
                            Some(Token::Ident(_)) => *pos += 1,
                            t => return Err(format!("expected a name after `as`, found {t:?}")),
                        }
                        out.push((prefix, offset));
                        return Ok(());
                    }
                    _ => {
                        out.push((prefix, offset));
                        return Ok(());
                    }
                }
            }
            Some(&(Token::Star, offset)) => {
                *pos += 1;
                out.push((prefix, offset));
                return Ok(());
            }
            Some(&(Token::Open, _)) => {
                *pos += 1;
                loop {
                    if next(pos) == Some(Token::Close) {
                        *pos += 1;
                        return Ok(());
                    }
                    parse_tree(tokens, pos, prefix.clone(), out)?;
                    match next(pos) {
                        Some(Token::Comma) => *pos += 1,
                        Some(Token::Close) => {}
                        t => return Err(format!("expected `,` or `}}` in a use group, found {t:?}")),
                    }
                }
            }
            t => return Err(format!("expected a path, `*` or `{{`, found {:?}", t.map(|t| t.0))),
        }
    }
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
        let code = code_only(&std::fs::read_to_string(&file)?);
        let line_of = |offset: usize| code[..offset].matches('\n').count() + 1;
        let (mut paths, rest) = use_items(&code).map_err(|(offset, e)| {
            anyhow::anyhow!("{}:{}: {e} (xtask lint cannot follow this `use`)", file.display(), line_of(offset))
        })?;
        paths.extend(paths_in(&rest));
        for (segments, offset) in paths {
            let Some(target) = resolve(&from, &segments) else { continue };
            if target.len() <= scope.len() || target[..scope.len()] != *scope {
                continue;
            }
            let to_child = target[scope.len()].clone();
            if to_child != from_child {
                edges.entry((from_child.clone(), to_child)).or_insert((file.clone(), line_of(offset)));
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
        let found = paths_in("x = super::super::exec::gws::f(); y = crate::clock::now();");
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, ["crate", "clock", "now"]);
        assert_eq!(found[1].0, ["super", "super", "exec", "gws", "f"]);
    }

    /// The paths `use` items import in `src`, as `a::b` strings, and what is left of `src`.
    fn imports(src: &str) -> (Vec<String>, String) {
        let code = code_only(src);
        let (paths, rest) = use_items(&code).unwrap_or_else(|(at, e)| panic!("at {at}: {e}"));
        (paths.into_iter().map(|(p, _)| p.join("::")).collect(), rest)
    }

    #[test]
    fn use_groups_are_expanded() {
        let (paths, _) = imports("use crate::{a::b, c};");
        assert_eq!(paths, ["crate::a::b", "crate::c"]);
        let (paths, _) = imports("pub(crate) use super::{self, x::{y as z, *}, w};");
        assert_eq!(paths, ["super::self", "super::x::y", "super::x", "super::w"]);
        let (paths, _) = imports("use crate::gpu::{};\nuse ::std::sync::Arc;\nuse std::{fmt, io::Read};");
        assert_eq!(paths, ["::std::sync::Arc", "std::fmt", "std::io::Read"]);
        // Resolved, `self` inside a group is the group's own path.
        let from: Vec<String> = ["gpu", "cp"].map(String::from).to_vec();
        assert_eq!(resolve(&from, &["super", "self"]).unwrap(), ["gpu"]);
    }

    #[test]
    fn multi_line_uses_and_their_lines() {
        let src = "//! doc: use crate::nothing;\nuse crate::{\n    driver::kfd, // crate::not_this\n    gpu::{\n        exec::Wave,\n        cp,\n    },\n};\n\nfn f() { crate::clock::now(); }\n";
        let code = code_only(src);
        let (paths, rest) = use_items(&code).unwrap();
        let named: Vec<(String, usize)> =
            paths.iter().map(|(p, at)| (p.join("::"), code[..*at].matches('\n').count() + 1)).collect();
        assert_eq!(
            named,
            [
                ("crate::driver::kfd".to_string(), 3),
                ("crate::gpu::exec::Wave".to_string(), 5),
                ("crate::gpu::cp".to_string(), 6)
            ]
        );
        // What is left: the code path, on its own line still.
        let left = paths_in(&rest);
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].0, ["crate", "clock", "now"]);
        assert_eq!(rest[..left[0].1].matches('\n').count() + 1, 10);
    }

    #[test]
    fn comments_and_literals_are_not_code() {
        let src = "let s = \"use crate::a; // crate::b\"; /* crate::c /* nested */ crate::d */ let c = '\"';\nlet r = r#\"crate::e\"#; let l: &'static str = crate::f::G; let q = '\\'';";
        let code = code_only(src);
        assert_eq!(code.len(), src.len());
        let found: Vec<String> = paths_in(&code).into_iter().map(|(p, _)| p.join("::")).collect();
        assert_eq!(found, ["crate::f::G"]);
        assert!(use_items(&code).unwrap().0.is_empty());
    }

    #[test]
    fn a_use_it_cannot_read_fails_loudly() {
        for bad in
            ["use crate::{a, b;", "use crate::a::{b c};", "use crate::a as;", "use crate::a\n", "use crate::a::<T>;"]
        {
            assert!(use_items(&code_only(bad)).is_err(), "{bad:?} was accepted");
        }
        // `use` inside another word, or as a field of a macro, is not an item.
        let (paths, _) = imports("fn reuse() {} let use_x = 1; #[macro_use] extern crate x;");
        assert!(paths.is_empty(), "{paths:?}");
    }

    #[test]
    fn a_hidden_edge_closes_a_cycle() {
        // a.rs reaches b only through a multi-line group; b uses a plainly.
        let dir = tempfile_dir();
        std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::{\n    b::Thing,\n};\n").unwrap();
        std::fs::write(dir.join("b.rs"), "use crate::a::Other;\n").unwrap();
        let e = edges(&dir, &[]).unwrap();
        let c = find_cycle(&e).expect("a -> b -> a");
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(e[&("a".to_string(), "b".to_string())].1, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("xtask-lint-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
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
