//! Drop-in replacements for `std::sync` types whose operations are switch points.

pub mod atomic;
mod mutex;

pub use mutex::{Mutex, MutexGuard};
pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

/// `std::sync::Arc`, re-exported so code can name `sync::Arc` under both cfgs. Reference
/// count changes are not switch points (not instrumented), so `strong_count`/`try_unwrap`
/// races are not explored.
pub use std::sync::Arc;
