//! The state of one execution: virtual threads, objects, trace, and the rules that decide
//! which announced operations are enabled.

use super::clock::{Knowledge, ThreadClock};
use super::erased::ErasedBox;
use super::object::{ObjState, Object};
use super::op::{Event, ObjId, Op, ThreadId, Value};
use super::spin::SpinState;
use super::switch::Switch;
use corosensei::Yielder;
use std::panic::Location;

/// Maximum number of virtual threads in one execution (enabled sets are `u64` masks).
pub const MAX_THREADS: usize = 64;

/// One virtual thread.
pub struct VThread {
    /// The operation announced and not yet performed, with its call site.
    pub pending: Option<(Op, &'static Location<'static>)>,
    /// Whether the thread's closure returned (or unwound).
    pub finished: bool,
    /// The coroutine yielder of this thread, valid while the thread is not finished.
    pub yielder: *const Yielder<(), ()>,
    /// Spin-loop detection.
    pub spin: SpinState,
    /// The park token object of this thread.
    pub park: ObjId,
    /// What happens before this thread's next operation.
    pub clock: ThreadClock,
    /// The name given with `thread::Builder::name`.
    pub name: Option<std::sync::Arc<str>>,
    /// The stack size asked for with `thread::Builder::stack_size`.
    pub stack_size: Option<usize>,
    /// Steps executed when `pending` was announced (see [`ExecState::enabled_mask`]).
    pub announced_at: usize,
}

/// A user closure queued for spawning as a new virtual thread.
pub type SpawnFn = Box<dyn FnOnce()>;

/// The state of one execution. Accessed only from the exploration's OS thread.
pub struct ExecState {
    /// Unique per execution; objects carrying another epoch are re-registered.
    pub epoch: u64,
    /// All virtual threads created so far.
    pub threads: Vec<VThread>,
    /// All objects registered so far.
    pub objects: Vec<Object>,
    /// The executed steps.
    pub trace: Vec<Event>,
    /// Labels attached to steps: (index of the next event, thread, text).
    pub annotations: Vec<(usize, ThreadId, String)>,
    /// The thread currently running (or that ran last).
    pub active: ThreadId,
    /// Closures spawned but not yet given a coroutine.
    pub spawn_queue: Vec<SpawnFn>,
    /// The first panic of a user thread: (thread, message).
    pub panic: Option<(ThreadId, String)>,
    /// Reads of unchanged locations before a thread counts as spinning.
    pub spin_limit: u32,
    /// Every switch away from a thread that had not finished, in step order.
    pub switches: Vec<Switch>,
    /// A failure found by a runtime check (a data race), which ends the execution.
    pub failure: Option<super::Stop>,
    /// `Arc` allocations made during this execution, checked for leaks at its end.
    pub allocations: Vec<ObjId>,
    /// Virtual time: advanced by `thread::sleep` and by operations that time out.
    pub elapsed: std::time::Duration,
    /// The execution's random generator (`crate::random`), seeded by the checker.
    pub random: crate::rng::Rng,
    /// Thread-local values: (thread, key address, value); see `thread::LocalKey`.
    pub locals: Vec<(ThreadId, usize, Box<dyn std::any::Any>)>,
    /// Stores per atomic and views, when weak memory is explored (see `weak.rs`).
    pub weak: super::weak::WeakMemory,
    /// Objects registered here whose cell another execution running at the same time holds:
    /// (cell address, id); see `ObjCell::get`.
    pub shared_cells: Vec<(usize, ObjId)>,
    /// The values of the `OnceLock`s initialised in this execution, by their `Once`'s id
    /// (see `sync::once`). A value dies with its `OnceLock`, or with the execution: the last
    /// thread to finish drops what is left (the values of statics).
    pub once_values: Vec<(ObjId, ErasedBox)>,
    /// Blocks freed in this execution, kept until it ends (`freed.rs`).
    pub(super) quarantine: super::freed::Quarantine,
}

impl ExecState {
    /// A fresh state for execution `epoch`.
    pub fn new(epoch: u64, spin_limit: u32) -> Self {
        ExecState {
            epoch,
            threads: Vec::new(),
            objects: Vec::new(),
            trace: Vec::new(),
            annotations: Vec::new(),
            active: 0,
            spawn_queue: Vec::new(),
            panic: None,
            spin_limit,
            switches: Vec::new(),
            failure: None,
            allocations: Vec::new(),
            elapsed: std::time::Duration::ZERO,
            locals: Vec::new(),
            random: crate::rng::Rng::new(0),
            weak: super::weak::WeakMemory::default(),
            shared_cells: Vec::new(),
            once_values: Vec::new(),
            quarantine: Default::default(),
        }
    }

