//! Freed-memory tracking. Inside an execution, a block given to `cmc_thread::alloc::dealloc`
//! is not returned to the allocator: its range is recorded as freed (by which thread,
//! where) and the block is kept until the execution's state is dropped, so that an
//! instrumented object inside it (atomic, `UnsafeCell`, lock, ...) stays readable by the
//! checker. A later access to such an object is a use after free, and freeing a block that
//! overlaps a freed one a double free; both stop the execution.
//!
//! The free is also checked as a write of every object in the block (as Miri does): a use
//! of one by another thread that does not happen before the free races with it, and is
//! reported as a use after free too, found in any execution that contains both, whatever
//! their order (the free need not interleave between the use and the operation before it).
//! Uses are each thread's latest access to the object: an operation on it (its
//! announcement) or an `UnsafeCell` access. They are recorded only for objects first used
//! while inside a block allocated with `cmc_thread::alloc` in this execution (so that other
//! models pay nothing); a block allocated elsewhere gets the use-after-free check but not
//! this race check. Accesses to plain memory (not an instrumented object) are not seen.

use super::execution::ExecState;
use super::op::ThreadId;
use super::Stop;
use std::alloc::Layout;
use std::panic::Location;

/// A block freed during the execution.
#[derive(Debug)]
struct FreedBlock {
    start: usize,
    layout: Layout,
    thread: ThreadId,
    location: &'static Location<'static>,
}

impl FreedBlock {
    fn contains(&self, addr: usize) -> bool {
        self.start <= addr && addr < self.start + self.layout.size()
    }

    fn overlaps(&self, start: usize, len: usize) -> bool {
        self.start < start + len && start < self.start + self.layout.size()
    }

    fn describe(&self) -> String {
        format!("freed by thread {} at {}", self.thread, self.location)
    }
}

/// The blocks allocated and freed during one execution; the freed ones are returned to the
/// allocator when it is dropped.
#[derive(Debug, Default)]
pub struct Quarantine {
    freed: Vec<FreedBlock>,
    /// Blocks allocated in this execution and not freed yet: (start, size).
    live: Vec<(usize, usize)>,
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        for b in self.freed.drain(..) {
            // SAFETY: `free` kept only blocks the caller of `dealloc` owned and gave up
            // (the `dealloc` contract), each once (an overlapping second free is refused).
            unsafe { std::alloc::dealloc(b.start as *mut u8, b.layout) };
        }
    }
}

impl ExecState {
    /// `dealloc(ptr, layout)` by the active thread: keeps the block and records it freed.
    /// A block overlapping one already freed is not kept again: the double free is
    /// returned.
    pub fn free(
        &mut self,
        ptr: usize,
        layout: Layout,
        location: &'static Location<'static>,
    ) -> Result<(), Stop> {
        if let Some(first) = self
            .quarantine
            .freed
            .iter()
            .find(|b| b.overlaps(ptr, layout.size()))
        {
            return Err(Stop::UseAfterFree {
                object: format!(
                    "the block at {ptr:#x} ({} bytes), freed twice",
                    layout.size()
                ),
                freed: first.describe(),
                used: format!("freed again by thread {} at {location}", self.active),
            });
        }
        if let Some(stop) = self.free_races(ptr, layout.size(), location) {
            return Err(stop);
        }
        self.quarantine.live.retain(|&(start, _)| start != ptr);
        self.quarantine.freed.push(FreedBlock {
            start: ptr,
            layout,
            thread: self.active,
            location,
        });
        Ok(())
    }

    /// Records a block `[start, start + size)` allocated with `cmc_thread::alloc`.
    pub fn allocated(&mut self, start: usize, size: usize) {
        self.quarantine.live.push((start, size));
    }

    /// The address to keep for an object whose `ObjCell` is at `addr`: `addr` when it lies
    /// in a live block allocated in this execution (its uses are then recorded), else 0.
    pub fn tracked_addr(&self, addr: usize) -> usize {
        let inside = |&&(start, size): &&(usize, usize)| start <= addr && addr < start + size;
        if self.quarantine.live.iter().any(|b| inside(&b)) {
            addr
        } else {
            0
        }
    }

    /// Records the active thread's use of object `id` at `location` (its latest one), if
    /// the object lies in a block allocated in this execution.
    pub fn note_use(&mut self, id: super::ObjId, location: &'static Location<'static>) {
        if self.objects[id].addr == 0 {
            return;
        }
        let me = self.active;
        let epoch = self.threads[me].clock.now.clock.get(me);
        let uses = &mut self.objects[id].uses;
        match uses.iter_mut().find(|u| u.0 == me) {
            Some(u) => *u = (me, epoch, location),
            None => uses.push((me, epoch, location)),
        }
    }

    /// The failure when a use by another thread of an object in the block `[start, start +
    /// len)` does not happen before the active thread's free of it at `location`.
    fn free_races(
        &self,
        start: usize,
        len: usize,
        location: &'static Location<'static>,
    ) -> Option<Stop> {
        let me = self.active;
        let now = &self.threads[me].clock.now.clock;
        let inside = |o: &&super::object::Object| start <= o.addr && o.addr < start + len;
        self.objects.iter().enumerate().find_map(|(id, o)| {
            if !inside(&o) {
                return None;
            }
            let &(t, _, used_at) = o
                .uses
                .iter()
                .find(|&&(t, epoch, _)| t != me && now.get(t) < epoch)?;
            Some(Stop::UseAfterFree {
                object: self.object_name(id),
                freed: format!("freed by thread {me} at {location}"),
                used: format!(
                    "used by thread {t} at {used_at}, with no happens-before between the use \
                     and the free"
                ),
            })
        })
    }

    /// The use-after-free failure when the object at `addr` (its `ObjCell`) lies in a block
    /// freed in this execution; `name` is how reports show it.
    pub fn use_after_free(
        &self,
        addr: usize,
        name: impl FnOnce(&Self) -> String,
        location: &'static Location<'static>,
    ) -> Option<Stop> {
        if self.quarantine.freed.is_empty() {
            return None;
        }
        let block = self.quarantine.freed.iter().find(|b| b.contains(addr))?;
        Some(Stop::UseAfterFree {
            object: name(self),
            freed: block.describe(),
            used: format!("used by thread {} at {location}", self.active),
        })
    }
}
