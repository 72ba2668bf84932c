//! What googletest prints, read without running anything: the test list
//! (`--gtest_list_tests`), the live progress lines of its default printer, and its XML report.
//!
//! The progress lines are read live because a simulator bug may crash or hang the test program:
//! the lines then still say which tests finished, and which one was running when it died.

use std::collections::HashMap;

/// How one test case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    Skipped,
    /// The program died (signal, abort, exit) while this test was running.
    Crashed,
    /// No progress line for longer than the stall limit while this test was running.
    Hung,
}

impl Status {
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Failed | Status::Crashed | Status::Hung)
    }
}

/// The full names (`Suite.Test`) in `--gtest_list_tests` output, without disabled tests (gtest
/// runs them only when asked to).
pub fn parse_list(text: &str) -> Vec<String> {
    let mut suite: Option<&str> = None;
    let mut names = Vec::new();
    for line in text.lines() {
        // Parameterised tests carry `  # GetParam() = …`, typed suites `  # TypeParam = …`.
        let bare = line.split("  #").next().unwrap_or("").trim_end();
        if bare.is_empty() {
            continue;
        }
        if let Some(test) = bare.strip_prefix("  ") {
            if let Some(s) = suite {
                let disabled = |n: &str| n.split('/').any(|p| p.starts_with("DISABLED_"));
                if !disabled(s) && !disabled(test) {
                    names.push(format!("{s}.{}", test.trim()));
                }
            }
        } else if let Some(s) = bare.strip_suffix('.') {
            if !s.contains(' ') {
                suite = Some(s);
            }
        } else {
            // Anything else (a library's banner before the list) ends the current suite.
            suite = None;
        }
    }
    names
}

/// One event of gtest's progress output.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    Started(&'a str),
    Ended(&'a str, Status),
    /// The program is ready to run its tests (its set-up is over): for programs that print a
    /// line only as a test ends, a test ending without having started took the time since
    /// this or the previous test's end.
    Ready,
}

/// Reads one line of gtest's default printer. The final summary repeats `[  FAILED  ] name`
/// without a duration; only lines with one count, so a failure is counted once.
pub fn progress(line: &str) -> Option<Progress<'_>> {
    let line = line.trim_end();
    if let Some(name) = line.strip_prefix("[ RUN      ] ") {
        return Some(Progress::Started(name.trim()));
    }
    let (status, rest) =
        [("[       OK ] ", Status::Passed), ("[  FAILED  ] ", Status::Failed), ("[  SKIPPED ] ", Status::Skipped)]
            .into_iter()
            .find_map(|(tag, s)| line.strip_prefix(tag).map(|r| (s, r)))?;
    // `name (12 ms)`; a parameterised failure reads `name, where GetParam() = … (12 ms)`.
    let rest = rest.strip_suffix(" ms)")?;
    let (name, _) = rest.rsplit_once(" (")?;
    let name = name.split(", where ").next().unwrap_or(name);
    Some(Progress::Ended(name.trim(), status))
}

/// One test case of an XML report.
#[derive(Debug, PartialEq)]
pub struct CaseReport {
    pub status: Status,
    pub seconds: f64,
    /// The failure messages, for the failure's log.
    pub message: String,
}

/// The test cases of a gtest XML report, by full name. Cases gtest did not run (filtered or
/// disabled) are left out.
pub fn parse_xml(text: &str) -> Result<HashMap<String, CaseReport>, roxmltree::Error> {
    let doc = roxmltree::Document::parse(text)?;
    let mut cases = HashMap::new();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let (Some(class), Some(name)) = (case.attribute("classname"), case.attribute("name")) else { continue };
        if case.attribute("status") == Some("notrun") || case.attribute("result") == Some("suppressed") {
            continue;
        }
        let failures: Vec<&str> = case
            .children()
            .filter(|n| n.has_tag_name("failure") || n.has_tag_name("error"))
            .map(|n| n.attribute("message").or_else(|| n.text()).unwrap_or(""))
            .collect();
        let status = if !failures.is_empty() {
            Status::Failed
        } else if case.attribute("result") == Some("skipped") || case.children().any(|n| n.has_tag_name("skipped")) {
            Status::Skipped
        } else {
            Status::Passed
        };
        let seconds = case.attribute("time").and_then(|t| t.trim_end_matches('s').parse().ok()).unwrap_or(0.0);
        cases.insert(format!("{class}.{name}"), CaseReport { status, seconds, message: failures.join("\n") });
    }
    Ok(cases)
}

