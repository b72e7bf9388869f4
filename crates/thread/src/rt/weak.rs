//! Weak memory (opt-in: `Checker::weak_memory(true)`): atomics under a view-based operational
//! model of the C++20 / Rust memory model.
//!
//! Every atomic keeps its stores in modification order, each with what it released
//! ([`Knowledge`]: happens-before clock and view). A thread's view records, per atomic, the
//! latest store it knows of; it may read that store or any later one (coherence), so a
//! non-`SeqCst` load is a choice among them, which the scheduler makes (the schedule's
//! `thread~stale` items). Reading a store raises the reader's view to it; an acquire read
//! (or a later acquire fence) also takes the store's released view, so release/acquire
//! message passing publishes everything the writer knew. Read-modify-writes always read the
//! latest store (atomicity) and continue its release sequence.
//!
//! `SeqCst` operations stay never stale: a `SeqCst` load reads the latest store, and every
//! `SeqCst` operation and `fence(SeqCst)` exchanges views with one global `SeqCst` view (it
//! takes what earlier ones passed on, then passes on what it knows); they are steps of one
//! object, the `SeqCst` order, so DPOR orders them.
//!
//! Under-approximation (no outcome the model forbids is produced; these allowed ones are
//! not): a store is always placed last in modification order (so the 2+2W outcome, which
//! needs two stores ordered against execution order, is not reached); no load reads a
//! store that has not executed yet (load buffering, LB); a failed `compare_exchange` reads
//! the latest store; a `SeqCst` load reads the latest store even where the model would let
//! it read an older one. A thread that keeps re-reading a stale value is made to see the
//! latest store once the spin detector would have blocked it (eventual visibility).

use super::clock::{Knowledge, VClock};
use super::execution::ExecState;
use super::object::ObjState;
use super::op::{AtomicKind, ObjId, Op, ThreadId};
use std::panic::Location;
use std::sync::atomic::Ordering;

/// One store of an atomic: its value (as bits) and what an acquire read of it acquires.
#[derive(Clone, Debug)]
struct Message {
    bits: u64,
    released: Knowledge,
}

/// The weak-memory state of one execution.
#[derive(Debug, Default)]
pub struct WeakMemory {
    /// Whether weak behaviours are explored (otherwise every load reads the latest store and
    /// nothing here is used).
    pub on: bool,
    /// Per object id: its stores in modification order (created at its first access).
    histories: Vec<Option<Vec<Message>>>,
    /// What `SeqCst` operations passed on to each other (views only: the `SeqCst` order
    /// creates no happens-before).
    sc_view: VClock,
    /// The object standing for the `SeqCst` order, registered at its first use.
    sc_order: Option<ObjId>,
    /// The choice for the step being performed: how many stores back from the latest the
    /// load reads.
    pub stale: u32,
}

impl WeakMemory {
    /// A fresh state; weak behaviours explored when `on`.
    pub fn new(on: bool) -> Self {
        WeakMemory {
            on,
            ..WeakMemory::default()
        }
    }

    fn history(&self, o: ObjId) -> Option<&Vec<Message>> {
        self.histories.get(o).and_then(Option::as_ref)
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

    /// How many stores thread `t`'s announced operation may read: more than one only for a
    /// non-`SeqCst` load in weak-memory mode (the latest store and the older ones not hidden
    /// from `t` by what it knows).
    pub fn read_options(&self, t: ThreadId) -> u32 {
        if !self.weak.on {
            return 1;
        }
        let Some((Op::Atomic(o, AtomicKind::Load), _)) = self.threads[t].pending else {
            return 1;
        };
        let Some(history) = self.weak.history(o) else {
            return 1;
        };
        let latest = history.len() as u32 - 1;
        latest - view_of(self, t).get(o).min(latest) + 1
    }

    /// Creates `o`'s history at its first access in weak-memory mode, with the value the
    /// real atomic holds (`initial` bits) as its first store.
    pub fn weak_init(&mut self, o: ObjId, initial: impl FnOnce() -> u64) {
        if self.weak.histories.len() <= o {
            self.weak.histories.resize_with(o + 1, || None);
        }
        if self.weak.histories[o].is_none() {
            self.weak.histories[o] = Some(vec![Message {
                bits: initial(),
                released: Knowledge::default(),
            }]);
        }
    }

    /// Forgets `o`'s history after an exclusive access (`get_mut`) may have changed the
    /// value: the next access starts a new one from the real atomic's value.
    pub fn weak_reset(&mut self, o: ObjId) {
        if let Some(h) = self.weak.histories.get_mut(o) {
            *h = None;
        }
    }

    /// Performs the active thread's load of `o` with `order` in weak-memory mode: reads the
    /// store the scheduler chose (`weak.stale` back from the latest), updates the thread's
    /// view and happens-before, and returns the store's bits.
    pub fn weak_load(&mut self, o: ObjId, order: Ordering) -> u64 {
        let t = self.active;
        let sc = order == Ordering::SeqCst;
        if sc {
            self.threads[t].clock.now.view.join(&self.weak.sc_view);
        }
        let history = self.weak.history(o).expect("weak_init ran first");
        let latest = history.len() as u32 - 1;
        let index = if sc {
            latest
        } else {
            latest - self.weak.stale.min(latest)
        };
        let message = history[index as usize].clone();
        self.threads[t].clock.now.view.raise(o, index);
        self.atomic_sync(o, AtomicKind::Load, order, false, Some(&message.released));
        if sc {
            self.weak.sc_view.join(&self.threads[t].clock.now.view);
        }
        message.bits
    }

    /// Records the active thread's write access of `o` in weak-memory mode (a store, a
    /// read-modify-write, or a failed `compare_exchange` when `written` is `None`), which
    /// read the latest store: its view and happens-before, then the new store (`written`
    /// bits) appended to the modification order.
    pub fn weak_write(
        &mut self,
        o: ObjId,
        kind: AtomicKind,
        order: Ordering,
        written: Option<u64>,
    ) {
        let t = self.active;
        let sc = order == Ordering::SeqCst;
        if sc {
            self.threads[t].clock.now.view.join(&self.weak.sc_view);
        }
        let len = self.weak.history(o).expect("weak_init ran first").len() as u32;
        let view = &mut self.threads[t].clock.now.view;
        view.raise(o, len - 1);
        if written.is_some() {
            view.raise(o, len);
        }
        self.atomic_sync(o, kind, order, written.is_some(), None);
        if let Some(bits) = written {
            let released = self.objects[o].sync.clone();
            if let Some(Some(h)) = self.weak.histories.get_mut(o) {
                h.push(Message { bits, released });
            }
        }
        if sc {
            self.weak.sc_view.join(&self.threads[t].clock.now.view);
        }
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
            let Some(latest) = self.weak.history(o).map(|h| h.len() as u32 - 1) else {
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
