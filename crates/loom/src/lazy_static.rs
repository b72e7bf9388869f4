//! The value behind [`lazy_static!`](crate::lazy_static): cmc's `LazyLock`, initialised
//! again in every execution.

use cmc_thread::sync::LazyLock;

// loom's `lazy_static` module re-exports these (tokio's loom shim names
// `loom::lazy_static::AccessError`).
pub use crate::thread::{panicking, yield_now, AccessError};

/// A lazily initialised static.
pub struct Lazy<T: 'static>(LazyLock<T>);

impl<T: 'static> Lazy<T> {
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> Self {
        Lazy(LazyLock::new(init))
    }
}

impl<T: 'static> std::ops::Deref for Lazy<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
