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

/// Every built-in config.
pub const BUILTINS: [Builtin; 9] = [
    Builtin {
        name: "mi210",
        file: "gfx90a_mi210_kmd.json",
        text: include_str!("../../../configs/gfx90a_mi210_kmd.json"),
    },
    Builtin {
        name: "mi210-2gpu",
        file: "gfx90a_mi210_kmd_2gpu.json",
        text: include_str!("../../../configs/gfx90a_mi210_kmd_2gpu.json"),
    },
    Builtin {
        name: "mi210-4gpu",
        file: "gfx90a_mi210_kmd_4gpu.json",
        text: include_str!("../../../configs/gfx90a_mi210_kmd_4gpu.json"),
    },
    Builtin {
        name: "mi210-8gpu",
        file: "gfx90a_mi210_kmd_8gpu.json",
        text: include_str!("../../../configs/gfx90a_mi210_kmd_8gpu.json"),
    },
    Builtin {
        name: "mi300x",
        file: "gfx942_cdna3_kmd.json",
        text: include_str!("../../../configs/gfx942_cdna3_kmd.json"),
    },
    Builtin {
        name: "mi300x-4gpu",
        file: "gfx942_mi300x_kmd_4gpu.json",
        text: include_str!("../../../configs/gfx942_mi300x_kmd_4gpu.json"),
    },
    Builtin {
        name: "mi300x-8gpu",
        file: "gfx942_mi300x_kmd_8gpu.json",
        text: include_str!("../../../configs/gfx942_mi300x_kmd_8gpu.json"),
    },
    Builtin {
        name: "mi350x",
        file: "gfx950_cdna4_kmd.json",
        text: include_str!("../../../configs/gfx950_cdna4_kmd.json"),
    },
    Builtin {
        name: "mi350x-2gpu",
        file: "gfx950_cdna4_kmd_2gpu.json",
        text: include_str!("../../../configs/gfx950_cdna4_kmd_2gpu.json"),
    },
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
