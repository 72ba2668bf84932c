//! Threads the simulator starts (GPU scheduler, wave workers) and how an embedder marks them.

/// Runs `f` at the start of every thread the simulator creates (the preload
/// library marks its threads so their libc calls bypass its hooks).
pub type ThreadHook = std::sync::Arc<dyn Fn() + Send + Sync>;
