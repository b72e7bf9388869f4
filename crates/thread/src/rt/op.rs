//! Operations announced at switch points and events recorded in the trace.

use std::fmt;
use std::panic::Location;

/// Index of a virtual thread inside one execution (0 is the model's main thread).
pub type ThreadId = usize;

/// Index of an instrumented object inside one execution, in creation/first-use order.
pub type ObjId = usize;

/// Whether an access only observes an object or may change it (for the dependency relation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Observes the object without changing it.
    Read,
    /// May change the object.
    Write,
    /// A change that commutes with every other `Commute` access of the object (a
    /// reference-count increment or a decrement that does not reach zero); it still
    /// conflicts with reads and writes.
    Commute,
}

impl Access {
    /// Whether two accesses of one object by different threads may fail to commute.
    pub fn conflicts(self, other: Access) -> bool {
        !matches!(
            (self, other),
            (Access::Read, Access::Read) | (Access::Commute, Access::Commute)
        )
    }
}

/// The kind of an atomic access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    /// `load`.
    Load,
    /// `store`.
    Store,
    /// A named operation that only observes the value (e.g. `Arc::strong_count`).
    Observe(&'static str),
    /// A read-modify-write (`swap`, `fetch_*`, `compare_exchange*`, `fetch_update` step).
    Rmw(&'static str),
    /// A reference-count change (`Arc` clone or drop): commutes with other count changes
    /// unless it is a drop that reaches zero (recorded as `Value::Update(_, 0)`).
    Count(&'static str),
}

impl AtomicKind {
    /// How the access touches its atomic.
    pub fn access(self) -> Access {
        match self {
            AtomicKind::Load | AtomicKind::Observe(_) => Access::Read,
            AtomicKind::Count(_) => Access::Commute,
            AtomicKind::Store | AtomicKind::Rmw(_) => Access::Write,
        }
    }

    /// Short name for traces.
    pub fn name(self) -> &'static str {
        match self {
            AtomicKind::Load => "load",
            AtomicKind::Store => "store",
            AtomicKind::Observe(n) | AtomicKind::Rmw(n) | AtomicKind::Count(n) => n,
        }
    }
}

/// An operation a virtual thread announces before performing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The first step of a freshly spawned thread.
    Start,
    /// Spawning thread `child`.
    Spawn(ThreadId),
    /// Waiting for thread `target` to finish.
    Join(ThreadId),
    /// An atomic access.
    Atomic(ObjId, AtomicKind),
    /// A `SeqCst` atomic access in weak-memory mode: it also takes part in the single total
    /// order of `SeqCst` operations, object `.2`.
    SeqCst(ObjId, AtomicKind, ObjId),
    /// `fence(SeqCst)` in weak-memory mode: a step in the `SeqCst` order, object `.0`.
    Fence(ObjId),
    /// Acquiring a mutex.
    Lock(ObjId),
    /// Trying to acquire a mutex without blocking.
    TryLock(ObjId),
    /// Releasing a mutex.
    Unlock(ObjId),
    /// Acquiring a reader-writer lock shared.
    ReadLock(ObjId),
    /// Trying to acquire a reader-writer lock shared without blocking.
    TryReadLock(ObjId),
    /// Waiting on condvar `.0`: releases mutex `.1` and starts waiting, in one step.
    CondWait(ObjId, ObjId),
    /// Waking from a condvar wait: blocks until notified, unless `.1` (a timed wait, which may
    /// time out at any point).
    CondWake(ObjId, bool),
    /// Notifying one (`false`) or all (`true`) waiters of a condvar.
    Notify(ObjId, bool),
    /// Entering a one-time initialisation (blocks while another thread runs it).
    OnceEnter(ObjId),
    /// Completing a one-time initialisation.
    OnceDone(ObjId),
    /// Observing whether a one-time initialisation completed.
    OnceGet(ObjId),
    /// Sending on a channel (blocks while a `sync_channel` is full).
    Send(ObjId),
    /// Receiving from a channel (blocks while it is empty and has senders).
    Recv(ObjId),
    /// Receiving from a channel without blocking.
    TryRecv(ObjId),
    /// Dropping a channel's sender or receiver.
    Disconnect(ObjId),
    /// Parking the current thread (blocks until its token is available).
    Park(ObjId),
    /// Unparking the thread whose token object is given.
    Unpark(ObjId),
    /// A plain preemption point with no shared effect (`yield_now`, `spin_loop`).
    Yield,
    /// `thread::sleep`: a yield point that advances the execution's virtual time.
    Sleep,
    /// Parking with a timeout: takes the token if available, otherwise times out (never
    /// blocks, so both outcomes are explored).
    ParkTimeout(ObjId),
    /// Receiving with a timeout: takes a message if one is queued, otherwise times out or
    /// reports the disconnection (never blocks).
    RecvTimeout(ObjId),
    /// The second half of a rendezvous send (`sync_channel(0)`): blocks until message
    /// number `.1` of channel `.0` was received.
    SendDone(ObjId, u64),
    /// Arriving at a barrier.
    BarrierWait(ObjId),
    /// Leaving barrier `.0`: blocks until generation `.1` is complete.
    BarrierLeave(ObjId, u64),
}

