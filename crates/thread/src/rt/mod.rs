//! The runtime: virtual threads run as coroutines on one OS thread, and exactly one runs at a
//! time. Every instrumented operation calls [`schedule`] first, which announces the operation
//! and hands control back to the driver; the driver asks the explorer which thread performs
//! its announced operation next. User-facing types (`sync`, `thread`) only talk to this module.

mod clock;
mod driver;
mod erased;
mod execution;
mod freed;
mod object;
mod op;
pub(crate) mod os_threads;
mod overflow;
mod race;
mod spin;
mod switch;
pub(crate) mod uncontrolled;
mod weak;

pub use driver::{Driver, Progress, Scheduler, Stop};
pub use erased::ErasedBox;
pub use execution::{ExecState, SpawnFn, MAX_THREADS};
pub use object::ObjState;
pub use op::{Access, AtomicKind, Event, ObjId, Op, ThreadId, Value};
pub use switch::SwitchReason;

use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

/// The per-exploration context the running coroutines reach through a thread-local pointer.
pub struct Context {
    state: RefCell<ExecState>,
}

thread_local! {
    static CURRENT: Cell<*const Context> = const { Cell::new(std::ptr::null()) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn current() -> Option<&'static Context> {
    let p = CURRENT.with(|c| c.get());
    // SAFETY: the driver sets CURRENT to a context that outlives every coroutine it runs and
    // clears it before the context is dropped; coroutines only run inside the driver.
    unsafe { p.as_ref() }
}

/// Whether the calling code runs inside an execution of the checker.
pub fn in_execution() -> bool {
    current().is_some()
}

/// Runs `f` on the execution state, or returns `None` outside an execution.
/// `f` must not call back into the runtime.
pub fn with<R>(f: impl FnOnce(&mut ExecState) -> R) -> Option<R> {
    current().map(|c| f(&mut c.state.borrow_mut()))
}

/// Steps executed so far in the current execution (`None` outside one). Read by a running
/// thread, it orders that thread's code against every other thread's steps: a value read
/// after an operation returned is at most the value read by any later invocation.
pub fn steps() -> Option<usize> {
    with(|st| st.trace.len())
}

/// Attaches a label to the running thread's column of the interleaving table, shown before
/// the thread's next step; returns its index for [`relabel`] (`None` outside an execution).
pub fn annotate(text: String) -> Option<usize> {
    with(|st| {
        let (step, me) = (st.trace.len(), st.active);
        st.annotations.push((step, me, text));
        st.annotations.len() - 1
    })
}

/// Replaces the text of label `index` (from [`annotate`]) of the current execution.
pub fn relabel(index: usize, text: String) {
    with(|st| {
        if let Some(a) = st.annotations.get_mut(index) {
            a.2 = text;
        }
    });
}

/// Ends the current execution with `failure`, found by a runtime check in the running
/// thread at `location` (shown in its column of the table): the thread is suspended for
/// good, never unwound (the driver abandons it, see `Driver::teardown`). Outside an
/// execution it panics with the failure. It returns only while the running thread is
/// unwinding from a panic: the failure is recorded and ends the execution at the thread's
/// next switch point (a second panic, out of a destructor, would abort the process), and
/// the caller carries on as if the check had passed.
pub fn fail(failure: Stop, location: &'static Location<'static>) {
    let suspend = with(|st| {
        let (step, me) = (st.trace.len(), st.active);
        let what = crate::report::stop_headline(&failure);
        st.annotations
            .push((step, me, format!("{what} at {location}")));
        st.failure.get_or_insert(failure.clone());
        (!std::thread::panicking()).then_some(st.threads[me].yielder)
    });
    match suspend {
        // SAFETY: the yielder belongs to the running coroutine, which the driver never
        // resumes once the execution has a failure.
        Some(Some(yielder)) => loop {
            unsafe { (*yielder).suspend(()) }
        },
        Some(None) => {}
        None => panic!("{}", crate::report::stop_headline(&failure)),
    }
}

/// Refuses I/O inside an execution: ends it with [`Stop::Uncontrolled`] naming `what` and
/// the call site (the checker can neither replay nor interleave what the outside world
/// does). Outside an execution it returns and the I/O runs.
pub fn refuse_io(what: &str, location: &'static Location<'static>) {
    if in_execution() {
        fail(
            Stop::Uncontrolled(format!(
                "I/O is not supported inside a checked execution: {what} at {location}"
            )),
            location,
        );
    }
}

/// Implements `io::Read` and `io::Write` for `$guarded`, a wrapper of a std
/// type in field 0, each call refused by [`refuse_io`] inside an execution
/// (reported as `$name::read`, `$name::write`, `$name::flush`).
macro_rules! refused_read_write {
    ($guarded:ty, $name:literal) => {
        impl std::io::Read for $guarded {
            #[track_caller]
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                $crate::rt::refuse_io(concat!($name, "::read"), std::panic::Location::caller());
                std::io::Read::read(&mut self.0, buf)
            }
        }

        impl std::io::Write for $guarded {
            #[track_caller]
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                $crate::rt::refuse_io(concat!($name, "::write"), std::panic::Location::caller());
                std::io::Write::write(&mut self.0, buf)
            }

            #[track_caller]
            fn flush(&mut self) -> std::io::Result<()> {
                $crate::rt::refuse_io(concat!($name, "::flush"), std::panic::Location::caller());
                std::io::Write::flush(&mut self.0)
            }
        }
    };
}
pub(crate) use refused_read_write;

