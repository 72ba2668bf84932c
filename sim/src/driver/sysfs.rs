//! The simulated machine's sysfs/procfs files as real files in a directory
//! (the KFD topology plus what libdrm and rocminfo look at), so that every
//! way of reading them (fopen, glibc-internal openat, opendir/readdir,
//! openat relative to a directory fd, Python's os.listdir) works unchanged
//! once the preload library redirects the paths there.
//!
//! The directory is content-addressed (`tree-<hash>` under the runtime
//! directory) and created atomically (write to a temporary name, then
//! rename), so concurrent processes share one copy and nothing piles up.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// One entry of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Entry {
    File(String, String),
    Dir(String),
    Symlink(String, String),
}

/// Everything outside the KFD topology itself: the DRM sysfs directories
/// libdrm checks, the render nodes' `/dev/dri` listing, and the module files
/// rocminfo's `lsmod | grep amdgpu` check reads in its child process.
pub fn support_entries(render_minors: &[(u32, u32, u32, u32)]) -> Vec<Entry> {
    let mut e = vec![
        Entry::Dir("class_kfd".into()),
        Entry::Symlink("class_kfd/kfd".into(), "../kfd".into()),
        Entry::File("proc_modules".into(), "amdgpu 15339520 0 - Live 0x0000000000000000\n".into()),
        Entry::File("module/amdgpu/refcnt".into(), "0\n".into()),
        Entry::File("module/amdgpu/initstate".into(), "live\n".into()),
        Entry::Dir("module/amdgpu/holders".into()),
        Entry::Dir("dev_dri".into()),
    ];
    for &(minor, vendor, device, revision) in render_minors {
        let dev = format!("drm/226:{minor}");
        e.push(Entry::Dir(format!("{dev}/device/drm/renderD{minor}")));
        e.push(Entry::File(format!("{dev}/dev"), format!("226:{minor}\n")));
        e.push(Entry::File(format!("{dev}/uevent"), format!("MAJOR=226\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\n")));
        e.push(Entry::File(format!("{dev}/device/vendor"), format!("{vendor:#06x}\n")));
        e.push(Entry::File(format!("{dev}/device/device"), format!("{device:#06x}\n")));
        e.push(Entry::File(format!("{dev}/device/revision"), format!("{revision:#04x}\n")));
        e.push(Entry::File(format!("{dev}/device/uevent"), "DRIVER=amdgpu\n".into()));
        e.push(Entry::File(format!("dev_dri/renderD{minor}"), String::new()));
    }
    e
}

/// The runtime directory of this user: `$ROCJITSU_RUNTIME_DIR`, else
/// `$XDG_RUNTIME_DIR/rocjitsu`, else `/tmp/rocjitsu-<uid>`; created 0700 and
/// refused if another user owns it or others may write to it.
pub fn runtime_dir() -> io::Result<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let dir = match (std::env::var_os("ROCJITSU_RUNTIME_DIR"), std::env::var_os("XDG_RUNTIME_DIR")) {
        (Some(d), _) if !d.is_empty() => PathBuf::from(d),
        (_, Some(x)) if !x.is_empty() => PathBuf::from(x).join("rocjitsu"),
        _ => PathBuf::from(format!("/tmp/rocjitsu-{uid}")),
    };
    match fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not a private directory of uid {uid}", dir.display()),
        ));
    }
    Ok(dir)
}

/// Writes the whole tree of a machine (KFD topology from the config and the
/// real host, DRM sysfs, module files) under the runtime directory and
/// returns its path.
pub fn write_machine_tree(config: &crate::config::Config) -> io::Result<PathBuf> {
    let topology = crate::driver::topology::build(config, &crate::host::HostInfo::detect());
    let mut entries: Vec<Entry> = topology.dirs().iter().map(|d| Entry::Dir(format!("kfd/topology/{d}"))).collect();
    entries
        .extend(topology.files().iter().map(|f| Entry::File(format!("kfd/topology/{}", f.path), f.contents.clone())));
    let minors: Vec<(u32, u32, u32, u32)> =
        config.gpus().iter().map(|g| (g.drm_render_minor, g.vendor_id, g.device_id, g.pci_revision_id)).collect();
    entries.extend(support_entries(&minors));
    materialize(&runtime_dir()?, &entries)
}

/// Makes sure the tree with these entries exists under `base` and returns
/// its path.
pub fn materialize(base: &Path, entries: &[Entry]) -> io::Result<PathBuf> {
    let mut h = DefaultHasher::new();
    entries.hash(&mut h);
    let dir = base.join(format!("tree-{:016x}", h.finish()));
    if dir.is_dir() {
        return Ok(dir);
    }
    let tmp = base.join(format!("tree-{:016x}.tmp-{}", h.finish(), std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    write_entries(&tmp, entries)?;
    match fs::rename(&tmp, &dir) {
        Ok(()) => Ok(dir),
        // Another process won the race; its tree has the same contents.
        Err(_) if dir.is_dir() => {
            let _ = fs::remove_dir_all(&tmp);
            Ok(dir)
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

fn write_entries(root: &Path, entries: &[Entry]) -> io::Result<()> {
    fs::create_dir_all(root)?;
    for e in entries {
        match e {
            Entry::Dir(p) => fs::create_dir_all(root.join(p))?,
            Entry::File(p, contents) => {
                let path = root.join(p);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::write(path, contents)?;
            }
            Entry::Symlink(p, target) => {
                let path = root.join(p);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                std::os::unix::fs::symlink(target, path)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn materialize_is_idempotent_and_content_addressed() {
        let base = tempfile::tempdir().unwrap();
        let mut entries = support_entries(&[(128, 0x1002, 0x740f, 2)]);
        let a = materialize(base.path(), &entries).unwrap();
        let b = materialize(base.path(), &entries).unwrap();
        assert_eq!(a, b);
        assert!(a.join("drm/226:128/device/drm/renderD128").is_dir());
        assert_eq!(fs::read_to_string(a.join("proc_modules")).unwrap().split(' ').next(), Some("amdgpu"));
        assert!(a.join("class_kfd/kfd").symlink_metadata().unwrap().file_type().is_symlink());
        entries.push(Entry::File("extra".into(), "x".into()));
        let c = materialize(base.path(), &entries).unwrap();
        assert_ne!(a, c);
        // No temporary directories are left behind.
        let leftovers = fs::read_dir(base.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp-"));
        assert_eq!(leftovers.count(), 0);
    }
}
