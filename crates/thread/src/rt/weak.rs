//! Weak memory (opt-in: `Checker::weak_memory(true)`): atomics under a view-based operational
//! model of the C++20 / Rust memory model.
//!
//! Every atomic keeps its stores in modification order, each with a timestamp and what it
//! released ([`Knowledge`]: happens-before clock and view). A thread's view records, per
//! atomic, the timestamp of the latest store it knows of; it may read that store or any
//! later one (coherence), so a non-`SeqCst` load is a choice among them, which the
//! scheduler makes (the schedule's `thread~k` items: `k` stores back from the latest).
//! Reading a store raises the reader's view to it; an acquire read (or a later acquire
//! fence) also takes the store's released view, so release/acquire message passing
//! publishes everything the writer knew. A non-`SeqCst` store is a choice too: it goes
//! after every store its thread knows, last or between two later stores (`k` slots back
//! from the end), except right before a read-modify-write (which stays right after the
//! store it read). Read-modify-writes read the latest store (atomicity), go last, and
//! continue its release sequence.
//!
//! `SeqCst` accesses are not fences (RC11 / C++20): one global `SeqCst` view records, per
//! atomic, the latest store a `SeqCst` write (store or read-modify-write) or a
//! `fence(SeqCst)` passed on. A `SeqCst` store goes last in modification order and raises
//! the global view of its atomic to itself; a `SeqCst` load reads a store at or after both
//! its thread's view and the global view of that atomic (a choice, like a relaxed load's),
//! then acquires; neither takes the rest of the global view, so a `SeqCst` access followed
//! by a weaker access to another atomic orders nothing (store buffering with mixed orders
//! reaches `0, 0`). `fence(SeqCst)` exchanges whole views with the global view. All of them
//! are steps of one object, the `SeqCst` order: accesses read it, fences write it, so DPOR
//! orders every fence against every `SeqCst` access (accesses to one atomic are ordered by
//! the atomic itself).
//!
//! Under-approximation (no outcome the model forbids is produced; these allowed ones are
//! not): no load reads a store that has not executed yet (load buffering, LB); a failed
//! `compare_exchange` reads the latest store; a `SeqCst` store goes last in modification
//! order even where the model would let a later weaker store precede it; at most 12 stores fit between two
//! adjacent ones (timestamps are halved). Eventual visibility: a thread that has re-read
//! one replaced store `spin_limit` times reads the latest store next, whatever else its
//! loop does (a loop that also writes is never blocked by the spin detector), and one the
//! spin detector would block is shown the latest store of every location it spins on.
//! With `yield_refreshes` (loom's rule, set by the `loom` package), a load after a yield
//! point is not offered the replaced stores its thread read or wrote before that yield.
//! Each cut of these rules is counted (`Stats::stale_reads_cut`).

use super::clock::{Knowledge, VClock};
use super::execution::ExecState;
use super::object::ObjState;
use super::op::{AtomicKind, ObjId, Op, ThreadId};
use std::panic::Location;
use std::sync::atomic::Ordering;

/// One store of an atomic: its place in modification order, its value (as bits), what an
/// acquire read of it acquires, and whether it is a read-modify-write (nothing may be
/// placed between it and the store it read).
#[derive(Clone, Debug)]
struct Message {
    ts: u32,
    bits: u64,
    released: Knowledge,
    rmw: bool,
    /// The trace index of the step that stored it (`None`: the initial value).
    step: Option<usize>,
}

/// Timestamp distance between stores appended one after another; a store placed between
/// two takes the midpoint, so 12 fit between two neighbours.
const GAP: u32 = 1 << 12;

/// The index of the store a thread whose view of the atomic is `view` knows of: the last
/// one at or before it (the initial store if the history was reset since).
fn known(history: &[Message], view: u32) -> usize {
    history.partition_point(|m| m.ts <= view).saturating_sub(1)
}

/// The slots (index of the store it would follow) where a store by a thread with `view`
/// may go, from the end of the modification order backwards.
fn slots(history: &[Message], view: u32) -> impl Iterator<Item = usize> + '_ {
    let last = history.len() - 1;
    (known(history, view)..=last).rev().filter(move |&k| {
        k == last || (!history[k + 1].rmw && history[k + 1].ts - history[k].ts > 1)
    })
}

