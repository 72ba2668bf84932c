//! The one error a config can produce.
//!
//! The launcher prints it as a single line and exits 2, so it always names the file, the key
//! (a JSON path such as `vm.gpu.device.simd_count`, or the place in the text for a syntax
//! error) and the reason.

use std::fmt;

/// What kind of mistake a [`ConfigError`] reports, for callers and tests that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigErrorKind {
    /// The file could not be read (missing, unreadable, or an unknown built-in name).
    Read,
    /// The text is not JSON.
    Syntax,
    /// A value has the wrong JSON type or does not fit the field.
    Type,
    /// A required key is absent.
    Missing,
    /// A value is outside what the simulated stack accepts.
    Range,
    /// `vm.arch` names no architecture the reference knows.
    UnknownArch,
    /// `vm.arch` is known but cannot be simulated here.
    UnsupportedArch,
    /// `gfx_target_version` is unknown or belongs to another architecture.
    Target,
}

/// Key used when the error concerns the file as a whole (it could not be read).
pub const WHOLE_FILE: &str = "(file)";

/// A config that cannot be used. Displays as one line: `<file>: <key>: <reason>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {key}: {reason}")]
pub struct ConfigError {
    /// The config's path as given, or `built-in <name>`.
    pub file: String,
    /// JSON path of the offending key, `line L:C` for a syntax error, [`WHOLE_FILE`] otherwise.
    pub key: String,
    /// What is wrong, including the offending value where there is one.
    pub reason: String,
    /// Category, for callers that react differently.
    pub kind: ConfigErrorKind,
}

impl ConfigError {
    pub(crate) fn new(
        file: impl fmt::Display,
        key: impl Into<String>,
        kind: ConfigErrorKind,
        reason: impl Into<String>,
    ) -> ConfigError {
        ConfigError { file: file.to_string(), key: key.into(), reason: one_line(&reason.into()), kind }
    }
}

/// Error texts from the OS or serde never contain newlines today; this keeps the promise of a
/// single line even if one ever does.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_key_reason_on_one_line() {
        let e = ConfigError::new("a.json", "vm.gpu.device.simd_count", ConfigErrorKind::Range, "must be\nat least 1");
        assert_eq!(e.to_string(), "a.json: vm.gpu.device.simd_count: must be at least 1");
    }
}
