//! Which paths we take over, and where each goes. Pure: a path in, a decision
//! out, so every rule is unit-tested without a process.
//!
//! Two kinds of targets:
//! - device nodes (`/dev/kfd`, `/dev/dri/renderD<N>`) become fake fds served
//!   by the driver;
//! - sysfs/procfs files become real files in our per-config tree (written
//!   once by `sim::driver::sysfs`), so that glibc's internal opens, `readdir` and
//!   `openat` relative to a directory fd all work without further hooks.

/// A device node we emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceNode {
    Kfd,
    Render(u32),
}

/// What a path resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    Device(DeviceNode),
    /// A path relative to the tree root.
    Tree(String),
}

/// Prefix rules: (path prefix, tree directory). A prefix matches the path
/// itself or the path followed by `/`.
/// `/sys/class/drm` and `/sys/class/hwmon` are the simulated GPUs' only (ROCm SMI lists the GPUs
/// there); a host GPU or sensor is hidden from the application, as its GPUs are the simulated ones.
const TREE_PREFIXES: &[(&str, &str)] = &[
    ("/sys/devices/virtual/kfd/kfd", "kfd"),
    ("/sys/class/kfd/kfd", "kfd"),
    ("/sys/module/amdgpu", "module/amdgpu"),
    ("/sys/class/drm", "class_drm"),
    ("/sys/class/hwmon", "class_hwmon"),
];

/// Exact-path rules.
const TREE_EXACT: &[(&str, &str)] = &[
    ("/sys/class/kfd", "class_kfd"),
    ("/sys/devices/virtual/kfd", "class_kfd"),
    ("/proc/modules", "proc_modules"),
    ("/dev/dri", "dev_dri"),
];

const SYS_DEV_CHAR_DRM: &str = "/sys/dev/char/226:";

/// Classifies a path as the application passed it. Relative paths are never
/// ours (nothing in the ROCm stack opens these relative to the cwd).
pub fn classify(raw: &[u8]) -> Option<Redirect> {
    if raw.first() != Some(&b'/') {
        return None;
    }
    // Cheap rejection first: this runs on every path the application opens.
    if !(raw.starts_with(b"/dev/") || raw.starts_with(b"/sys/") || raw.starts_with(b"/proc/modules")) {
        return None;
    }
    let path = normalize(std::str::from_utf8(raw).ok()?);
    let path = path.as_str();
    if path == "/dev/kfd" {
        return Some(Redirect::Device(DeviceNode::Kfd));
    }
    if let Some(n) = path.strip_prefix("/dev/dri/renderD") {
        return parse_minor(n).map(|m| Redirect::Device(DeviceNode::Render(m)));
    }
    for (exact, dir) in TREE_EXACT {
        if path == *exact {
            return Some(Redirect::Tree((*dir).to_string()));
        }
    }
    for (prefix, dir) in TREE_PREFIXES {
        if let Some(rest) = path.strip_prefix(prefix) {
            if rest.is_empty() || rest.starts_with('/') {
                return Some(Redirect::Tree(format!("{dir}{rest}")));
            }
        }
    }
    if let Some(rest) = path.strip_prefix(SYS_DEV_CHAR_DRM) {
        let (minor, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let minor = parse_minor(minor)?;
        return Some(Redirect::Tree(format!("drm/226:{minor}{tail}")));
    }
    None
}

/// A render minor ([`proto::abi::drm::RENDER_MINORS`]).
fn parse_minor(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = s.parse().ok()?;
    proto::abi::drm::RENDER_MINORS.contains(&n).then_some(n)
}

/// Collapses `//` and `/./` and drops a trailing `/`, so that equivalent
/// spellings of a path classify alike. `..` is resolved lexically.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = String::with_capacity(path.len());
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(p: &str) -> Option<Redirect> {
        Some(Redirect::Tree(p.to_string()))
    }

    #[test]
    fn device_nodes() {
        assert_eq!(classify(b"/dev/kfd"), Some(Redirect::Device(DeviceNode::Kfd)));
        assert_eq!(classify(b"/dev/dri/renderD128"), Some(Redirect::Device(DeviceNode::Render(128))));
        assert_eq!(classify(b"/dev/dri/renderD129"), Some(Redirect::Device(DeviceNode::Render(129))));
        assert_eq!(classify(b"/dev/dri/renderD127"), None);
        assert_eq!(classify(b"/dev/dri/renderD12x"), None);
        assert_eq!(classify(b"/dev/kfdx"), None);
        assert_eq!(classify(b"/dev/null"), None);
    }

    #[test]
    fn kfd_sysfs_both_spellings() {
        assert_eq!(
            classify(b"/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties"),
            tree("kfd/topology/nodes/1/properties")
        );
        assert_eq!(classify(b"/sys/class/kfd/kfd/topology/nodes/"), tree("kfd/topology/nodes"));
        assert_eq!(classify(b"/sys/class/kfd/kfd//topology/./generation_id"), tree("kfd/topology/generation_id"));
        assert_eq!(classify(b"/sys/class/kfd"), tree("class_kfd"));
        assert_eq!(classify(b"/sys/class/kfdx"), None);
        assert_eq!(classify(b"/sys/class/drm/card0/device"), tree("class_drm/card0/device"));
        assert_eq!(classify(b"/sys/class/hwmon"), tree("class_hwmon"));
        assert_eq!(classify(b"/sys/class/drmx"), None);
        assert_eq!(classify(b"/sys/devices/virtual/kfd/kfdfoo"), None);
    }

    #[test]
    fn drm_sysfs_and_module_files() {
        assert_eq!(classify(b"/sys/dev/char/226:128/device/drm"), tree("drm/226:128/device/drm"));
        assert_eq!(classify(b"/sys/dev/char/226:128"), tree("drm/226:128"));
        assert_eq!(classify(b"/sys/dev/char/226:0/device"), None);
        assert_eq!(classify(b"/sys/dev/char/10:200"), None);
        assert_eq!(classify(b"/proc/modules"), tree("proc_modules"));
        assert_eq!(classify(b"/proc/modulesx"), None);
        assert_eq!(classify(b"/sys/module/amdgpu/refcnt"), tree("module/amdgpu/refcnt"));
        assert_eq!(classify(b"/sys/module/amdgpuX"), None);
    }

    #[test]
    fn unrelated_paths_are_untouched() {
        for p in [&b"relative/dev/kfd"[..], b"/etc/passwd", b"/sys/devices/system/cpu/possible", b"/proc/cpuinfo", b""]
        {
            assert_eq!(classify(p), None, "{}", String::from_utf8_lossy(p));
        }
        assert_eq!(classify(&[b'/', b'd', b'e', b'v', b'/', 0xff]), None);
    }
}
