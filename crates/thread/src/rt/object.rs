//! Per-execution state of instrumented objects (what decides whether an operation is enabled).

use super::op::ThreadId;

/// The synchronisation state the scheduler needs to know about an object.
#[derive(Debug)]
pub enum ObjState {
    /// An object whose operations never block (atomics, reference counts).
    Plain,
    /// A mutex and its owner.
    Mutex {
        /// The thread holding the lock.
        owner: Option<ThreadId>,
    },
    /// The park token of a thread.
    Park {
        /// Whether an unpark is pending.
        token: bool,
    },
}

/// An instrumented object registered in the current execution.
#[derive(Debug)]
pub struct Object {
    /// Type name shown in traces, e.g. `AtomicUsize`.
    pub type_name: &'static str,
    /// Number of writes so far (spin detection compares versions).
    pub version: u64,
    /// Blocking state.
    pub state: ObjState,
}