impl Op {
    /// The objects this operation touches and how; the basis of the DPOR dependency relation.
    pub fn accesses(&self) -> [Option<(ObjId, Access)>; 2] {
        use Access::*;
        match *self {
            Op::Start | Op::Spawn(_) | Op::Join(_) | Op::Yield | Op::Sleep => [None, None],
            Op::Atomic(o, kind) => [Some((o, kind.access())), None],
            Op::SeqCst(o, kind, order) => [Some((o, kind.access())), Some((order, Read))],
            Op::Fence(order) => [Some((order, Write)), None],
            Op::OnceGet(o) => [Some((o, Read)), None],
            Op::CondWait(cv, m) => [Some((cv, Write)), Some((m, Write))],
            Op::Lock(o)
            | Op::TryLock(o)
            | Op::Unlock(o)
            | Op::Park(o)
            | Op::Unpark(o)
            | Op::ReadLock(o)
            | Op::TryReadLock(o)
            | Op::CondWake(o, _)
            | Op::Notify(o, _)
            | Op::OnceEnter(o)
            | Op::OnceDone(o)
            | Op::Send(o)
            | Op::Recv(o)
            | Op::TryRecv(o)
            | Op::Disconnect(o)
            | Op::ParkTimeout(o)
            | Op::RecvTimeout(o)
            | Op::SendDone(o, _)
            | Op::BarrierWait(o)
            | Op::BarrierLeave(o, _) => [Some((o, Write)), None],
        }
    }

    /// Whether `self` and `other`, announced by two different threads, may fail to commute:
    /// they touch a common object with [`Access::conflicts`] accesses (the dependency
    /// relation of DPOR and its sleep sets; conservative for blocking operations). A count
    /// drop counts as `Commute` here; DPOR upgrades the drop that reaches zero to a write.
    pub fn dependent(&self, other: &Op) -> bool {
        let theirs = other.accesses();
        self.accesses().iter().flatten().any(|(o, a)| {
            theirs
                .iter()
                .flatten()
                .any(|(p, b)| o == p && a.conflicts(*b))
        })
    }

    /// Short name of the operation for traces.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Start => "start",
            Op::Spawn(_) => "spawn",
            Op::Join(_) => "join",
            Op::Atomic(_, kind) | Op::SeqCst(_, kind, _) => kind.name(),
            Op::Fence(_) => "fence",
            Op::Lock(_) => "lock",
            Op::TryLock(_) => "try_lock",
            Op::Unlock(_) => "unlock",
            Op::ReadLock(_) => "read",
            Op::TryReadLock(_) => "try_read",
            Op::CondWait(..) => "wait",
            Op::CondWake(_, false) => "wake",
            Op::CondWake(_, true) => "wake_or_timeout",
            Op::Notify(_, false) => "notify_one",
            Op::Notify(_, true) => "notify_all",
            Op::OnceEnter(_) => "once_enter",
            Op::OnceDone(_) => "once_done",
            Op::OnceGet(_) => "once_get",
            Op::Send(_) => "send",
            Op::Recv(_) => "recv",
            Op::TryRecv(_) => "try_recv",
            Op::Disconnect(_) => "disconnect",
            Op::Park(_) => "park",
            Op::Unpark(_) => "unpark",
            Op::Yield => "yield_now",
            Op::Sleep => "sleep",
            Op::ParkTimeout(_) => "park_timeout",
            Op::RecvTimeout(_) => "recv_timeout",
            Op::SendDone(..) => "rendezvous",
            Op::BarrierWait(_) => "barrier_wait",
            Op::BarrierLeave(..) => "barrier_leave",
        }
    }

    /// Whether the operation gives way voluntarily (`yield_now`, `sleep`): switching away
    /// from a thread there is not a preemption.
    pub fn is_yield(&self) -> bool {
        matches!(self, Op::Yield | Op::Sleep)
    }

    /// The primary object of the operation, if any.
    pub fn object(&self) -> Option<ObjId> {
        self.accesses()[0].map(|(o, _)| o)
    }

    /// The atomic and the kind of access, for an atomic access.
    pub fn atomic(&self) -> Option<(ObjId, AtomicKind)> {
        match *self {
            Op::Atomic(o, kind) | Op::SeqCst(o, kind, _) => Some((o, kind)),
            _ => None,
        }
    }
}

/// A value read or written by an operation, as shown in traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// No value (synchronisation operations).
    None,
    /// An integer read or written.
    Int(i128),
    /// A boolean.
    Bool(bool),
    /// A pointer; addresses differ between runs so they are not compared.
    Ptr(usize),
    /// A read-modify-write that replaced `old` (first) by `new` (second); booleans as 0/1.
    Update(i128, i128),
    /// A failed `compare_exchange` that saw the given current value.
    Failed(i128),
    /// A failed `try_lock`-style operation.
    Busy,
}

impl Value {
    /// Whether two values agree for non-determinism detection (pointers never disagree).
    pub fn same_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Ptr(_), Value::Ptr(_)) => true,
            (a, b) => a == b,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => Ok(()),
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Ptr(0) => write!(f, "null"),
            Value::Ptr(p) => write!(f, "{p:#x}"),
            Value::Update(old, new) => write!(f, "{old} -> {new}"),
            Value::Failed(v) => write!(f, "failed, saw {v}"),
            Value::Busy => write!(f, "busy"),
        }
    }
}

/// One executed step: a thread performed its announced operation.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// The thread that ran.
    pub thread: ThreadId,
    /// What it did.
    pub op: Op,
    /// The value read or written, filled in after the operation ran.
    pub value: Value,
    /// Where in the user's code the operation was called.
    pub location: &'static Location<'static>,
    /// For a load in weak-memory mode: how many stores older than the latest one it may
    /// read the store it read is (0: the latest).
    pub stale: u32,
}

impl Event {
    /// Whether `self` and `other` agree (same thread, op and value) for non-determinism detection.
    pub fn same_as(&self, other: &Event) -> bool {
        self.thread == other.thread
            && self.op == other.op
            && self.stale == other.stale
            && self.value.same_as(&other.value)
    }
}
