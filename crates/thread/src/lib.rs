//! # cmc-thread: thread-level model checking of Rust shared-memory code
//!
//! Code written against the types of this crate (atomics, locks, threads; see [`shim`] for
//! the one-`cfg` switch between std and cmc) runs under a controlled scheduler: every
//! instrumented operation is a *switch point* where the checker decides which virtual thread
//! runs next. Exploration is deterministic and bounded, every failure prints a schedule that
//! replays it exactly, and results are checked against the real code that ships.
//!
//! ```
//! use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
//! use cmc_thread::{thread, Checker};
//! use std::sync::Arc;
//!
//! let failure = Checker::new()
//!     .check(|| {
//!         let n = Arc::new(AtomicUsize::new(0));
//!         let handles: Vec<_> = (0..2)
//!             .map(|_| {
//!                 let n = n.clone();
//!                 thread::spawn(move || {
//!                     let v = n.load(Ordering::SeqCst);
//!                     n.store(v + 1, Ordering::SeqCst);
//!                 })
//!             })
//!             .collect();
//!         for h in handles {
//!             h.join().unwrap();
//!         }
//!         assert_eq!(n.load(Ordering::SeqCst), 2, "lost update");
//!     })
//!     .unwrap_err();
//! assert!(failure.to_string().contains("lost update"));
//! ```
//!
//! ## Memory model
//! By default atomics are sequentially consistent whatever `Ordering` is passed: a load
//! returns the latest store in the explored total order. `Checker::weak_memory(true)`
//! explores the weak behaviours of RC11 (C++20 with load buffering forbidden) with a
//! view-based operational semantics (per-atomic modification orders, per-thread views,
//! release/acquire, release sequences, fences; `SeqCst` accesses ordered among themselves
//! but not fences): a load may read any store its thread's view allows and a non-`SeqCst`
//! store may go to any allowed place in modification order, each such choice explored like
//! a thread choice. It never produces an outcome the model forbids. Allowed outcomes it
//! does not produce: a failed `compare_exchange` reading an older store than the latest, a
//! `SeqCst` store placed before a later one. The `Ordering` also decides
//! happens-before, which data-race detection on [`cell::UnsafeCell`] uses (in both modes):
//! a relaxed flag does not publish the data it guards.
//!
//! ## Runtime
//! Virtual threads are coroutines on one OS thread (the explorer's), so exactly one runs at a
//! time and a switch costs a few nanoseconds. std's thread-locals are therefore shared by
//! all virtual threads of an execution; [`thread_local!`] gives each its own.

pub mod alloc;
pub mod cell;
mod explore;
pub mod fs;
pub mod hint;
pub mod lincheck;
pub mod net;
pub mod random;
mod report;
mod rng;
mod rt;
mod schedule;
pub mod shim;
mod stress;
pub mod sync;
pub mod thread;
pub mod time;

pub use explore::{Checker, Mode, Stats};
pub use report::{Failure, TraceRow};
pub use rng::Rng;
pub use rt::{Event, Op, Stop, Value};
pub use schedule::{Choice, Schedule, ScheduleParseError};
pub use stress::{stress, StressFailure};
