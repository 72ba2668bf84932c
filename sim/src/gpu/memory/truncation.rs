//! A guard against files that shrink under our mappings.
//!
//! A daemon client may lend memory that lives in a file it cannot seal: a
//! `MAP_SHARED` mapping of a `/dev/shm` file (HIP's IPC events are such a
//! file, registered with `hipHostRegister` by two processes). If the client
//! truncates the file, an access to the vanished part raises SIGBUS — in the
//! daemon, where it would take down every client. Display servers face the
//! same with their clients' shared-memory buffers and answer it the same way:
//! a SIGBUS handler that, for an address inside a guarded range, maps an
//! anonymous zero page over the faulting page and lets the access retry. The
//! guilty client's GPU then reads zeros where its data was; nobody else is
//! touched. A SIGBUS anywhere else goes to the handler that was there before
//! (Rust's own, or the default action).
//!
//! Written by hand because no crate offers a range-checked SIGBUS recovery;
//! the handler only reads atomics and makes one `mmap` system call, both
//! async-signal-safe.

use super::{MemoryError, PAGE_SIZE};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many ranges can be guarded at once (lent file pieces are few: one per
/// registration of a shared file mapping).
const SLOTS: usize = 1024;

/// `[start, end)` of each guarded range; a free slot has `start == 0`. A slot
/// is claimed by its start (compare-and-swap) and its end written after, so a
/// handler that sees a start with a zero end ignores the slot.
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// The SIGBUS action before ours, called for faults outside guarded ranges.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// A guarded range; unguarded when dropped (after its mapping is gone).
#[derive(Debug)]
pub struct Guard {
    slot: usize,
}

impl Drop for Guard {
    fn drop(&mut self) {
        ENDS[self.slot].store(0, Ordering::Release);
        STARTS[self.slot].store(0, Ordering::Release);
    }
}

/// Guards `[start, start + len)`: a SIGBUS there is survived (see the module docs).
pub fn guard(start: usize, len: usize) -> Result<Guard, MemoryError> {
    install()?;
    for (slot, s) in STARTS.iter().enumerate() {
        if s.compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            ENDS[slot].store(start + len, Ordering::Release);
            return Ok(Guard { slot });
        }
    }
    Err(MemoryError::OutOfMemory { requested: len as u64 })
}

fn install() -> Result<(), MemoryError> {
    let mut result = Ok(());
    PREVIOUS.get_or_init(|| {
        // SAFETY: plain sigaction calls with zeroed, then filled, structures; the
        // handler is an `extern "C"` function that never unwinds.
        unsafe {
            let mut ours: libc::sigaction = std::mem::zeroed();
            ours.sa_sigaction = on_sigbus as *const () as usize;
            ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut ours.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &ours, &mut previous) != 0 {
                result = Err(MemoryError::Map(rustix::io::Errno::from_raw_os_error(
                    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL),
                )));
            }
            previous
        }
    });
    result
}

/// Whether `addr` lies in a guarded range.
fn guarded(addr: usize) -> bool {
    STARTS.iter().zip(&ENDS).any(|(s, e)| {
        let start = s.load(Ordering::Acquire);
        start != 0 && addr >= start && addr < e.load(Ordering::Acquire)
    })
}

extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if guarded(addr) {
        let page = addr & !(PAGE_SIZE as usize - 1);
        // SAFETY: replaces one page of a guarded range — memory the simulator
        // mapped from a client's file, reached only through addresses it
        // hands out — with a private zero page; the faulting access retries.
        let mapped = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                PAGE_SIZE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped != libc::MAP_FAILED {
            return;
        }
    }
    // Not ours: what would have happened without us.
    match PREVIOUS.get() {
        Some(previous) if previous.sa_sigaction > libc::SIG_IGN => {
            let handler = previous.sa_sigaction;
            if previous.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed as an SA_SIGINFO
                // handler with this signature.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(handler) };
                f(signal, info, context);
            } else {
                // SAFETY: as above, a plain handler.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
                f(signal);
            }
        }
        _ => {
            // SAFETY: restoring the default action; returning re-executes the
            // access, which then ends the process as SIGBUS would have.
            unsafe { libc::signal(libc::SIGBUS, libc::SIG_DFL) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::MemfdFlags;
    use rustix::mm::{MapFlags, ProtFlags};

    #[test]
    fn a_truncated_file_reads_as_zeros_in_a_guarded_range() {
        let fd = rustix::fs::memfd_create("truncation-test", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, 2 * PAGE_SIZE).unwrap();
        rustix::io::pwrite(&fd, b"kept", 0).unwrap();
        // SAFETY: a fresh shared mapping of our own file.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                2 * PAGE_SIZE as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .unwrap()
        .cast::<u8>();
        let guard = guard(p as usize, 2 * PAGE_SIZE as usize).unwrap();
        rustix::fs::ftruncate(&fd, PAGE_SIZE).unwrap();
        // SAFETY: both pages are mapped; the second lies beyond the file's end
        // now, and the guard turns its SIGBUS into a zero page.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 4), b"kept");
            assert_eq!(p.add(PAGE_SIZE as usize + 8).read_volatile(), 0);
            p.add(PAGE_SIZE as usize + 8).write_volatile(7);
            assert_eq!(p.add(PAGE_SIZE as usize + 8).read_volatile(), 7);
            rustix::mm::munmap(p.cast(), 2 * PAGE_SIZE as usize).unwrap();
        }
        drop(guard);
        assert!(!guarded(p as usize + PAGE_SIZE as usize));
    }
}