/// The weak-memory state of one execution.
#[derive(Debug, Default)]
pub struct WeakMemory {
    /// Whether weak behaviours are explored (otherwise every load reads the latest store and
    /// nothing here is used).
    pub on: bool,
    /// Per object id: its stores in modification order (created at its first access).
    histories: Vec<Option<Vec<Message>>>,
    /// Per atomic, the latest store `SeqCst` writes and fences passed on (views only: the
    /// `SeqCst` order creates no happens-before).
    sc_view: VClock,
    /// The object standing for the `SeqCst` order, registered at its first use.
    sc_order: Option<ObjId>,
    /// The choice for the step being performed: how many stores back from the latest the
    /// load reads.
    pub stale: u32,
    /// Per thread and atomic whose latest store the thread's last load of it did not read:
    /// the store it read and how many times in a row it re-read it (eventual visibility).
    stale_reads: Vec<StaleRead>,
    /// How many times eventual visibility kept a thread from reading a replaced store again
    /// (see [`WeakMemory::stale_reads_cut`]).
    stale_reads_cut: u64,
    /// Whether a thread that yields no longer reads the replaced stores it read or wrote
    /// before (see [`ExecState::refreshed_after_yield`]).
    yield_refreshes: bool,
    /// Per thread, per atomic: 1 + the timestamp of the latest store the thread itself read
    /// or wrote (0: none).
    seen: Vec<VClock>,
    /// Per thread: its `seen` at its latest yield point.
    seen_before_yield: Vec<VClock>,
}

/// Thread `thread` last read the replaced store `ts` of atomic `obj`, `rereads` times again
/// after the first.
#[derive(Debug)]
struct StaleRead {
    thread: ThreadId,
    obj: ObjId,
    ts: u32,
    rereads: u32,
}

impl WeakMemory {
    /// A fresh state; weak behaviours explored when `on`, and when `yield_refreshes` a
    /// thread that yields no longer reads the replaced stores it saw before.
    pub fn new(on: bool, yield_refreshes: bool) -> Self {
        WeakMemory {
            on,
            yield_refreshes,
            ..WeakMemory::default()
        }
    }

    /// How many times in this execution eventual visibility kept a thread from reading a
    /// replaced store again: a thread that had re-read one `spin_limit` times was made to
    /// see the latest store (its later loads of that atomic no longer choose the older
    /// ones), or a load after a yield was not offered the replaced stores its thread saw
    /// before the yield. Each is a cut of the explored space: the executions where the
    /// thread reads the replaced store once more are not run.
    pub fn stale_reads_cut(&self) -> u64 {
        self.stale_reads_cut
    }

    fn history(&self, o: ObjId) -> Option<&Vec<Message>> {
        self.histories.get(o).and_then(Option::as_ref)
    }

    /// Records that thread `t` read or wrote the store `ts` of `o` itself.
    fn saw(&mut self, t: ThreadId, o: ObjId, ts: u32) {
        if self.yield_refreshes {
            if self.seen.len() <= t {
                self.seen.resize_with(t + 1, VClock::default);
            }
            self.seen[t].raise(o, ts + 1);
        }
    }
}

fn view_of(st: &ExecState, t: ThreadId) -> &VClock {
    &st.threads[t].clock.now.view
}

impl ExecState {
    /// The operation announced for an atomic access of `o` with `order` (`SeqCst` ones are
    /// steps of the `SeqCst` order in weak-memory mode).
    pub fn atomic_op(
        &mut self,
        o: ObjId,
        kind: AtomicKind,
        order: Ordering,
        location: &'static Location<'static>,
    ) -> Op {
        if self.weak.on && order == Ordering::SeqCst {
            Op::SeqCst(o, kind, self.sc_order(location))
        } else {
            Op::Atomic(o, kind)
        }
    }

    /// The object of the `SeqCst` order, registered at its first use.
    pub fn sc_order(&mut self, location: &'static Location<'static>) -> ObjId {
        match self.weak.sc_order {
            Some(o) => o,
            None => {
                let o = self.register("SeqCst order", ObjState::Plain, location);
                self.weak.sc_order = Some(o);
                o
            }
        }
    }