/// Announces `op` by the running thread and yields to the scheduler; returns once the
/// scheduler picked this thread to perform it. Outside an execution it returns at once;
/// while the thread is unwinding from a panic it performs `op` as a step at once, without
/// yielding (a panic must not be suspended: the panic count is the OS thread's).
pub fn schedule(op: Op, location: &'static Location<'static>) {
    let Some(ctx) = current() else { return };
    let yielder = {
        let mut st = ctx.state.borrow_mut();
        let me = st.active;
        if std::thread::panicking() {
            st.threads[me].pending = Some((op, location));
            st.begin_step(me);
            return;
        }
        st.threads[me].pending = Some((op, location));
        st.threads[me].announced_at = st.trace.len();
        st.threads[me].yielder
    };
    // SAFETY: the yielder belongs to the running coroutine, which is suspended here and
    // resumed by the driver; it stays valid until the coroutine finishes.
    unsafe { (*yielder).suspend(()) };
}

static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

fn next_epoch() -> u64 {
    NEXT_EPOCH.fetch_add(1, Ordering::Relaxed)
}

/// Lazily assigned identity of an instrumented object within the current execution.
/// Packs `(epoch << 24) | (id + 1)`; an object from an earlier execution is re-registered.
#[derive(Debug)]
pub struct ObjCell(AtomicU64, Option<&'static str>);

const ID_BITS: u32 = 24;

impl ObjCell {
    /// An identity not yet registered; it is registered on first use in each execution.
    pub const fn new() -> Self {
        ObjCell(AtomicU64::new(0), None)
    }

    /// An identity whose object is shown as `name#id` in reports.
    pub const fn named(name: &'static str) -> Self {
        ObjCell(AtomicU64::new(0), Some(name))
    }

    /// The execution the object was last registered in (0: never).
    fn epoch(&self) -> u64 {
        self.0.load(Ordering::Relaxed) >> ID_BITS
    }

    /// A copy naming the same object (in the same execution).
    pub fn snapshot(&self) -> Self {
        ObjCell(AtomicU64::new(self.0.load(Ordering::Relaxed)), self.1)
    }

    /// The object's id in `st`'s execution if it was registered there.
    #[inline]
    pub fn current(&self, st: &ExecState) -> Option<ObjId> {
        let packed = self.0.load(Ordering::Acquire);
        if packed >> ID_BITS == st.epoch && packed & ((1 << ID_BITS) - 1) != 0 {
            return Some((packed & ((1 << ID_BITS) - 1)) as usize - 1);
        }
        self.shared_id(st, packed)
    }

    /// The object's id in `st`'s execution when another execution running at the same time
    /// holds the cell (see [`ObjCell::get`]).
    #[cold]
    fn shared_id(&self, st: &ExecState, packed: u64) -> Option<ObjId> {
        if packed >> ID_BITS == 0 || st.shared_cells.is_empty() {
            return None;
        }
        let key = self as *const Self as usize;
        st.shared_cells
            .iter()
            .find(|(cell, _)| *cell == key)
            .map(|&(_, id)| id)
    }

    /// The object's id in `st`'s execution, registering it first if needed.
    ///
    /// The cell remembers one execution. An object used by two executions running at the
    /// same time (a `static` touched by two checks run in parallel, as `cargo test` does) is
    /// registered in the second one's own table instead, so that neither loses its state;
    /// that is sound only for objects whose whole state is the execution's
    /// ([`ObjState::per_execution`]). For any other object the second execution stops with
    /// [`Stop::Uncontrolled`]: the data inside the object is really shared between the two.
    pub fn get(
        &self,
        st: &mut ExecState,
        type_name: &'static str,
        state: fn() -> ObjState,
        location: &'static Location<'static>,
    ) -> ObjId {
        match self.current(st) {
            Some(id) => id,
            None => self.register_in(st, type_name, state(), location),
        }
    }

    #[cold]
    fn register_in(
        &self,
        st: &mut ExecState,
        type_name: &'static str,
        state: ObjState,
        location: &'static Location<'static>,
    ) -> ObjId {
        let per_execution = state.per_execution();
        let id = st.register(type_name, state, location);
        st.objects[id].name = self.1;
        st.objects[id].addr = st.tracked_addr(self as *const Self as usize);
        let mine = st.epoch << ID_BITS | (id as u64 + 1);
        let mut seen = self.0.load(Ordering::Acquire);
        let claimed = loop {
            if uncontrolled::running(seen >> ID_BITS) {
                break false;
            }
            match self
                .0
                .compare_exchange(seen, mine, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break true,
                Err(now) => seen = now,
            }
        };
        if !claimed {
            st.shared_cells.push((self as *const Self as usize, id));
            if !per_execution && st.failure.is_none() {
                st.failure = Some(Stop::Uncontrolled(format!(
                    "{type_name} used at {location} is used by two executions running at \
                     the same time (two checks in parallel sharing a static, as `cargo test` \
                     runs tests?): its data cannot be checked by both; give each check its \
                     own object, or run those tests one at a time (--test-threads=1)"
                )));
            }
        }
        id
    }
}

fn take_last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// Panic messages seen outside executions while a stress run is active: (active runs,
/// first message). See `crate::stress`.
pub(crate) static STRESS_PANICS: std::sync::Mutex<(usize, Option<String>)> =
    std::sync::Mutex::new((0, None));

/// `message (at file:line:col)` of a panic.
fn panic_text(payload: &(dyn std::any::Any + Send), location: Option<&Location<'_>>) -> String {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_string());
    match location {
        Some(l) => format!("{msg} (at {l})"),
        None => msg,
    }
}

pub(crate) fn install_panic_hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if in_execution() {
                LAST_PANIC
                    .with(|p| *p.borrow_mut() = Some(panic_text(info.payload(), info.location())));
                return;
            }
            if let Ok(mut stress) = STRESS_PANICS.lock() {
                if stress.0 > 0 && stress.1.is_none() {
                    stress.1 = Some(panic_text(info.payload(), info.location()));
                }
            }
            previous(info)
        }));
    });
}

