//! Per-execution state of instrumented objects (what decides whether an operation is enabled).

use super::clock::Knowledge;
use super::op::ThreadId;
use super::race::{AtomicAccesses, CellHistory};
use std::panic::Location;

/// The synchronisation state the scheduler needs to know about an object.
#[derive(Debug)]
pub enum ObjState {
    /// An object whose operations never block.
    Plain,
    /// An `Arc` allocation: its strong count after the latest instrumented count operation
    /// of the execution (0 before the first).
    RefCount(usize),
    /// A mutex and its owner.
    Mutex {
        /// The thread holding the lock.
        owner: Option<ThreadId>,
    },
    /// A reader-writer lock: the exclusive owner, or the mask of threads holding it shared.
    RwLock {
        /// The thread holding it exclusively.
        writer: Option<ThreadId>,
        /// Threads holding it shared, as a mask.
        readers: u64,
    },
    /// A condition variable.
    Condvar {
        /// Threads waiting and not yet notified, in wait order.
        waiting: Vec<ThreadId>,
        /// Threads notified and not yet woken, as a mask.
        notified: u64,
    },
    /// A one-time initialisation (`Once`, `OnceLock`).
    Once {
        /// The thread running the initialiser.
        running: Option<ThreadId>,
        /// Whether the initialiser completed.
        done: bool,
    },
    /// An mpsc channel.
    Channel {
        /// Messages queued.
        len: usize,
        /// The capacity of a `sync_channel`.
        capacity: Option<usize>,
        /// Live senders.
        senders: usize,
        /// Whether the receiver is alive.
        receiver: bool,
        /// Messages received so far (a rendezvous sender waits for its own).
        taken: u64,
    },
    /// A barrier for `n` threads.
    Barrier {
        /// Threads it waits for.
        n: usize,
        /// Threads arrived in the current generation.
        arrived: usize,
        /// Completed generations.
        generation: u64,
    },
    /// The park token of a thread.
    Park {
        /// Whether an unpark is pending.
        token: bool,
    },
    /// A tracked `UnsafeCell`: its accesses since the last write, for race detection.
    Cell(CellHistory),
    /// An atomic: its stores and `unsync_load`s, for race detection of the latter.
    Atomic(AtomicAccesses),
}

impl ObjState {
    /// Whether the object's whole state lives in the execution (none in the object itself),
    /// so that two executions running at once may each keep their own copy of it: true for
    /// `Once` (a `OnceLock`'s value is kept by the execution, see `sync::once`).
    pub fn per_execution(&self) -> bool {
        matches!(self, ObjState::Once { .. })
    }
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
    /// What releases into this object carried (happens-before; see `clock.rs`).
    pub sync: Knowledge,
    /// The name the user gave the object, if any.
    pub name: Option<&'static str>,
    /// Where the object was created or first used in the execution.
    pub created: &'static Location<'static>,
    /// The address of its `ObjCell` when it lies in a block allocated with
    /// `cmc_thread::alloc` in this execution, else 0: the objects whose uses are recorded,
    /// found again when their block is freed (`freed.rs`).
    pub addr: usize,
    /// Each thread's latest use of the object: (thread, the thread's own clock entry then,
    /// where), for the race check of a `dealloc` of the block holding it.
    pub uses: Vec<(ThreadId, u32, &'static Location<'static>)>,
}
