//! The one-`cfg` switch between std and cmc, as loom users do with `cfg(loom)`:
//!
//! ```
//! use cmc_thread::shim::sync::atomic::{AtomicUsize, Ordering};
//! use cmc_thread::shim::sync::Arc;
//! use cmc_thread::shim::thread;
//!
//! fn counter() -> usize {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let n2 = n.clone();
//!     thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst)).join().unwrap();
//!     n.load(Ordering::SeqCst)
//! }
//!
//! // Built normally: std types, `model` runs the closure once on real threads.
//! // Built with `RUSTFLAGS="--cfg cmc"`: cmc types, `model` explores its schedules.
//! cmc_thread::shim::model(|| assert_eq!(counter(), 1));
//! ```
//!
//! Code written against `shim::{sync, thread}` is the code that ships: without `cfg(cmc)`
//! the paths are std's own (`shim::sync` *is* `std::sync`), so the checker costs nothing in
//! production builds. Crates that use the cfg should declare it to rustc with
//! `[lints.rust] unexpected_cfgs = { level = "warn", check-cfg = ["cfg(cmc)"] }`.

#[cfg(cmc)]
pub use crate::{fs, net, sync, thread, time};
#[cfg(not(cmc))]
pub use std::{fs, net, sync, thread, time};

/// `thread_local!`: cmc's (one value per virtual thread) under the cfg, std's otherwise.
#[cfg(cmc)]
pub use crate::thread_local;
#[cfg(not(cmc))]
pub use std::thread_local;

/// Under `cfg(cmc)`: explores `f` with the default [`Checker`](crate::Checker) and panics
/// with the failure report if one is found. Otherwise: runs `f` once.
pub fn model<F: Fn() + Send + Sync + 'static>(f: F) {
    #[cfg(cmc)]
    if let Err(failure) = crate::Checker::new().check(f) {
        panic!("{failure}");
    }
    #[cfg(not(cmc))]
    f();
}