/// A `--gtest_filter` value that selects exactly `names` (gtest filters separate patterns
/// with `:`, which test names never contain).
pub fn filter_for(names: &[String]) -> String {
    names.join(":")
}

/// Whether `name` matches a gtest-style filter: `POSITIVE[-NEGATIVE]`, each a `:`-separated
/// list of patterns with `*` and `?`; used to select tests before chunking them.
pub fn matches_filter(name: &str, filter: &str) -> bool {
    let (positive, negative) = match filter.split_once('-') {
        Some((p, n)) => (p, n),
        None => (filter, ""),
    };
    let any = |list: &str| list.split(':').filter(|p| !p.is_empty()).any(|p| glob(p.as_bytes(), name.as_bytes()));
    (positive.is_empty() || any(positive)) && !any(negative)
}

/// `*` and `?` matching, as gtest's filter does.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&pattern[1..], text) || (!text.is_empty() && glob(pattern, &text[1..])),
        (Some(b'?'), Some(_)) => glob(&pattern[1..], &text[1..]),
        (Some(p), Some(t)) if p == t => glob(&pattern[1..], &text[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_gives_full_names_without_disabled_tests() {
        let text = "rocBLAS info banner\nrocrand_basic_tests.\n  create\n  DISABLED_slow\n\
                    params/basic.\n  run/0  # GetParam() = 4-byte object <01-00 00-00>\n  run/1  # GetParam() = 2\n\
                    typed/3.  # TypeParam = rocrand_cpp::mt19937_engine<0ull>\n  move\nDISABLED_all.\n  x\n";
        assert_eq!(
            parse_list(text),
            ["rocrand_basic_tests.create", "params/basic.run/0", "params/basic.run/1", "typed/3.move"]
        );
    }

    #[test]
    fn progress_lines_count_each_test_once() {
        assert_eq!(progress("[ RUN      ] a/b.c/0\n"), Some(Progress::Started("a/b.c/0")));
        assert_eq!(progress("[       OK ] a/b.c/0 (26 ms)"), Some(Progress::Ended("a/b.c/0", Status::Passed)));
        assert_eq!(
            progress("[  FAILED  ] p/t.x/3, where GetParam() = (1, 2) (7 ms)"),
            Some(Progress::Ended("p/t.x/3", Status::Failed))
        );
        assert_eq!(progress("[  SKIPPED ] s.t (0 ms)"), Some(Progress::Ended("s.t", Status::Skipped)));
        // The summary's repetition and the totals are not test ends.
        assert_eq!(progress("[  FAILED  ] p/t.x/3, where GetParam() = (1, 2)"), None);
        assert_eq!(progress("[  FAILED  ] 1 test, listed below:"), None);
        assert_eq!(progress("[----------] 2 tests from s (1382 ms total)"), None);
    }

    #[test]
    fn xml_reports_give_status_time_and_message() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4"><testsuite name="s">
  <testcase name="ok" status="run" result="completed" time="0.25" classname="s"/>
  <testcase name="bad/1" value_param="2" status="run" result="completed" time="1.5" classname="p/s">
    <failure message="Expected equality&#x0A;  x: 1" type=""><![CDATA[detail]]></failure>
  </testcase>
  <testcase name="skip" status="run" result="skipped" time="0" classname="s"><skipped message=""/></testcase>
  <testcase name="DISABLED_x" status="notrun" result="suppressed" time="0" classname="s"/>
</testsuite></testsuites>"#;
        let cases = parse_xml(xml).unwrap();
        assert_eq!(cases.len(), 3);
        assert_eq!(cases["s.ok"], CaseReport { status: Status::Passed, seconds: 0.25, message: String::new() });
        assert_eq!(cases["p/s.bad/1"].status, Status::Failed);
        assert_eq!(cases["p/s.bad/1"].message, "Expected equality\n  x: 1");
        assert_eq!(cases["s.skip"].status, Status::Skipped);
        assert!(parse_xml("<testsuites><testsuite>").is_err(), "a report cut short by a crash is an error");
    }

    #[test]
    fn filters_match_like_gtest() {
        assert!(matches_filter("quick/blas1.asum/0", "quick*"));
        assert!(matches_filter("a.b", ""));
        assert!(matches_filter("a.b", "x.*:a.?"));
        assert!(!matches_filter("a.b", "*-a.*"));
        assert!(matches_filter("c.d", "*-a.*:b.*"));
        assert!(!matches_filter("a.bc", "a.?"));
    }
}