    /// Registers an object and returns its id.
    pub fn register(
        &mut self,
        type_name: &'static str,
        state: ObjState,
        created: &'static Location<'static>,
    ) -> ObjId {
        self.objects.push(Object {
            type_name,
            version: 0,
            state,
            sync: Knowledge::default(),
            name: None,
            created,
            addr: 0,
            uses: Vec::new(),
        });
        self.objects.len() - 1
    }

    /// Adds a virtual thread spawned by `parent` (`None` for the model's main thread; its
    /// coroutine is created by the driver) and returns its id, or `None` when `MAX_THREADS`
    /// is reached.
    pub fn add_thread(
        &mut self,
        parent: Option<ThreadId>,
        created: &'static Location<'static>,
    ) -> Option<ThreadId> {
        let id = self.threads.len();
        if id >= MAX_THREADS {
            return None;
        }
        let park = self.register("Thread", ObjState::Park { token: false }, created);
        let clock = self.fork_clock(parent, id);
        self.threads.push(VThread {
            clock,
            name: None,
            stack_size: None,
            pending: Some((Op::Start, created)),
            announced_at: self.trace.len(),
            finished: false,
            yielder: std::ptr::null(),
            spin: SpinState::default(),
            park,
        });
        Some(id)
    }

    /// Whether thread `t` may perform its announced operation now.
    pub fn is_enabled(&self, t: ThreadId) -> bool {
        let th = &self.threads[t];
        if th.finished || th.spin.blocked() {
            return false;
        }
        let Some((op, _)) = th.pending else {
            return false;
        };
        match op {
            Op::Join(target) => self.threads[target].finished,
            Op::Lock(m) => matches!(
                self.objects[m].state,
                ObjState::Mutex { owner: None }
                    | ObjState::RwLock {
                        writer: None,
                        readers: 0
                    }
            ),
            Op::ReadLock(m) => {
                matches!(self.objects[m].state, ObjState::RwLock { writer: None, .. })
            }
            Op::CondWake(cv, false) => matches!(
                self.objects[cv].state,
                ObjState::Condvar { notified, .. } if notified & (1 << t) != 0
            ),
            Op::OnceEnter(o) => {
                matches!(self.objects[o].state, ObjState::Once { running: None, .. })
            }
            Op::Send(c) => matches!(
                self.objects[c].state,
                ObjState::Channel { len, capacity, receiver, .. }
                    if !receiver || capacity.is_none_or(|cap| len < cap)
            ),
            Op::Recv(c) => matches!(
                self.objects[c].state,
                ObjState::Channel { len, senders, .. } if len > 0 || senders == 0
            ),
            Op::Park(p) => matches!(self.objects[p].state, ObjState::Park { token: true, .. }),
            Op::SendDone(c, ticket) => matches!(
                self.objects[c].state,
                ObjState::Channel { taken, receiver, .. } if taken >= ticket || !receiver
            ),
            Op::BarrierLeave(b, gen) => matches!(
                self.objects[b].state,
                ObjState::Barrier { generation, .. } if generation > gen
            ),
            _ => true,
        }
    }

    /// The mask of enabled threads. A thread that announced a yield point (`yield_now`,
    /// `spin_loop`, `sleep`) or a timed wait that would time out, and has seen no other
    /// thread's step since, gives way: it is left out while any thread that does not give
    /// way is enabled (fair scheduling, as loom's: a loop that yields, or waits with a
    /// timeout, until another thread acts cannot run forever ahead of it).
    pub fn enabled_mask(&self) -> u64 {
        let (mut enabled, mut giving_way) = (0u64, 0u64);
        for (t, th) in self.threads.iter().enumerate() {
            if self.is_enabled(t) {
                enabled |= 1 << t;
                if self.gives_way(t, th) {
                    giving_way |= 1 << t;
                }
            }
        }
        match enabled & !giving_way {
            0 => enabled,
            others => others,
        }
    }

    /// Whether thread `t` (`th`) announced a yield point or a timed wait that would time
    /// out, and no step ran since.
    fn gives_way(&self, t: ThreadId, th: &VThread) -> bool {
        th.pending
            .is_some_and(|(op, _)| op.is_yield() || self.would_time_out(t, op))
            && th.announced_at == self.trace.len()
    }

    /// Whether `op`, thread `t`'s announced operation, is a timed wait (`Condvar` wait with
    /// a timeout, `park_timeout`) that nothing has woken, so that its step times out: like
    /// `sleep`, it lets time pass without another thread acting.
    fn would_time_out(&self, t: ThreadId, op: Op) -> bool {
        match (op, op.object().map(|o| &self.objects[o].state)) {
            (Op::CondWake(_, true), Some(ObjState::Condvar { notified, .. })) => {
                notified & (1 << t) == 0
            }
            (Op::ParkTimeout(_), Some(ObjState::Park { token })) => !token,
            _ => false,
        }
    }

