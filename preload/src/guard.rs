//! Re-entrancy guard: while our code runs inside a hook (or on a simulator
//! thread), the libc calls it makes — Rust's std opening files, the
//! allocator, logging — reach our hooks again through the PLT. They must go
//! straight to libc, or we would recurse and deadlock.

use std::cell::Cell;

thread_local! {
    // A const-initialised Cell<bool> needs no destructor, so it is usable at
    // any point of a thread's life, including before `main` and during exit.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the current thread is already inside our code.
pub fn inside() -> bool {
    INSIDE.with(|c| c.get())
}

/// Marks the current thread as ours for the rest of its life (simulator
/// threads): every libc call it makes bypasses the hooks.
pub fn enter_forever() {
    INSIDE.with(|c| c.set(true));
}

/// Runs `ours` with the guard held, or `passthrough` if it already is.
/// A panic inside `ours` becomes `on_panic` instead of unwinding into C.
pub fn hook<R>(passthrough: impl FnOnce() -> R, ours: impl FnOnce() -> R, on_panic: impl FnOnce() -> R) -> R {
    if inside() {
        return passthrough();
    }
    INSIDE.with(|c| c.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(ours));
    INSIDE.with(|c| c.set(false));
    result.unwrap_or_else(|_| on_panic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_pass_through_and_panics_are_contained() {
        let r = hook(|| 0, || hook(|| 1, || 2, || 3), || 4);
        assert_eq!(r, 1);
        assert!(!inside());
        let r = hook(|| 0, || panic!("boom"), || 9);
        assert_eq!(r, 9);
        assert!(!inside());
    }
}
