//! HSA signal waits: active (spinning) waits become blocked ones.
//!
//! HIP's default scheduling (`hipDeviceScheduleAuto`) spins while waiting for the GPU
//! whenever there are fewer GPUs than cores, through HSA waits with
//! `HSA_WAIT_STATE_ACTIVE`. On real hardware that costs the application one core; here
//! the GPU *is* host cores, so a spinning waiter takes a core away from the simulated GPU
//! it waits for (on a 2-core machine, half of it). An active wait therefore spins for at
//! most [`SPIN_NS`] (short kernels still complete with spin-wait latency) and then waits
//! with `HSA_WAIT_STATE_BLOCKED`: ROCR sleeps on the KFD event that the simulated command
//! processor signals on completion. No result or ordering changes, only who burns the
//! CPU. `ROCJITSU_ACTIVE_WAIT=1` keeps the application's own choice.
//!
//! These are exported under HSA's names, so the application's calls into
//! libhsa-runtime64 (through the PLT) reach them first; they forward to the next
//! definition with `dlsym(RTLD_NEXT)`.
//!
//! A wait state alone is not enough: ROCR makes a signal whose only consumers are GPUs a
//! busy-wait signal, which spins in every wait, blocked ones included. HIP 6.x creates its
//! completion signals so while it waits actively (its default), so `hsa_signal_create` and
//! `hsa_amd_signal_create` here ask for signals any agent may consume ([`sleepable`]),
//! which ROCR makes interrupt signals that a waiter sleeps on.

use libc::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const HSA_WAIT_STATE_BLOCKED: u32 = 0;
const HSA_WAIT_STATE_ACTIVE: u32 = 1;

/// How long an active wait may spin before it blocks, in HSA timestamp units (ns: the
/// simulated KFD reports a 1 GHz system clock).
const SPIN_NS: u64 = 50_000;

/// Whether `value` satisfies HSA signal condition `condition` against `compare`.
fn satisfied(condition: u32, value: i64, compare: i64) -> bool {
    match condition {
        0 => value == compare, // HSA_SIGNAL_CONDITION_EQ
        1 => value != compare, // NE
        2 => value < compare,  // LT
        3 => value >= compare, // GTE
        _ => true,             // let ROCR report the bad condition
    }
}

/// Whether the application's active waits are kept (`ROCJITSU_ACTIVE_WAIT=1`).
fn keep_active_waits() -> bool {
    static KEEP: OnceLock<bool> = OnceLock::new();
    *KEEP.get_or_init(|| std::env::var_os("ROCJITSU_ACTIVE_WAIT").is_some_and(|v| v == "1"))
}

/// Runs `wait(timeout, hint)` as the application asked, or, for an active wait, as a
/// short active wait followed by a blocked one.
fn bounded_spin(timeout: u64, hint: u32, done: impl Fn(i64) -> bool, wait: impl Fn(u64, u32) -> i64) -> i64 {
    if hint != HSA_WAIT_STATE_ACTIVE || keep_active_waits() {
        return wait(timeout, hint);
    }
    let v = wait(timeout.min(SPIN_NS), HSA_WAIT_STATE_ACTIVE);
    if done(v) || timeout <= SPIN_NS {
        return v;
    }
    wait(timeout - SPIN_NS, HSA_WAIT_STATE_BLOCKED)
}

/// The next definition of `name` (NUL-terminated). ROCR is loaded whenever these are
/// called (the caller linked against it), so a missing symbol is a broken install.
/// `RTLD_NEXT` only searches the global scope; a runtime loaded with `RTLD_LOCAL`
/// (Python's `ctypes.CDLL("libamdhip64.so")`) is found through its already-loaded handle.
fn next(slot: &AtomicUsize, name: &'static [u8]) -> *const c_void {
    let mut p = slot.load(Ordering::Acquire);
    if p == 0 {
        // SAFETY: `name` is a NUL-terminated static string; dlsym only reads it.
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast::<c_char>()) } as usize;
        if p == 0 {
            // SAFETY: RTLD_NOLOAD only returns a handle to an already-loaded library (never
            // loads one); the names are NUL-terminated static strings.
            let handle =
                unsafe { libc::dlopen(c"libhsa-runtime64.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
            if !handle.is_null() {
                // SAFETY: as above; the handle stays valid while ROCR is loaded, and we
                // keep the reference dlopen took so it stays loaded.
                p = unsafe { libc::dlsym(handle, name.as_ptr().cast::<c_char>()) } as usize;
            }
        }
        if p == 0 {
            let msg = b"rocjitsu: libhsa-runtime64 does not export an HSA wait function\n";
            // SAFETY: writing a static buffer to stderr.
            unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
            std::process::abort();
        }
        slot.store(p, Ordering::Release);
    }
    p as *const c_void
}