    /// How many choices thread `t`'s announced operation has: for a non-`SeqCst` load in
    /// weak-memory mode, the stores it may read (the latest and the older ones not hidden
    /// from `t` by what it knows); for a non-`SeqCst` store, the slots of the modification
    /// order it may go to; otherwise 1.
    pub fn read_options(&self, t: ThreadId) -> u32 {
        if !self.weak.on {
            return 1;
        }
        let (o, kind, sc) = match self.threads[t].pending {
            Some((Op::Atomic(o, kind), _)) => (o, kind, false),
            Some((Op::SeqCst(o, kind, _), _)) => (o, kind, true),
            _ => return 1,
        };
        let Some(history) = self.weak.history(o) else {
            return 1;
        };
        match (kind, sc) {
            (AtomicKind::Load, _) => (history.len() - self.oldest_readable(t, o, sc).1) as u32,
            (AtomicKind::Store, false) => slots(history, view_of(self, t).get(o)).count() as u32,
            _ => 1,
        }
    }

    /// How many of the `options` choices of thread `t`'s announced non-`SeqCst` load or
    /// store (see [`read_options`](Self::read_options)) pass over only stores whose step
    /// satisfies `known`: a load choice passes over the stores later in modification order
    /// than the one it reads, a store choice over those its slot goes before. Choices are
    /// ordered by what they pass over (each passes over the previous one's stores and
    /// more), so the usable ones are a prefix; the first (latest store, last slot) passes
    /// over nothing. Other operations keep all their options.
    pub fn choices_passing_over(
        &self,
        t: ThreadId,
        options: u32,
        known: impl Fn(usize) -> bool,
    ) -> u32 {
        let (o, kind) = match self.threads[t].pending {
            Some((Op::Atomic(o, kind @ (AtomicKind::Load | AtomicKind::Store)), _)) => (o, kind),
            _ => return options,
        };
        let Some(history) = self.weak.history(o).filter(|_| self.weak.on) else {
            return options;
        };
        let last = history.len() - 1;
        // The index of the first store choice `k` passes over (`last + 1`: none).
        let first_passed = |k: usize| match kind {
            AtomicKind::Load => last + 1 - k,
            _ => slots(history, view_of(self, t).get(o))
                .nth(k)
                .map_or(0, |after| after + 1),
        };
        let mut usable = 1;
        while usable < options {
            let from = first_passed(usable as usize);
            let all_known = history[from..=last]
                .iter()
                .all(|m| m.step.is_none_or(&known));
            if !all_known {
                break;
            }
            usable += 1;
        }
        usable
    }

    /// The index of the oldest store of `o` thread `t`'s load may read, by its view alone
    /// ([`load_floor`](Self::load_floor)) and once the replaced stores it saw before its
    /// latest yield are left out ([`refreshed_after_yield`](Self::refreshed_after_yield)).
    fn oldest_readable(&self, t: ThreadId, o: ObjId, sc: bool) -> (usize, usize) {
        let history = self.weak.history(o).expect("weak_init ran first");
        let by_view = known(history, self.load_floor(t, o, sc));
        (by_view, by_view.max(self.refreshed_after_yield(t, o)))
    }

    /// Loom's eventual visibility at yield points, when `yield_refreshes` is set: the index
    /// of the oldest store of `o` that thread `t` did not read or write itself before its
    /// latest yield, or of the latest store if none is newer (a yield lets the loop that
    /// polls see a newer value; an execution where it keeps reading the one it saw before
    /// is not explored). 0 when the rule is off or `t` saw no store of `o` before a yield.
    fn refreshed_after_yield(&self, t: ThreadId, o: ObjId) -> usize {
        let seen = match self.weak.seen_before_yield.get(t) {
            Some(v) if v.get(o) > 0 => v.get(o),
            _ => return 0,
        };
        let history = self.weak.history(o).expect("weak_init ran first");
        history
            .partition_point(|m| m.ts < seen)
            .min(history.len() - 1)
    }

    /// Thread `t` reached a yield point (`yield_now`, `spin_loop`, `sleep`): with
    /// `yield_refreshes`, its later loads no longer read the replaced stores it saw so far.
    pub fn weak_yield(&mut self, t: ThreadId) {
        let weak = &mut self.weak;
        if weak.on && weak.yield_refreshes {
            if weak.seen_before_yield.len() <= t {
                weak.seen_before_yield.resize_with(t + 1, VClock::default);
            }
            match weak.seen.get(t) {
                Some(seen) => weak.seen_before_yield[t].clone_from(seen),
                None => weak.seen_before_yield[t] = VClock::default(),
            }
        }
    }