    /// Whether every thread finished.
    pub fn all_finished(&self) -> bool {
        self.threads.iter().all(|t| t.finished)
    }

    /// Starts step: thread `t` performs its announced operation.
    pub fn begin_step(&mut self, t: ThreadId) {
        let (op, location) = self.threads[t]
            .pending
            .take()
            .expect("chosen thread announced an operation");
        self.active = t;
        self.synchronise(t, op);
        if op.is_yield() {
            self.weak_yield(t);
        }
        self.trace.push(Event {
            thread: t,
            op,
            value: Value::None,
            location,
            stale: self.weak.stale,
        });
    }

    /// Sets the value of the step the active thread is performing.
    pub fn set_value(&mut self, value: Value) {
        if let Some(e) = self.trace.last_mut() {
            e.value = value;
        }
    }

    /// Records an atomic access by the active thread for spin detection and object versions.
    pub fn note_access(&mut self, obj: ObjId, wrote: bool) {
        let me = self.active;
        if wrote {
            self.objects[obj].version += 1;
            for (t, th) in self.threads.iter_mut().enumerate() {
                if t == me {
                    th.spin.on_own_write();
                } else {
                    th.spin.on_foreign_write(obj);
                }
            }
        } else {
            let version = self
                .weak_read_version(me, obj)
                .unwrap_or(self.objects[obj].version);
            let limit = self.spin_limit;
            if self.threads[me].spin.on_read(obj, version, limit)
                && self.weak.on
                && self.catch_up(me)
            {
                self.threads[me].spin.on_own_write();
            }
        }
    }

    /// Mutable access to an object's blocking state.
    pub fn state_mut(&mut self, obj: ObjId) -> &mut ObjState {
        &mut self.objects[obj].state
    }

    /// Display name of an object: `name#id` if the user named it, else `Type#id`.
    pub fn object_name(&self, obj: ObjId) -> String {
        let o = &self.objects[obj];
        format!("{}#{}", o.name.unwrap_or(o.type_name), obj)
    }

    /// The thread that holds or must release what blocked thread `t` waits for, if known.
    pub fn waits_for(&self, t: ThreadId) -> Option<ThreadId> {
        let (op, _) = self.threads[t].pending?;
        match (op, op.object().map(|o| &self.objects[o].state)) {
            (Op::Join(target), _) => Some(target),
            (Op::Lock(_), Some(ObjState::Mutex { owner })) => *owner,
            (Op::Lock(_), Some(ObjState::RwLock { writer, readers })) => {
                writer.or((*readers != 0).then(|| readers.trailing_zeros() as ThreadId))
            }
            (Op::ReadLock(_), Some(ObjState::RwLock { writer, .. })) => *writer,
            (Op::OnceEnter(_), Some(ObjState::Once { running, .. })) => *running,
            _ => None,
        }
    }

    /// Describes what blocked thread `t` is waiting for, e.g. `lock(Mutex#3) held by thread 1`.
    pub fn describe_wait(&self, t: ThreadId) -> String {
        let th = &self.threads[t];
        if th.spin.blocked() || th.spin.confirmed() {
            let locs: Vec<String> = th.spin.locations().map(|o| self.object_name(o)).collect();
            return format!(
                "spinning on {} with no other thread writing it",
                locs.join(", ")
            );
        }
        let Some((op, loc)) = th.pending else {
            return "running".to_string();
        };
        let what = match op.object() {
            Some(o) => format!("{}({})", op.name(), self.object_name(o)),
            None => match op {
                Op::Join(target) => format!("join(thread {target})"),
                _ => op.name().to_string(),
            },
        };
        let why = match (op, self.waits_for(t)) {
            (Op::Join(_), _) => String::new(),
            (_, Some(holder)) => format!(" held by thread {holder}"),
            (Op::Park(_), None) => " with no unpark".to_string(),
            (Op::CondWake(..), None) => " with no notify".to_string(),
            (Op::Recv(_), None) => " on an empty channel".to_string(),
            (Op::Send(_), None) => " on a full channel".to_string(),
            (Op::SendDone(..), None) => " with no receiver taking the message".to_string(),
            (Op::BarrierLeave(..), None) => " with too few threads arriving".to_string(),
            _ => String::new(),
        };
        format!("{what}{why} at {loc}")
    }

    /// The `Arc` allocations made in this execution that are still alive, each as
    /// `Arc#3 created at file:line:col, strong count 1`.
    pub fn leaks(&self) -> Vec<String> {
        self.allocations
            .iter()
            .filter_map(|&id| match self.objects[id].state {
                ObjState::RefCount(n) if n > 0 => Some(format!(
                    "{} created at {}, strong count {n} at the end of the execution",
                    self.object_name(id),
                    self.objects[id].created
                )),
                _ => None,
            })
            .collect()
    }

