//! Linearizability and sequential consistency of client histories.
//!
//! A [`History`] records operations: which client invoked what, when, and what
//! it returned (or that it is still pending). A [`SequentialSpec`] says what
//! the object does when operations run one at a time. [`check`] decides
//! whether the history can be explained by some sequential order:
//!
//! - [`Consistency::Linearizable`]: the order respects real time (an operation
//!   that returned before another was invoked comes first);
//! - [`Consistency::Sequential`]: the order respects each client's program
//!   order only.
//!
//! Pending operations may take effect (with any result) or not at all. The
//! search is Wing and Gong's, with Lowe's memoisation of (linearized set, spec
//! state) pairs; specs that declare a [`SequentialSpec::partition`] (the
//! bundled key-value map does, per key) are checked one partition at a time
//! for linearizability, which is local (Herlihy and Wing), but not for
//! sequential consistency, which is not.
//!
//! A failure comes with an [`Explanation`]: the shortest failing prefix of
//! the history and a minimal set of operations that conflict.
//!
//! ```
//! use cmc_linearizability::{check, Consistency, History};
//! use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
//!
//! let mut history = History::new();
//! let write = history.invoke(0, RegisterOp::Write(1));
//! history.respond(write, RegisterRet::Ack);
//! let read = history.invoke(1, RegisterOp::Read);
//! history.respond(read, RegisterRet::Value(0)); // stale
//! let verdict = check(&Register, &history, Consistency::Linearizable);
//! let why = verdict.explanation().expect("a stale read is not linearizable");
//! assert_eq!(why.conflict, vec![write, read]);
//! assert!(check(&Register, &history, Consistency::Sequential).is_ok());
//! ```

mod configurations;
mod explain;
mod history;
mod search;
mod spec;
pub mod specs;

pub use configurations::{Linearizations, OpKey};
pub use explain::{check, Explanation, Verdict};
pub use history::{History, OpId, Operation, Response};
pub use search::Consistency;
pub use spec::SequentialSpec;

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
