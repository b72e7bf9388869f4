//! Data-race detection on tracked cells: two accesses by different threads, at least one a
//! write, race when neither happens before the other (vector clocks, `clock.rs`). Each
//! access is checked against the cell's last write and the reads since, so a race is found
//! in any execution that contains both accesses, whatever their order.

use super::execution::ExecState;
use super::op::{ObjId, ThreadId};
use super::Stop;
use std::panic::Location;

/// One access to a cell: who, when (the thread's own clock entry), where, and how.
#[derive(Clone, Copy, Debug)]
struct CellAccess {
    thread: ThreadId,
    epoch: u32,
    location: &'static Location<'static>,
    write: bool,
}

impl CellAccess {
    fn describe(&self) -> String {
        let what = if self.write { "writes" } else { "reads" };
        format!("thread {} {what} at {}", self.thread, self.location)
    }
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
    /// happen before it. Destructors run while the execution is torn down are not checked
    /// (the execution already stopped, and a failure could not unwind out of them).
    pub fn cell_access(
        &mut self,
        obj: ObjId,
        write: bool,
        location: &'static Location<'static>,
    ) -> Result<(), Stop> {
        if self.aborting {
            return Ok(());
        }
        let me = self.active;
        let now = &self.threads[me].clock.now.clock;
        let access = CellAccess {
            thread: me,
            epoch: now.get(me),
            location,
            write,
        };
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
            return Err(Stop::DataRace {
                object: self.object_name(obj),
                first: first.describe(),
                second: access.describe(),
            });
        }
        if write {
            history.last_write = Some(access);
            history.reads.clear();
        } else if let Some(r) = history.reads.iter_mut().find(|r| r.thread == me) {
            *r = access;
        } else {
            history.reads.push(access);
        }
        Ok(())
    }
}
