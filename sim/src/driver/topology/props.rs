//! The `key value` files of the KFD sysfs tree.
//!
//! libhsakmt reads each with one `fread` of a page and parses it with repeated
//! `sscanf("%s %llu\n%n")`, so a file must stay under 4096 bytes, hold one decimal value per
//! line, and never contain a line the scanner would stop at before the keys it needs.

use std::fmt::Write;

/// Largest properties file libhsakmt reads whole (it NUL-terminates a page-sized buffer).
pub const MAX_PROPERTIES_BYTES: usize = 4095;

/// Builds one properties file in the kernel's format.
#[derive(Debug, Default)]
pub(crate) struct Properties {
    text: String,
}

impl Properties {
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Appends `key value`.
    pub fn set(&mut self, key: &str, value: impl Into<u64>) -> &mut Properties {
        let _ = writeln!(self.text, "{key} {}", value.into());
        self
    }

    /// Appends the cache `sibling_map`, which the kernel writes last as comma-separated bits.
    pub fn sibling_map(&mut self, bits: &[bool]) -> &mut Properties {
        let list: Vec<&str> = bits.iter().map(|&b| if b { "1" } else { "0" }).collect();
        let _ = writeln!(self.text, "sibling_map {}", list.join(","));
        self
    }

    /// The file contents. Every builder in this module produces bounded output; the assertion
    /// guards against a future key list outgrowing what libhsakmt reads.
    pub fn finish(&mut self) -> String {
        debug_assert!(self.text.len() <= MAX_PROPERTIES_BYTES, "{}", self.text);
        std::mem::take(&mut self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_format() {
        let text = Properties::new()
            .set("heap_type", 1u32)
            .set("size_in_bytes", 1u64 << 36)
            .sibling_map(&[true, false, false])
            .finish();
        assert_eq!(text, "heap_type 1\nsize_in_bytes 68719476736\nsibling_map 1,0,0\n");
    }
}
