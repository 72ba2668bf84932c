//! Configs compiled into the binary, so `rocjitsu -- app` works without a config file and the
//! preload library can reload the same config by name in the application's process.

/// One built-in config: the project's own file under `configs/`, embedded at build time.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Short name (`mi210`).
    pub name: &'static str,
    /// File name under `configs/`; its stem is accepted as a name too.
    pub file: &'static str,
    /// The JSON text.
    pub text: &'static str,
}

impl Builtin {
    /// The file name without `.json`, accepted as an alias.
    pub fn stem(&self) -> &'static str {
        self.file.strip_suffix(".json").unwrap_or(self.file)
    }
}

/// The built-in used when no config is given.
pub const DEFAULT_BUILTIN: &str = "mi210";

/// A [`Builtin`] for `configs/<file>`, embedded at build time.
macro_rules! builtin {
    ($name:literal, $file:literal) => {
        Builtin { name: $name, file: $file, text: include_str!(concat!("../../../configs/", $file)) }
    };
}

/// Every built-in config.
pub const BUILTINS: [Builtin; 9] = [
    builtin!("mi210", "gfx90a_mi210_kmd.json"),
    builtin!("mi210-2gpu", "gfx90a_mi210_kmd_2gpu.json"),
    builtin!("mi210-4gpu", "gfx90a_mi210_kmd_4gpu.json"),
    builtin!("mi210-8gpu", "gfx90a_mi210_kmd_8gpu.json"),
    builtin!("mi300x", "gfx942_cdna3_kmd.json"),
    builtin!("mi300x-4gpu", "gfx942_mi300x_kmd_4gpu.json"),
    builtin!("mi300x-8gpu", "gfx942_mi300x_kmd_8gpu.json"),
    builtin!("mi350x", "gfx950_cdna4_kmd.json"),
    builtin!("mi350x-2gpu", "gfx950_cdna4_kmd_2gpu.json"),
];

/// Finds a built-in by short name or file stem.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name || b.stem() == name)
}

/// The short names, comma separated, for error messages and `--help`.
pub fn names() -> String {
    BUILTINS.map(|b| b.name).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_stems_resolve() {
        assert_eq!(find("mi210").unwrap().file, "gfx90a_mi210_kmd.json");
        assert_eq!(find("gfx942_cdna3_kmd").unwrap().name, "mi300x");
        assert_eq!(find("mi350x-2gpu").unwrap().stem(), "gfx950_cdna4_kmd_2gpu");
        assert!(find("gfx90a_mi210_kmd.json").is_none());
        assert!(find("mi100").is_none());
        assert!(find(DEFAULT_BUILTIN).is_some());
    }
}