impl Default for ObjCell {
    fn default() -> Self {
        ObjCell::new()
    }
}

/// Runs one atomic access on `cell`'s atomic: [`announce`] `kind`, then `body`, which
/// performs it on the real atomic and returns its result, the value for the trace, and the
/// bits it wrote (`None`: it only read); then its happens-before effect under `orders` (the
/// ordering if it wrote, the ordering if it only read), then [`complete`]. In weak-memory
/// mode a load does not read the real atomic: `body` gets the bits of the store the
/// scheduler chose (`Some`); of `(peek, poke)`, `peek` (the real atomic's current bits)
/// starts the atomic's store history at its first access, and after every other access
/// `poke` sets the real atomic to the bits of the latest store in modification order (a
/// plain store may have been placed before it). Outside an execution `body(None)` just runs.
pub fn atomic_access<R>(
    cell: &ObjCell,
    type_name: &'static str,
    kind: AtomicKind,
    orders: (std::sync::atomic::Ordering, std::sync::atomic::Ordering),
    location: &'static Location<'static>,
    (peek, poke): (impl FnOnce() -> u64, impl FnOnce(u64)),
    body: impl FnOnce(Option<u64>) -> (R, Value, Option<u64>),
) -> R {
    use std::sync::atomic::Ordering::SeqCst;
    let ordered = if orders.0 == SeqCst || orders.1 == SeqCst {
        SeqCst
    } else {
        orders.0
    };
    let op = |o| with(|st| st.atomic_op(o, kind, ordered, location)).unwrap_or(Op::Atomic(o, kind));
    let id = announce(cell, type_name, atomic_state, op, location);
    let weak = id.filter(|_| with(|st| st.weak.on) == Some(true));
    let Some(o) = weak else {
        let (result, value, written) = body(None);
        let wrote = written.is_some();
        sync_access(id, kind, if wrote { orders.0 } else { orders.1 }, wrote);
        if wrote {
            check_store(id, location);
        }
        complete(id, value, wrote);
        return result;
    };
    let read = with(|st| {
        st.weak_init(o, peek);
        (kind == AtomicKind::Load).then(|| st.weak_load(o, orders.1))
    })
    .flatten();
    let (result, value, written) = body(read);
    if kind != AtomicKind::Load {
        let order = if written.is_some() {
            orders.0
        } else {
            orders.1
        };
        if let Some(Err(stop)) = with(|st| st.weak_write(o, kind, order, written)) {
            fail(stop, location);
        }
        // A store placed before later ones in modification order left its own value in
        // the real atomic; read-modify-writes (and `get_mut`) use the real value.
        if let Some(latest) = with(|st| st.weak_latest(o)).flatten() {
            poke(latest);
        }
        if written.is_some() {
            check_store(id, location);
        }
    }
    complete(id, value, written.is_some());
    result
}