macro_rules! signal_wait {
    ($name:ident) => {
        /// HSA's signal wait with a blocked wait state (see the module docs).
        ///
        /// # Safety
        /// The caller upholds HSA's contract for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $name(signal: u64, condition: u32, compare: i64, timeout: u64, hint: u32) -> i64 {
            static SLOT: AtomicUsize = AtomicUsize::new(0);
            let p = next(&SLOT, concat!(stringify!($name), "\0").as_bytes());
            // SAFETY: `p` is libhsa-runtime64's function of this name; `hsa_signal_t` is a
            // struct of one u64, passed like a u64.
            let real: unsafe extern "C" fn(u64, u32, i64, u64, u32) -> i64 = unsafe { std::mem::transmute(p) };
            bounded_spin(
                timeout,
                hint,
                |v| satisfied(condition, v, compare),
                // SAFETY: forwarded contract.
                |t, h| unsafe { real(signal, condition, compare, t, h) },
            )
        }
    };
}

signal_wait!(hsa_signal_wait_scacquire);
signal_wait!(hsa_signal_wait_relaxed);
signal_wait!(hsa_signal_wait_acquire);

/// `hsa_amd_signal_wait_any` with a blocked wait state (see the module docs).
///
/// # Safety
/// The caller upholds HSA's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    count: u32,
    signals: *mut u64,
    conditions: *mut u32,
    values: *mut i64,
    timeout: u64,
    hint: u32,
    satisfying_value: *mut i64,
) -> u32 {
    static SLOT: AtomicUsize = AtomicUsize::new(0);
    let p = next(&SLOT, b"hsa_amd_signal_wait_any\0");
    type WaitAny = unsafe extern "C" fn(u32, *mut u64, *mut u32, *mut i64, u64, u32, *mut i64) -> u32;
    // SAFETY: `p` is libhsa-runtime64's hsa_amd_signal_wait_any, of this C signature.
    let real: WaitAny = unsafe { std::mem::transmute(p) };
    // The result is the index of the satisfied signal, or `count` when none is (timeout).
    let index = bounded_spin(
        timeout,
        hint,
        |i| i < i64::from(count),
        // SAFETY: forwarded contract.
        |t, h| i64::from(unsafe { real(count, signals, conditions, values, t, h, satisfying_value) }),
    );
    index as u32
}

/// `HSA_AMD_SIGNAL_AMD_GPU_ONLY`: only GPUs consume the signal (ROCR makes it busy-wait).
const GPU_ONLY: u64 = 1;
const HSA_STATUS_SUCCESS: u32 = 0;

/// Creates a signal the host can sleep on: HIP 6.x creates its completion signals with the
/// GPU as their only consumer when it waits actively (its default), and ROCR makes those
/// busy-wait signals, which spin in every wait whatever its wait state: a `hipMemcpy` after
/// a long kernel kept a host core busy for the kernel's whole run. Consumers are a hint
/// (HSA: with none given, any agent may consume the signal), so `create(0, none, attributes
/// without GPU_ONLY)` is asked first, which gives an interrupt signal; if that fails (for
/// instance no KFD event is left), `original()` is.
fn sleepable(num_consumers: u32, attributes: u64, create: impl Fn(u32, u64) -> u32, original: impl Fn() -> u32) -> u32 {
    if keep_active_waits() || (num_consumers == 0 && attributes & GPU_ONLY == 0) {
        return original();
    }
    match create(0, attributes & !GPU_ONLY) {
        HSA_STATUS_SUCCESS => HSA_STATUS_SUCCESS,
        _ => original(),
    }
}

