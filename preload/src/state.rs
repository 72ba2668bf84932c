//! The library's process-wide state: the driver, the fake tree, and the table
//! of fake file descriptors.
//!
//! Created lazily by the first hook that needs it (never in a constructor:
//! libnuma's constructor calls `fopen` before ours would run), and recreated
//! in a forked child, where the parent's KFD process is not ours to use.

use crate::driver::{Driver, Errno, OpenKfd};
use crate::paths::DeviceNode;
use crate::real;
use std::collections::{HashMap, HashSet};
use std::os::fd::{IntoRawFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

/// The char-device major `/dev/kfd` reports (a dynamic major, as on Linux).
pub const KFD_MAJOR: u32 = 238;
/// The char-device major of DRM nodes.
pub const DRM_MAJOR: u32 = proto::abi::drm::DRM_MAJOR;

/// One open of `/dev/kfd` and every dup of it. When the last fd referring to
/// it closes, the KFD process ends.
pub struct KfdHandle {
    pub kfd: Arc<dyn OpenKfd>,
}

impl Drop for KfdHandle {
    fn drop(&mut self) {
        crate::observe::closing(&*self.kfd);
        self.kfd.close();
    }
}

/// What a fake fd stands for.
#[derive(Clone)]
pub enum FakeFd {
    Kfd(Arc<KfdHandle>),
    Render(u32),
}

impl FakeFd {
    /// The `st_rdev` this fd reports.
    pub fn device(&self) -> DeviceNode {
        match self {
            FakeFd::Kfd(_) => DeviceNode::Kfd,
            FakeFd::Render(m) => DeviceNode::Render(*m),
        }
    }
}

pub struct State {
    pid: u32,
    /// Root of the fake sysfs/procfs tree.
    pub root: PathBuf,
    pub driver: Box<dyn Driver>,
    /// The KFD process of this application process, while any fd holds it.
    kfd: Mutex<Weak<KfdHandle>>,
    fds: RwLock<HashMap<RawFd, FakeFd>>,
    /// Fake fds of the parent process at the time this (forked) process
    /// initialised; see [`inherited_device`].
    inherited: Mutex<HashSet<RawFd>>,
}

static STATE: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());
static INIT: Mutex<()> = Mutex::new(());

/// The state, if this process has initialised it (never initialises).
pub fn get() -> Option<&'static State> {
    let p = STATE.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: STATE only ever holds pointers from Box::leak, never freed.
    let st = unsafe { &*p };
    (st.pid == std::process::id()).then_some(st)
}

/// The state, initialising it on first use (or afresh in a forked child).
pub fn get_or_init() -> Result<&'static State, Errno> {
    if let Some(st) = get() {
        return Ok(st);
    }
    let _lock = INIT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(st) = get() {
        return Ok(st);
    }
    let previous = STATE.load(Ordering::Acquire);
    let stale = if previous.is_null() {
        HashSet::new()
    } else {
        // SAFETY: as in `get`; the parent's state is leaked, not freed: its
        // locks may have been held by threads that do not exist here.
        let old = unsafe { &*previous };
        old.fds.try_read().map(|f| f.keys().copied().collect()).unwrap_or_default()
    };
    let st = crate::init::build_state(stale)?;
    STATE.store(Box::leak(Box::new(st)), Ordering::Release);
    Ok(get().expect("just stored for this pid"))
}

impl State {
    pub fn new(root: PathBuf, driver: Box<dyn Driver>, inherited: HashSet<RawFd>) -> State {
        State {
            pid: std::process::id(),
            root,
            driver,
            kfd: Mutex::new(Weak::new()),
            fds: RwLock::new(HashMap::new()),
            inherited: Mutex::new(inherited),
        }
    }

    /// The fake fd `fd`, if it is one.
    pub fn fake(&self, fd: RawFd) -> Option<FakeFd> {
        self.fds.read().unwrap_or_else(|e| e.into_inner()).get(&fd).cloned()
    }

    /// Every fake fd of this process, and those it inherited.
    fn all_fake_fds(&self) -> HashSet<RawFd> {
        // try_*: in a forked child these locks may be held by a parent thread
        // that does not exist here; then we know nothing rather than hang.
        let mut all: HashSet<RawFd> = self.fds.try_read().map(|f| f.keys().copied().collect()).unwrap_or_default();
        if let Ok(i) = self.inherited.try_lock() {
            all.extend(i.iter().copied());
        }
        all
    }

    /// Forgets an inherited fd (the application closed it).
    pub fn forget_inherited(&self, fd: RawFd) {
        self.inherited.lock().unwrap_or_else(|e| e.into_inner()).remove(&fd);
    }

    /// The current KFD process, if `/dev/kfd` is open.
    pub fn current_kfd(&self) -> Option<Arc<KfdHandle>> {
        self.kfd.lock().unwrap_or_else(|e| e.into_inner()).upgrade()
    }

    /// Whether `fd` belongs to the driver (a memory file the application
    /// must not close).
    pub fn owns_internal_fd(&self, fd: RawFd) -> bool {
        self.current_kfd().is_some_and(|k| k.kfd.owns_fd(fd))
    }

