//! loom 0.7's public API on cmc-thread's checker, so that an existing loom test suite runs
//! unchanged with `[patch.crates-io] loom = { path = "crates/loom" }` (or
//! `cargo test --config 'patch.crates-io.loom.path="..."'`) plus the crate's own `--cfg`.
//!
//! [`model`] explores with cmc's DPOR and its weak memory model (RC11, as loom explores
//! weak behaviours too); a failure panics with cmc's report (interleaving table, schedule).
//! The README lists what loom has and this crate does not, and why.

pub mod alloc;
pub mod cell;
pub mod future;
pub mod hint;
pub mod lazy_static;
pub mod model;
pub mod sync;
pub mod thread;

pub use model::model;

/// loom's bound on threads per execution (cmc's own bound is 64).
pub const MAX_THREADS: usize = 5;

/// Declares thread-locals with one value per model thread (`with`, `try_with`).
#[macro_export]
macro_rules! thread_local {
    ($($body:tt)*) => { $crate::__cmc::thread_local!($($body)*); };
}

/// loom's `lazy_static!`: each static is initialised again in every execution.
#[macro_export]
macro_rules! lazy_static {
    () => {};
    ($(#[$attr:meta])* $vis:vis static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::lazy_static::Lazy<$t> =
            $crate::lazy_static::Lazy::new(|| $init);
        $crate::lazy_static!($($rest)*);
    };
}

#[doc(hidden)]
pub use cmc_thread as __cmc;