    /// The oldest store thread `t` may read from `o`, as a timestamp: what its view knows,
    /// and for a `SeqCst` load also what the global `SeqCst` view knows of `o`.
    fn load_floor(&self, t: ThreadId, o: ObjId, sc: bool) -> u32 {
        let view = view_of(self, t).get(o);
        if sc {
            view.max(self.weak.sc_view.get(o))
        } else {
            view
        }
    }

    /// Creates `o`'s history at its first access in weak-memory mode, with the value the
    /// real atomic holds (`initial` bits) as its first store.
    pub fn weak_init(&mut self, o: ObjId, initial: impl FnOnce() -> u64) {
        if self.weak.histories.len() <= o {
            self.weak.histories.resize_with(o + 1, || None);
        }
        if self.weak.histories[o].is_none() {
            self.weak.histories[o] = Some(vec![Message {
                ts: 0,
                bits: initial(),
                released: self.objects[o].sync.clone(),
                rmw: false,
                step: None,
            }]);
        }
    }

    /// The bits of the latest store of `o` in modification order (`None` before its first
    /// access in weak-memory mode).
    pub fn weak_latest(&self, o: ObjId) -> Option<u64> {
        self.weak.history(o).and_then(|h| h.last()).map(|m| m.bits)
    }

    /// Forgets `o`'s history after an exclusive access (`get_mut`) may have changed the
    /// value: the next access starts a new one from the real atomic's value.
    pub fn weak_reset(&mut self, o: ObjId) {
        if let Some(h) = self.weak.histories.get_mut(o) {
            *h = None;
        }
        let weak = &mut self.weak;
        for seen in weak.seen.iter_mut().chain(&mut weak.seen_before_yield) {
            seen.forget(o);
        }
    }

    /// Performs the active thread's load of `o` with `order` in weak-memory mode: reads the
    /// store the scheduler chose (`weak.stale` back from the latest), updates the thread's
    /// view and happens-before, and returns the store's bits.
    pub fn weak_load(&mut self, o: ObjId, order: Ordering) -> u64 {
        let t = self.active;
        let (by_view, oldest) = self.oldest_readable(t, o, order == Ordering::SeqCst);
        if oldest > by_view {
            self.weak.stale_reads_cut += 1;
        }
        // Taken out for the step (and put back) so that the store read lends its released
        // knowledge to `atomic_sync` without a copy.
        let history = self.weak.histories[o].take().expect("weak_init ran first");
        let last = history.len() - 1;
        let read = &history[last - (self.weak.stale as usize).min(last - oldest)];
        let (ts, bits, latest) = (read.ts, read.bits, history[last].ts);
        self.weak.saw(t, o, ts);
        self.threads[t].clock.now.view.raise(o, ts);
        self.atomic_sync(o, AtomicKind::Load, order, false, Some(&read.released));
        self.weak.histories[o] = Some(history);
        self.eventual_visibility(t, o, ts, latest);
        bits
    }

    /// Eventual visibility of stores, whatever else the reading thread does: once thread `t`
    /// has re-read the same replaced store `read` of `o` `spin_limit` times, its view is
    /// raised to the latest store `latest`, which its next load of `o` reads. An execution
    /// where a load keeps reading a replaced value forever is not fair, and a loop that also
    /// writes (a read-modify-write storing what it read, a counter) is never blocked by the
    /// spin detector, whose [`catch_up`](Self::catch_up) would otherwise end it. Prunes the
    /// executions where a thread reads one replaced store more than `spin_limit + 1` times
    /// in a row.
    fn eventual_visibility(&mut self, t: ThreadId, o: ObjId, read: u32, latest: u32) {
        let entry = self
            .weak
            .stale_reads
            .iter()
            .position(|s| s.thread == t && s.obj == o);
        if read == latest {
            if let Some(i) = entry {
                self.weak.stale_reads.swap_remove(i);
            }
            return;
        }
        let i = match entry {
            Some(i) if self.weak.stale_reads[i].ts == read => {
                self.weak.stale_reads[i].rereads += 1;
                i
            }
            Some(i) => {
                self.weak.stale_reads[i].ts = read;
                self.weak.stale_reads[i].rereads = 0;
                i
            }
            None => {
                self.weak.stale_reads.push(StaleRead {
                    thread: t,
                    obj: o,
                    ts: read,
                    rereads: 0,
                });
                self.weak.stale_reads.len() - 1
            }
        };
        if self.weak.stale_reads[i].rereads >= self.spin_limit {
            self.weak.stale_reads.swap_remove(i);
            self.weak.stale_reads_cut += 1;
            self.threads[t].clock.now.view.raise(o, latest);
        }
    }