/// `hsa_signal_create` whose signal the host can sleep on ([`sleepable`]).
///
/// # Safety
/// The caller upholds HSA's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn hsa_signal_create(
    initial: i64,
    num_consumers: u32,
    consumers: *const u64,
    signal: *mut u64,
) -> u32 {
    static SLOT: AtomicUsize = AtomicUsize::new(0);
    let p = next(&SLOT, b"hsa_signal_create\0");
    type Create = unsafe extern "C" fn(i64, u32, *const u64, *mut u64) -> u32;
    // SAFETY: `p` is libhsa-runtime64's hsa_signal_create, of this C signature
    // (`hsa_agent_t` and `hsa_signal_t` are structs of one u64).
    let real: Create = unsafe { std::mem::transmute(p) };
    sleepable(
        num_consumers,
        0,
        // SAFETY: forwarded contract; no consumer list is read when there are none.
        |n, _| unsafe { real(initial, n, std::ptr::null(), signal) },
        // SAFETY: forwarded contract.
        || unsafe { real(initial, num_consumers, consumers, signal) },
    )
}

/// `hsa_amd_signal_create` whose signal the host can sleep on ([`sleepable`]).
///
/// # Safety
/// The caller upholds HSA's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_create(
    initial: i64,
    num_consumers: u32,
    consumers: *const u64,
    attributes: u64,
    signal: *mut u64,
) -> u32 {
    static SLOT: AtomicUsize = AtomicUsize::new(0);
    let p = next(&SLOT, b"hsa_amd_signal_create\0");
    type Create = unsafe extern "C" fn(i64, u32, *const u64, u64, *mut u64) -> u32;
    // SAFETY: `p` is libhsa-runtime64's hsa_amd_signal_create, of this C signature.
    let real: Create = unsafe { std::mem::transmute(p) };
    sleepable(
        num_consumers,
        attributes,
        // SAFETY: forwarded contract; no consumer list is read when there are none.
        |n, a| unsafe { real(initial, n, std::ptr::null(), a, signal) },
        // SAFETY: forwarded contract.
        || unsafe { real(initial, num_consumers, consumers, attributes, signal) },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// What `sleepable` asked for: `Some((consumers, attributes))` for the changed request,
    /// `None` for the original.
    fn requests(num_consumers: u32, attributes: u64, changed_result: u32) -> Vec<Option<(u32, u64)>> {
        let asked = RefCell::new(Vec::new());
        sleepable(
            num_consumers,
            attributes,
            |n, a| {
                asked.borrow_mut().push(Some((n, a)));
                changed_result
            },
            || {
                asked.borrow_mut().push(None);
                HSA_STATUS_SUCCESS
            },
        );
        asked.into_inner()
    }

    #[test]
    fn a_gpu_only_signal_is_asked_for_as_one_any_agent_may_consume() {
        // Consumers given: none asked instead (attributes kept, bar GPU_ONLY).
        assert_eq!(requests(1, 0, HSA_STATUS_SUCCESS), [Some((0, 0))]);
        assert_eq!(requests(2, 2, HSA_STATUS_SUCCESS), [Some((0, 2))]);
        // GPU_ONLY without consumers: cleared; the IPC attribute (2) stays.
        assert_eq!(requests(0, GPU_ONLY | 2, HSA_STATUS_SUCCESS), [Some((0, 2))]);
        // Already a signal the host may wait on: the original request.
        assert_eq!(requests(0, 0, HSA_STATUS_SUCCESS), [None]);
        assert_eq!(requests(0, 2, HSA_STATUS_SUCCESS), [None]);
    }

    #[test]
    fn a_failed_changed_request_falls_back_to_the_original() {
        const OUT_OF_RESOURCES: u32 = 0x1008;
        assert_eq!(requests(1, GPU_ONLY, OUT_OF_RESOURCES), [Some((0, 0)), None]);
    }
}