    /// Removes and returns thread `t`'s thread-local values (dropped by the caller, outside
    /// the state's borrow).
    pub fn take_locals(&mut self, t: ThreadId) -> Vec<Box<dyn std::any::Any>> {
        let (mine, others) = std::mem::take(&mut self.locals)
            .into_iter()
            .partition(|(owner, _, _)| *owner == t);
        self.locals = others;
        mine.into_iter().map(|(_, _, v)| v).collect()
    }

    /// The value kept for the `OnceLock` whose `Once` is `once`, if it was initialised.
    pub fn once_value(&self, once: ObjId) -> Option<&ErasedBox> {
        self.once_values
            .iter()
            .find(|(o, _)| *o == once)
            .map(|(_, v)| v)
    }

    /// Removes and returns the value kept for `once` (dropped by the caller, outside the
    /// state's borrow).
    pub fn take_once_value(&mut self, once: ObjId) -> Option<ErasedBox> {
        let at = self.once_values.iter().position(|(o, _)| *o == once)?;
        Some(self.once_values.swap_remove(at).1)
    }

    /// Every `OnceLock` value still kept, if thread `t` is the last one running (no other
    /// thread unfinished or waiting to start): the values die with the execution, dropped
    /// by that thread so that their destructors still take steps.
    pub fn take_once_values_if_last(&mut self, t: ThreadId) -> Vec<(ObjId, ErasedBox)> {
        let last = self.spawn_queue.is_empty()
            && (0..self.threads.len()).all(|u| u == t || self.threads[u].finished);
        if last {
            std::mem::take(&mut self.once_values)
        } else {
            Vec::new()
        }
    }

    /// A cycle of threads each waiting for the next, if the wait-for graph has one.
    pub fn wait_cycle(&self) -> Option<Vec<ThreadId>> {
        for start in 0..self.threads.len() {
            let mut path = vec![start];
            let mut cur = start;
            while let Some(next) = self.waits_for(cur) {
                if self.threads[next].finished {
                    break;
                }
                if let Some(pos) = path.iter().position(|&p| p == next) {
                    return Some(path[pos..].to_vec());
                }
                path.push(next);
                cur = next;
            }
        }
        None
    }
}

impl ExecState {
    /// Performs the `Spawn` step of the active thread: creates the child and queues `f`.
    /// Returns `None` when `MAX_THREADS` is reached.
    pub fn spawn(&mut self, f: SpawnFn, location: &'static Location<'static>) -> Option<ThreadId> {
        let child = self.add_thread(Some(self.active), location)?;
        self.spawn_queue.push(f);
        if let Some(e) = self.trace.last_mut() {
            e.op = Op::Spawn(child);
        }
        Some(child)
    }

    /// Whether lock `m` (a mutex or reader-writer lock) can be acquired now, shared or not.
    pub fn lock_free(&self, m: ObjId, shared: bool) -> bool {
        match self.objects[m].state {
            ObjState::Mutex { owner } => owner.is_none(),
            ObjState::RwLock { writer, readers } => writer.is_none() && (shared || readers == 0),
            _ => false,
        }
    }

    /// Makes the active thread a holder of lock `m` (shared only for reader-writer locks)
    /// and counts it as a write.
    pub fn lock_acquire(&mut self, m: ObjId, shared: bool) {
        let me = self.active;
        match self.state_mut(m) {
            ObjState::Mutex { owner } => *owner = Some(me),
            ObjState::RwLock { readers, .. } if shared => *readers |= 1 << me,
            ObjState::RwLock { writer, .. } => *writer = Some(me),
            other => unreachable!("lock_acquire on {other:?}"),
        }
        self.note_access(m, true);
    }

    /// The `try_lock` family: acquires lock `m` if free and returns true; otherwise records
    /// the step as a busy read (spin detection counts repeated failures) and returns false.
    pub fn try_acquire(&mut self, m: ObjId, shared: bool) -> bool {
        let free = self.lock_free(m, shared);
        if free {
            self.lock_acquire(m, shared);
        } else {
            self.set_value(Value::Busy);
            self.note_access(m, false);
        }
        free
    }

    /// Releases the active thread's hold on lock `m` and counts it as a write.
    pub fn lock_release(&mut self, m: ObjId) {
        let me = self.active;
        match self.state_mut(m) {
            ObjState::Mutex { owner } => *owner = None,
            ObjState::RwLock { writer, readers } => {
                if *writer == Some(me) {
                    *writer = None;
                } else {
                    *readers &= !(1 << me);
                }
            }
            other => unreachable!("lock_release on {other:?}"),
        }
        self.note_access(m, true);
    }
}