    /// Records the active thread's write access of `o` in weak-memory mode (a store, a
    /// read-modify-write, or a failed `compare_exchange` when `written` is `None`): its view
    /// and happens-before, and the new store (`written` bits) in modification order: in the
    /// slot the scheduler chose for a non-`SeqCst` store, last otherwise. A read-modify-write
    /// or failed `compare_exchange` reads the latest store. Fails when the atomic's
    /// timestamps are exhausted (over a million stores in one execution).
    pub fn weak_write(
        &mut self,
        o: ObjId,
        kind: AtomicKind,
        order: Ordering,
        written: Option<u64>,
    ) -> Result<(), super::Stop> {
        let t = self.active;
        let sc = order == Ordering::SeqCst;
        let view = self.threads[t].clock.now.view.get(o);
        let history = self.weak.history(o).expect("weak_init ran first");
        let last = history.len() - 1;
        let plain_store = kind == AtomicKind::Store && !sc;
        let after = if plain_store {
            let stale = self.weak.stale as usize;
            slots(history, view).nth(stale).unwrap_or(last)
        } else {
            last
        };
        let ts = match history.get(after + 1) {
            Some(next) => history[after].ts + (next.ts - history[after].ts) / 2,
            None => history[after].ts.checked_add(GAP).ok_or_else(|| {
                super::Stop::Schedule(format!(
                    "weak memory: more than {} stores to one atomic in one execution",
                    u32::MAX / GAP
                ))
            })?,
        };
        let latest = history[last].ts;
        if !plain_store {
            self.threads[t].clock.now.view.raise(o, latest);
        }
        self.weak
            .saw(t, o, if written.is_some() { ts } else { latest });
        if let Some(bits) = written {
            self.threads[t].clock.now.view.raise(o, ts);
            self.atomic_sync(o, kind, order, true, None);
            let message = Message {
                ts,
                bits,
                released: self.objects[o].sync.clone(),
                rmw: kind != AtomicKind::Store,
                step: self.trace.len().checked_sub(1),
            };
            if let Some(Some(h)) = self.weak.histories.get_mut(o) {
                h.insert(after + 1, message);
                // The object keeps what the latest store released (read-modify-writes
                // continue its release sequence): the new store's, already there, unless
                // it went before the latest.
                if after != last {
                    self.objects[o].sync = h[h.len() - 1].released.clone();
                }
            }
        } else {
            self.atomic_sync(o, kind, order, false, None);
        }
        if let (true, Some(_)) = (sc, written) {
            self.weak.sc_view.raise(o, ts);
        }
        Ok(())
    }

    /// The view effect of `fence(SeqCst)` by the active thread in weak-memory mode: takes
    /// what earlier `SeqCst` operations passed on, and passes on what it knows.
    pub fn weak_sc_fence(&mut self) {
        let t = self.active;
        let now = &mut self.threads[t].clock.now.view;
        now.join(&self.weak.sc_view);
        self.weak.sc_view.join(now);
    }

    /// In weak-memory mode, the version of atomic `o` thread `t` just read, for spin
    /// detection: the position of the store read (a stale read followed by a newer one is
    /// progress even though nobody wrote in between).
    pub fn weak_read_version(&self, t: ThreadId, o: ObjId) -> Option<u64> {
        (self.weak.on && self.weak.history(o).is_some()).then(|| view_of(self, t).get(o) as u64)
    }

    /// Eventual visibility: when thread `t` would be blocked for spinning, raises its view of
    /// every location it spins on to the latest store. Returns whether one was stale (the
    /// thread then keeps running and reads the latest value next).
    pub fn catch_up(&mut self, t: ThreadId) -> bool {
        let mut raised = false;
        let spun: Vec<ObjId> = self.threads[t].spin.locations().collect();
        for o in spun {
            let Some(latest) = self.weak.history(o).and_then(|h| h.last()).map(|m| m.ts) else {
                continue;
            };
            let view = &mut self.threads[t].clock.now.view;
            if view.get(o) < latest {
                view.raise(o, latest);
                raised = true;
            }
        }
        raised
    }
}
