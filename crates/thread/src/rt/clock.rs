//! Happens-before as vector clocks, over the synchronisation the checker models: program
//! order, spawn and join, lock release and acquire, condvar notify and wake, channel send
//! and receive (both ways for a rendezvous), barriers, `Once` completion, unpark and park, `Arc` counts (acquire-release), and
//! atomics by their `Ordering` (a release store or read-modify-write read by an acquire
//! load; release sequences continued by read-modify-writes; fences). Used to report data
//! races on [`crate::cell::UnsafeCell`].
//!
//! Where a primitive's exact edges are finer than modelled here (a channel's edge is from
//! every earlier send to every later receive, not message to message), the relation is a
//! superset of the real one: a race can then be missed, never reported falsely.

use super::execution::ExecState;
use super::op::{AtomicKind, ObjId, Op, ThreadId};
use std::sync::atomic::Ordering;

/// A vector clock: entry `t` counts the release operations of thread `t` known here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VClock(Vec<u32>);

impl VClock {
    /// Entry `t` (0 when absent).
    pub fn get(&self, t: ThreadId) -> u32 {
        self.0.get(t).copied().unwrap_or(0)
    }

    /// Pointwise maximum with `other`.
    pub fn join(&mut self, other: &VClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    /// Increments entry `t`.
    pub fn tick(&mut self, t: ThreadId) {
        if self.0.len() <= t {
            self.0.resize(t + 1, 0);
        }
        self.0[t] += 1;
    }
}

impl VClock {
    /// Sets entry `i` back to 0.
    pub fn forget(&mut self, i: usize) {
        if let Some(e) = self.0.get_mut(i) {
            *e = 0;
        }
    }

    /// Raises entry `i` to at least `v`.
    pub fn raise(&mut self, i: usize, v: u32) {
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = self.0[i].max(v);
    }
}

/// What a thread knows at a point, and what a release passes on: the happens-before vector
/// clock (race detection) and, in weak-memory mode, the view: per atomic location (entry =
/// `ObjId`), the position in its modification order of the latest store known, below which
/// the thread may no longer read (coherence). Both are joined pointwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Knowledge {
    /// Happens-before, indexed by thread.
    pub clock: VClock,
    /// Latest store known per atomic location (empty unless weak memory is explored).
    pub view: VClock,
}

impl Knowledge {
    /// Pointwise maximum with `other`, clock and view.
    pub fn join(&mut self, other: &Knowledge) {
        self.clock.join(&other.clock);
        self.view.join(&other.view);
    }
}

/// What a thread knows about happens-before.
#[derive(Clone, Debug, Default)]
pub struct ThreadClock {
    /// Everything that happens before the thread's next operation.
    pub now: Knowledge,
    /// The knowledge at the thread's latest release fence (carried by its later relaxed
    /// writes).
    fence_release: Option<Knowledge>,
    /// What its relaxed reads saw (acquired by a later acquire fence).
    relaxed_reads: Knowledge,
}

fn acquires(o: Ordering) -> bool {
    matches!(o, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst)
}

fn releases(o: Ordering) -> bool {
    matches!(o, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst)
}

impl ExecState {
    /// The clock of a new thread spawned by `parent` (the spawn happens before it), and
    /// the parent's release of it; `None` for the first thread.
    pub fn fork_clock(&mut self, parent: Option<ThreadId>, child: ThreadId) -> ThreadClock {
        let mut clock = ThreadClock::default();
        if let Some(p) = parent {
            clock.now = self.threads[p].clock.now.clone();
            self.threads[p].clock.now.clock.tick(p);
        }
        clock.now.clock.tick(child);
        clock
    }

    /// Thread `t` acquires what was released into `obj`.
    pub fn acquire(&mut self, t: ThreadId, obj: ObjId) {
        let sync = &self.objects[obj].sync;
        self.threads[t].clock.now.join(sync);
    }

    /// Thread `t` releases into `obj`, adding to what earlier releases put there.
    pub fn release(&mut self, t: ThreadId, obj: ObjId) {
        let clock = &mut self.threads[t].clock.now;
        self.objects[obj].sync.join(clock);
        clock.clock.tick(t);
    }