/// The state an atomic is registered with.
fn atomic_state() -> ObjState {
    ObjState::Atomic(Default::default())
}

/// Checks a store just made to atomic `id` against the `unsync_load`s not ordered before
/// it (a data race ends the execution).
fn check_store(id: Option<ObjId>, location: &'static Location<'static>) {
    let Some(id) = id else { return };
    if let Some(Err(race)) = with(|st| st.atomic_store_access(id, location)) {
        fail(race, location);
    }
}

/// loom's `unsync_load` of `cell`'s atomic: a non-atomic read, not a step, checked against
/// the stores not ordered before it (a data race ends the execution). Nothing outside an
/// execution.
pub fn unsync_load(cell: &ObjCell, type_name: &'static str, location: &'static Location<'static>) {
    let Some(id) = register(cell, type_name, atomic_state, location) else {
        return;
    };
    if let Some(Err(race)) = with(|st| st.unsync_load_access(id, location)) {
        fail(race, location);
    }
}

/// `fence(SeqCst)` in weak-memory mode is a step of the `SeqCst` order (announced here);
/// otherwise nothing.
pub fn sc_fence_step(location: &'static Location<'static>) {
    let order = with(|st| st.weak.on.then(|| st.sc_order(location))).flatten();
    if let Some(order) = order {
        schedule(Op::Fence(order), location);
    }
}

