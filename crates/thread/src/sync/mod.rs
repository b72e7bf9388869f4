//! Drop-in replacements for `std::sync` types whose operations are switch points.

pub mod atomic;
mod mutex;

pub use mutex::{Mutex, MutexGuard};
pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