    /// The happens-before effect of thread `t` starting non-atomic operation `op` (atomics
    /// and `Arc` counts are handled by [`ExecState::atomic_sync`] once their result is known).
    pub fn synchronise(&mut self, t: ThreadId, op: Op) {
        match op {
            Op::Join(target) => {
                let done = self.threads[target].clock.now.clone();
                self.threads[t].clock.now.join(&done);
            }
            Op::Lock(o) | Op::ReadLock(o) | Op::CondWake(o, _) | Op::OnceEnter(o) => {
                self.acquire(t, o)
            }
            Op::OnceGet(o) | Op::Park(o) | Op::ParkTimeout(o) => self.acquire(t, o),
            Op::SendDone(o, _) | Op::BarrierLeave(o, _) => self.acquire(t, o),
            // A receive acquires the sends and releases to a rendezvous sender.
            Op::Recv(o) | Op::TryRecv(o) | Op::RecvTimeout(o) => {
                self.acquire(t, o);
                self.release(t, o);
            }
            Op::TryLock(o) if self.lock_free(o, false) => self.acquire(t, o),
            Op::TryReadLock(o) if self.lock_free(o, true) => self.acquire(t, o),
            Op::Unlock(o) | Op::CondWait(_, o) | Op::Notify(o, _) | Op::OnceDone(o) => {
                self.release(t, o)
            }
            Op::Send(o) | Op::Disconnect(o) | Op::Unpark(o) | Op::BarrierWait(o) => {
                self.release(t, o)
            }
            _ => {}
        }
    }

    /// The happens-before effect of the atomic access the active thread just made on
    /// `obj`: `kind` with ordering `order`, which wrote or not (a failed
    /// `compare_exchange` only reads). `Arc` counts are acquire-release. A read acquires
    /// what the store it read released: `read_from` (an older store, in weak-memory mode)
    /// or else the latest store's, kept in the object; a write leaves what it releases in
    /// the object.
    pub fn atomic_sync(
        &mut self,
        obj: ObjId,
        kind: AtomicKind,
        order: Ordering,
        wrote: bool,
        read_from: Option<&Knowledge>,
    ) {
        let t = self.active;
        let (reads, rmw) = match kind {
            AtomicKind::Store => (false, false),
            AtomicKind::Load | AtomicKind::Observe(_) => (true, false),
            AtomicKind::Rmw(_) | AtomicKind::Count(_) => (true, true),
        };
        let th = &mut self.threads[t].clock;
        let sync = &mut self.objects[obj].sync;
        if reads {
            let released = read_from.unwrap_or(sync);
            if acquires(order) {
                th.now.join(released);
            } else {
                th.relaxed_reads.join(released);
            }
        }
        if wrote {
            let carried = if releases(order) {
                Some(&th.now)
            } else {
                th.fence_release.as_ref()
            };
            match (rmw, carried) {
                // A read-modify-write continues the release sequence it read from.
                (true, Some(c)) => sync.join(c),
                (true, None) => {}
                (false, Some(c)) => *sync = c.clone(),
                (false, None) => *sync = Knowledge::default(),
            }
            if releases(order) {
                th.now.clock.tick(t);
            }
        }
    }

    /// The happens-before effect of `atomic::fence(order)` by the active thread.
    pub fn fence(&mut self, order: Ordering) {
        let t = self.active;
        let th = &mut self.threads[t].clock;
        if acquires(order) {
            let seen = std::mem::take(&mut th.relaxed_reads);
            th.now.join(&seen);
            th.relaxed_reads = seen;
        }
        if order == Ordering::SeqCst && self.weak.on {
            self.weak_sc_fence();
        }
        let th = &mut self.threads[t].clock;
        if releases(order) {
            th.fence_release = Some(th.now.clone());
            th.now.clock.tick(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::VClock;

    #[test]
    fn join_is_the_pointwise_maximum() {
        let mut a = VClock::default();
        a.tick(0);
        a.tick(0);
        let mut b = VClock::default();
        b.tick(2);
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2), a.get(7)), (2, 0, 1, 0));
    }
}
