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

/// What the DRM and PCI sysfs directories say about one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuSysfs {
    /// Its index among the GPUs: `card<index>`, `hwmon<index>`.
    pub index: u32,
    pub render_minor: u32,
    pub vendor: u32,
    pub device: u32,
    pub revision: u32,
    pub domain: u32,
    /// PCI bus, device and function, as the KFD topology's `location_id`.
    pub location_id: u32,
}

impl GpuSysfs {
    pub fn of(d: &crate::config::Device) -> GpuSysfs {
        GpuSysfs {
            index: d.index,
            render_minor: d.drm_render_minor,
            vendor: d.vendor_id,
            device: d.device_id,
            revision: d.pci_revision_id,
            domain: d.domain,
            location_id: d.location_id,
        }
    }

    /// The PCI address, `dddd:bb:dd.f`.
    pub fn pci_address(&self) -> String {
        let l = self.location_id;
        format!("{:04x}:{:02x}:{:02x}.{:x}", self.domain, l >> 8 & 0xff, l >> 3 & 0x1f, l & 7)
    }
}

/// Everything outside the KFD topology itself: the DRM sysfs directories libdrm checks, the
/// render nodes' `/dev/dri` listing, the module files rocminfo's `lsmod | grep amdgpu` check
/// reads in its child process, and the DRM card and hwmon classes through which ROCm SMI finds
/// the GPUs and their PCI addresses (RCCL asks it for the XGMI links between GPUs).
pub fn support_entries(gpus: &[GpuSysfs]) -> Vec<Entry> {
    let mut e = vec![
        Entry::Dir("class_kfd".into()),
        Entry::Symlink("class_kfd/kfd".into(), "../kfd".into()),
        Entry::File("proc_modules".into(), "amdgpu 15339520 0 - Live 0x0000000000000000\n".into()),
        Entry::File("module/amdgpu/refcnt".into(), "0\n".into()),
        Entry::File("module/amdgpu/initstate".into(), "live\n".into()),
        Entry::Dir("module/amdgpu/holders".into()),
        Entry::Dir("dev_dri".into()),
        Entry::Dir("class_drm".into()),
        Entry::Dir("class_hwmon".into()),
    ];
    for g in gpus {
        let (minor, card) = (g.render_minor, g.index);
        let dev = format!("drm/226:{minor}");
        e.push(Entry::Dir(format!("{dev}/device/drm/renderD{minor}")));
        e.push(Entry::File(format!("{dev}/dev"), format!("226:{minor}\n")));
        e.push(Entry::File(format!("{dev}/uevent"), format!("MAJOR=226\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\n")));
        e.extend(pci_function(&format!("{dev}/device"), g));
        e.push(Entry::File(format!("dev_dri/renderD{minor}"), String::new()));
        // The PCI function as sysfs has it under the root complex, and the class links to it:
        // `/sys/class/drm/card0/device` reads as a link ending in the PCI address.
        let pci = format!("pci/{}", g.pci_address());
        e.extend(pci_function(&pci, g));
        e.push(Entry::Dir(format!("{pci}/drm/renderD{minor}")));
        e.push(Entry::Symlink(format!("{pci}/drm/card{card}/device"), format!("../../../{}", g.pci_address())));
        e.push(Entry::Symlink(format!("{pci}/drm/renderD{minor}/device"), format!("../../../{}", g.pci_address())));
        e.push(Entry::File(format!("{pci}/hwmon/hwmon{card}/name"), "amdgpu\n".into()));
        e.push(Entry::Symlink(format!("{pci}/hwmon/hwmon{card}/device"), format!("../../../{}", g.pci_address())));
        e.push(Entry::Symlink(format!("class_drm/card{card}"), format!("../{pci}/drm/card{card}")));
        e.push(Entry::Symlink(format!("class_drm/renderD{minor}"), format!("../{pci}/drm/renderD{minor}")));
        e.push(Entry::Symlink(format!("class_hwmon/hwmon{card}"), format!("../{pci}/hwmon/hwmon{card}")));
    }
    e
}

/// The identification files of a GPU's PCI function in directory `dir`.
fn pci_function(dir: &str, g: &GpuSysfs) -> Vec<Entry> {
    vec![
        Entry::File(format!("{dir}/vendor"), format!("{:#06x}\n", g.vendor)),
        Entry::File(format!("{dir}/device"), format!("{:#06x}\n", g.device)),
        Entry::File(format!("{dir}/revision"), format!("{:#04x}\n", g.revision)),
        Entry::File(format!("{dir}/uevent"), format!("DRIVER=amdgpu\nPCI_SLOT_NAME={}\n", g.pci_address())),
    ]
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
    let gpus: Vec<GpuSysfs> = config.gpus().iter().map(GpuSysfs::of).collect();
    entries.extend(support_entries(&gpus));
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
        let gpu = GpuSysfs {
            index: 0,
            render_minor: 128,
            vendor: 0x1002,
            device: 0x740f,
            revision: 2,
            domain: 0,
            location_id: 0x300,
        };
        let mut entries = support_entries(&[gpu]);
        let a = materialize(base.path(), &entries).unwrap();
        let b = materialize(base.path(), &entries).unwrap();
        assert_eq!(a, b);
        assert!(a.join("drm/226:128/device/drm/renderD128").is_dir());
        assert_eq!(fs::read_to_string(a.join("proc_modules")).unwrap().split(' ').next(), Some("amdgpu"));
        assert!(a.join("class_kfd/kfd").symlink_metadata().unwrap().file_type().is_symlink());
        // ROCm SMI's view: the card's device link names the PCI address, and the hwmon's
        // device is the same directory.
        assert_eq!(gpu.pci_address(), "0000:03:00.0");
        let link = fs::read_link(a.join("class_drm/card0/device")).unwrap();
        assert!(link.ends_with("0000:03:00.0"), "{}", link.display());
        assert_eq!(fs::read_to_string(a.join("class_drm/card0/device/vendor")).unwrap(), "0x1002\n");
        assert!(a.join("class_drm/card0/device/drm/renderD128").is_dir());
        assert_eq!(fs::read_to_string(a.join("class_hwmon/hwmon0/name")).unwrap(), "amdgpu\n");
        let (card, hwmon) = (a.join("class_drm/card0/device"), a.join("class_hwmon/hwmon0/device"));
        assert_eq!(fs::metadata(card).unwrap().ino(), fs::metadata(hwmon).unwrap().ino());
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