/// After an exclusive access (`get_mut`) to `cell`'s atomic, which may change its value
/// without a step: forgets its store history (weak-memory mode) and its accesses for
/// `unsync_load` race checks.
pub fn exclusive_access(cell: &ObjCell) {
    with(|st| {
        if let Some(o) = cell.current(st) {
            st.weak_reset(o);
            // Every earlier access is ordered before an exclusive borrow.
            if let ObjState::Atomic(accesses) = &mut st.objects[o].state {
                *accesses = Default::default();
            }
        }
    });
}

/// The happens-before effect of an atomic access announced on `id` (see `clock.rs`);
/// nothing outside an execution.
pub fn sync_access(
    id: Option<ObjId>,
    kind: AtomicKind,
    order: std::sync::atomic::Ordering,
    wrote: bool,
) {
    if let Some(id) = id {
        with(|st| st.atomic_sync(id, kind, order, wrote, None));
    }
}

/// The id of `cell`'s object in the current execution, registering it first if needed;
/// `None` outside an execution. An access from a thread the checker does not control to an
/// object of a running execution panics (see `uncontrolled.rs`).
pub fn register(
    cell: &ObjCell,
    type_name: &'static str,
    state: fn() -> ObjState,
    location: &'static Location<'static>,
) -> Option<ObjId> {
    let found = with(|st| {
        let addr = cell as *const ObjCell as usize;
        let name = |st: &ExecState| match cell.current(st) {
            Some(id) => st.object_name(id),
            None => type_name.to_string(),
        };
        let freed = st.use_after_free(addr, name, location);
        let id = cell.get(st, type_name, state, location);
        st.note_use(id, location);
        (id, freed)
    });
    match found {
        Some((id, freed)) => {
            if let Some(stop) = freed {
                fail(stop, location);
            }
            Some(id)
        }
        None => {
            uncontrolled::check(cell.epoch(), type_name, location);
            None
        }
    }
}

/// Records a block allocated with `cmc_thread::alloc` inside an execution (nothing
/// outside one).
pub fn allocated(ptr: usize, size: usize) {
    with(|st| st.allocated(ptr, size));
}

/// `dealloc` of `ptr`'s block: inside an execution the block is kept until the execution
/// ends and its range recorded as freed (`freed.rs`; a double free ends the execution), and
/// `true` is returned; outside one, `false` (the caller frees it).
pub fn free(ptr: usize, layout: std::alloc::Layout, location: &'static Location<'static>) -> bool {
    match with(|st| st.free(ptr, layout, location)) {
        None => false,
        Some(Ok(())) => true,
        // Not freed for real when the failure could not stop the thread (see `fail`).
        Some(Err(stop)) => {
            fail(stop, location);
            true
        }
    }
}

/// For a type whose fallback path does not go through [`register`]: reports an access from
/// a thread the checker does not control to an object of a running execution.
pub fn check_outside(cell: &ObjCell, type_name: &str, location: &'static Location<'static>) {
    uncontrolled::check(cell.epoch(), type_name, location);
}

/// Registers `cell`'s object if needed and announces `op(id)` (a switch point); returns the
/// id, or `None` outside an execution.
pub fn announce(
    cell: &ObjCell,
    type_name: &'static str,
    state: fn() -> ObjState,
    op: impl FnOnce(ObjId) -> Op,
    location: &'static Location<'static>,
) -> Option<ObjId> {
    let id = register(cell, type_name, state, location)?;
    schedule(op(id), location);
    Some(id)
}

/// Records the value and the access of the operation announced on `id` by [`announce`].
pub fn complete(id: Option<ObjId>, value: Value, wrote: bool) {
    if let Some(id) = id {
        with(|st| {
            st.set_value(value);
            st.note_access(id, wrote);
        });
    }
}