    /// Opens a device node: a new fake fd.
    pub fn open_device(&self, node: DeviceNode, cloexec: bool) -> Result<RawFd, Errno> {
        let fake = match node {
            DeviceNode::Kfd => {
                // Like the kernel, every open by one process reaches the same
                // KFD process.
                let mut slot = self.kfd.lock().unwrap_or_else(|e| e.into_inner());
                let handle = match slot.upgrade() {
                    Some(h) => h,
                    None => {
                        let h = Arc::new(KfdHandle { kfd: self.driver.open_kfd()? });
                        crate::observe::opened(&h.kfd);
                        *slot = Arc::downgrade(&h);
                        h
                    }
                };
                FakeFd::Kfd(handle)
            }
            DeviceNode::Render(minor) => {
                if !self.driver.has_render_node(minor) {
                    return Err(libc::ENOENT);
                }
                FakeFd::Render(minor)
            }
        };
        let fd = new_placeholder_fd(node, cloexec)?;
        self.fds.write().unwrap_or_else(|e| e.into_inner()).insert(fd, fake);
        Ok(fd)
    }

    /// Records that `new` now refers to what `old` does (dup and friends).
    pub fn duplicated(&self, old: &FakeFd, new: RawFd) {
        let replaced = self.fds.write().unwrap_or_else(|e| e.into_inner()).insert(new, old.clone());
        drop(replaced);
    }

    /// Forgets fake fd `fd` (closed, or replaced by dup2). Dropping the
    /// returned value may end the KFD process; callers drop it after every
    /// lock is released.
    pub fn remove(&self, fd: RawFd) -> Option<FakeFd> {
        self.fds.write().unwrap_or_else(|e| e.into_inner()).remove(&fd)
    }

    /// Number of fake fds (for tests and statistics).
    pub fn fake_fd_count(&self) -> usize {
        self.fds.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// The state of the process we were forked from, if this process has not
/// initialised its own.
fn parent_state() -> Option<&'static State> {
    let p = STATE.load(Ordering::Acquire);
    // SAFETY: STATE only ever holds leaked, never-freed states.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// If `fd` is a device fd this process inherited across fork, which device.
///
/// The real driver answers a child that uses its parent's `/dev/kfd` fd with
/// EBADF (the fd belongs to the parent's KFD process). To recognise such fds
/// without confusing them with a reused fd number, a candidate from the
/// parent's table is confirmed by the name of the file it refers to.
pub fn inherited_device(fd: RawFd) -> Option<DeviceNode> {
    let candidate = match (get(), parent_state()) {
        (Some(st), _) => st.inherited.lock().unwrap_or_else(|e| e.into_inner()).contains(&fd),
        (None, Some(parent)) => parent.all_fake_fds().contains(&fd),
        (None, None) => false,
    };
    if !candidate {
        return None;
    }
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let name = link.to_str()?.strip_prefix("/memfd:")?.split(' ').next()?;
    placeholder_device(name)
}

/// The placeholder memfd name of a device, and back.
fn placeholder_name(node: DeviceNode) -> String {
    match node {
        DeviceNode::Kfd => "rocjitsu-dev-kfd".to_string(),
        DeviceNode::Render(m) => format!("rocjitsu-dev-dri-renderD{m}"),
    }
}

fn placeholder_device(name: &str) -> Option<DeviceNode> {
    if name == "rocjitsu-dev-kfd" {
        return Some(DeviceNode::Kfd);
    }
    name.strip_prefix("rocjitsu-dev-dri-renderD")?.parse().ok().map(DeviceNode::Render)
}

/// A real fd to stand for a device: a small memfd whose name shows what it
/// is in `/proc/<pid>/fd`. Never 0, 1 or 2 (libhsakmt reads fd 0 as "not
/// open"; stdio numbers belong to the application).
fn new_placeholder_fd(node: DeviceNode, cloexec: bool) -> Result<RawFd, Errno> {
    use rustix::fs::MemfdFlags;
    let name = placeholder_name(node);
    let flags = if cloexec { MemfdFlags::CLOEXEC } else { MemfdFlags::empty() };
    let fd = rustix::fs::memfd_create(name, flags).map_err(|e| e.raw_os_error())?;
    let fd = if std::os::fd::AsRawFd::as_raw_fd(&fd) < 3 {
        let moved = if cloexec {
            rustix::io::fcntl_dupfd_cloexec(&fd, 3)
        } else {
            // SAFETY: F_DUPFD on an fd we own returns a new fd we then own.
            let raw = unsafe { real::fcntl(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::F_DUPFD, 3) };
            if raw < 0 {
                return Err(real::errno());
            }
            // SAFETY: `raw` is a fresh fd returned by F_DUPFD.
            Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) })
        };
        moved.map_err(|e| e.raw_os_error())?
    } else {
        fd
    };
    Ok(fd.into_raw_fd())
}

impl State {
    /// Where a tree-relative path lives on disk.
    pub fn tree_path(&self, rel: &str) -> std::ffi::CString {
        use std::os::unix::ffi::OsStrExt;
        let p = self.root.join(rel);
        std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
    }

    /// Whether a device node exists in the simulated machine.
    pub fn device_exists(&self, node: DeviceNode) -> Result<(), Errno> {
        match node {
            DeviceNode::Kfd => Ok(()),
            DeviceNode::Render(m) if self.driver.has_render_node(m) => Ok(()),
            DeviceNode::Render(_) => Err(libc::ENOENT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_names_round_trip() {
        for node in [DeviceNode::Kfd, DeviceNode::Render(128), DeviceNode::Render(255)] {
            assert_eq!(placeholder_device(&placeholder_name(node)), Some(node));
        }
        assert_eq!(placeholder_device("rocjitsu-gpu-memory-12"), None);
        assert_eq!(placeholder_device("rocjitsu-dev-dri-renderDx"), None);
    }
}
