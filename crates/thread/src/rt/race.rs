//! Data-race detection on tracked cells: two accesses by different threads, at least one a
//! write, race when neither happens before the other (vector clocks, `clock.rs`). Each
//! access is checked against the cell's last write and the reads since, so a race is found
//! in any execution that contains both accesses, whatever their order.
//!
//! An atomic's `unsync_load` (loom's non-atomic read of an atomic) is checked the same way
//! against the atomic's stores and read-modify-writes (which do not race with one another).

use super::execution::ExecState;
use super::op::{ObjId, ThreadId};
use super::Stop;
use std::panic::Location;

/// One access to a cell: who, when (the thread's own clock entry), where, and what it did
/// (`reads`, `writes`, `stores`, `unsync_loads`).
#[derive(Clone, Copy, Debug)]
struct CellAccess {
    thread: ThreadId,
    epoch: u32,
    location: &'static Location<'static>,
    verb: &'static str,
}

impl CellAccess {
    fn describe(&self) -> String {
        format!("thread {} {} at {}", self.thread, self.verb, self.location)
    }
}

/// Replaces `access`'s thread's entry in `latest` (one per thread: a thread's accesses are
/// ordered, so its latest one is the last to be ordered after), or adds it.
fn keep_latest(latest: &mut Vec<CellAccess>, access: CellAccess) {
    match latest.iter_mut().find(|a| a.thread == access.thread) {
        Some(a) => *a = access,
        None => latest.push(access),
    }
}

/// The accesses of an atomic that an `unsync_load` must be ordered after (its stores and
/// read-modify-writes) and that a store must be ordered after (`unsync_load`s): each
/// thread's latest of each.
#[derive(Clone, Debug, Default)]
pub struct AtomicAccesses {
    stores: Vec<CellAccess>,
    unsync_loads: Vec<CellAccess>,
}

/// The accesses of a cell that later accesses must be ordered after.
#[derive(Clone, Debug, Default)]
pub struct CellHistory {
    last_write: Option<CellAccess>,
    reads: Vec<CellAccess>,
}

impl ExecState {
    /// Records an access of the active thread to cell `obj` (a write when `write`). Returns
    /// the data-race failure when an earlier conflicting access by another thread does not
    /// happen before it.
    pub fn cell_access(
        &mut self,
        obj: ObjId,
        write: bool,
        location: &'static Location<'static>,
    ) -> Result<(), Stop> {
        let access = self.access_now(location, if write { "writes" } else { "reads" });
        let (me, now) = (self.active, &self.threads[self.active].clock.now.clock);
        let super::ObjState::Cell(history) = &mut self.objects[obj].state else {
            unreachable!("cell_access on a non-cell object");
        };
        let unordered = |a: &&CellAccess| a.thread != me && now.get(a.thread) < a.epoch;
        let earlier = history.last_write.iter();
        let conflict = if write {
            earlier.chain(history.reads.iter()).find(unordered)
        } else {
            earlier.clone().find(unordered)
        };
        if let Some(first) = conflict.copied() {
            return Err(self.race(obj, first, access));
        }
        if write {
            history.last_write = Some(access);
            history.reads.clear();
        } else {
            keep_latest(&mut history.reads, access);
        }
        Ok(())
    }

    /// Records a store (or read-modify-write) of the active thread to atomic `obj`; the
    /// data-race failure when an `unsync_load` by another thread does not happen before it.
    pub fn atomic_store_access(
        &mut self,
        obj: ObjId,
        location: &'static Location<'static>,
    ) -> Result<(), Stop> {
        self.atomic_access_check(obj, location, false)
    }

    /// Records an `unsync_load` of the active thread from atomic `obj`; the data-race
    /// failure when a store by another thread does not happen before it.
    pub fn unsync_load_access(
        &mut self,
        obj: ObjId,
        location: &'static Location<'static>,
    ) -> Result<(), Stop> {
        self.atomic_access_check(obj, location, true)
    }

    fn atomic_access_check(
        &mut self,
        obj: ObjId,
        location: &'static Location<'static>,
        unsync_load: bool,
    ) -> Result<(), Stop> {
        let access = self.access_now(
            location,
            if unsync_load {
                "unsync_loads"
            } else {
                "stores"
            },
        );
        let (me, now) = (self.active, &self.threads[self.active].clock.now.clock);
        let super::ObjState::Atomic(history) = &mut self.objects[obj].state else {
            unreachable!("an atomic access on a non-atomic object");
        };
        let (against, mine) = if unsync_load {
            (&history.stores, &mut history.unsync_loads)
        } else {
            (&history.unsync_loads, &mut history.stores)
        };
        let unordered = |a: &&CellAccess| a.thread != me && now.get(a.thread) < a.epoch;
        if let Some(first) = against.iter().find(unordered).copied() {
            return Err(self.race(obj, first, access));
        }
        keep_latest(mine, access);
        Ok(())
    }

    /// The active thread's access at `location`, stamped with its own clock entry.
    fn access_now(&self, location: &'static Location<'static>, verb: &'static str) -> CellAccess {
        let me = self.active;
        CellAccess {
            thread: me,
            epoch: self.threads[me].clock.now.clock.get(me),
            location,
            verb,
        }
    }

    fn race(&self, obj: ObjId, first: CellAccess, second: CellAccess) -> Stop {
        Stop::DataRace {
            object: self.object_name(obj),
            first: first.describe(),
            second: second.describe(),
        }
    }
}
