//! The visited set a search uses: in memory, or in memory and on disk.

use std::io;
use std::path::Path;

use cmc_model::Fingerprint;

use crate::{DiskFingerprintSet, FingerprintTable, Insertion, Wanted};

/// Fraction of an in-memory table's slots filled before it must grow.
///
/// Beyond [`DOUBLE_BELOW_SLOTS`] a table grows by a quarter, so its load
/// stays between 0.68 and 0.85 and a slot of 16 bytes costs 18.8 to 23.5
/// bytes per stored fingerprint. (Doubling at 0.75 throughout was measured
/// 15% faster on two-phase RM=8 but costs up to 43 bytes per fingerprint.)
const GROW_AT_LOAD: f64 = 0.85;

/// A table of fewer slots than this (128 MiB) doubles when it grows; a
/// larger one grows by a quarter. Every growth moves every fingerprint (in
/// place: only the added slots are fresh memory): growing a small table by
/// a quarter at a time costs five times the final table's size in such
/// work, doubling twice; the memory doubling leaves unused is at most
/// 64 MiB.
const DOUBLE_BELOW_SLOTS: usize = 1 << 23;

/// The capacity a table of `capacity` slots prefers to grow to.
fn grown_capacity(capacity: usize) -> usize {
    if capacity < DOUBLE_BELOW_SLOTS {
        2 * capacity
    } else {
        capacity / 4 * 5
    }
}

/// When a table of `capacity` slots holds this many fingerprints, room must
/// be made.
fn pause_threshold_of(capacity: usize) -> u64 {
    (capacity as f64 * GROW_AT_LOAD) as u64
}

/// Most fraction of an in-memory table's slots inserts may fill between two
/// pauses (see [`VisitedSet::insert_room`]); beyond [`GROW_AT_LOAD`] only
/// when a burst of new states overshoots the pause threshold.
const HARD_LOAD: f64 = 0.95;

/// The fewest slots that hold `count` fingerprints at most at `load`.
fn slots_holding(count: u64, load: f64) -> usize {
    usize::try_from((count as f64 / load).ceil() as u64 + 1).unwrap_or(usize::MAX)
}

/// `preferred` slots if `budget_bytes` allows them, else as many as it
/// allows if that is at least `least`, else an error naming the budget.
fn affordable_capacity(
    least: usize,
    preferred: usize,
    budget_bytes: Option<u64>,
) -> Result<usize, RoomError> {
    let Some(budget_bytes) = budget_bytes else {
        return Ok(preferred);
    };
    let slot_bytes = FingerprintTable::bytes_for(1) as u64;
    let affordable = usize::try_from(budget_bytes / slot_bytes).unwrap_or(usize::MAX);
    if preferred <= affordable {
        Ok(preferred)
    } else if least <= affordable {
        Ok(affordable)
    } else {
        Err(RoomError::OverBudget {
            needed_bytes: (least as u64).saturating_mul(slot_bytes),
            budget_bytes,
        })
    }
}

/// Why the visited set could not make room.
#[derive(Debug)]
pub enum RoomError {
    /// Growing the in-memory table would exceed the memory budget.
    OverBudget {
        /// Bytes the grown table would take.
        needed_bytes: u64,
        /// Bytes allowed.
        budget_bytes: u64,
    },
    /// Flushing to disk failed.
    Io(io::Error),
}

/// The fingerprints of the states a search has seen.
///
/// Shared by all workers through `&self` between pauses. Workers insert no
/// more than [`insert_room`](Self::insert_room) fingerprints between two
/// pauses, and pause when [`needs_room`](Self::needs_room) (checked through
/// [`pause_threshold`](Self::pause_threshold)); the owner then calls
/// [`make_room`](Self::make_room) with exclusive access.
pub enum VisitedSet {
    /// Every fingerprint in one table that grows as it fills.
    Memory(FingerprintTable),
    /// A bounded table in front of sorted runs on disk.
    Disk(DiskFingerprintSet),
}

impl VisitedSet {
    /// Inserts `fingerprint`; `None` only if the in-memory table is full.
    #[inline]
    pub fn insert(&self, fingerprint: Fingerprint) -> Option<Insertion> {
        match self {
            VisitedSet::Memory(table) => table.insert(fingerprint),
            VisitedSet::Disk(set) => set.insert(fingerprint),
        }
    }

    /// Prefetches the in-memory slot of `fingerprint`.
    #[inline]
    pub fn prefetch(&self, fingerprint: Fingerprint) {
        match self {
            VisitedSet::Memory(table) => table.prefetch(fingerprint),
            VisitedSet::Disk(set) => set.prefetch(fingerprint),
        }
    }

    /// Number of fingerprints stored.
    pub fn len(&self) -> u64 {
        match self {
            VisitedSet::Memory(table) => table.len(),
            VisitedSet::Disk(set) => set.len(),
        }
    }

    /// Whether no fingerprint is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of fingerprints in the in-memory table (its fill).
    pub fn memory_len(&self) -> u64 {
        match self {
            VisitedSet::Memory(table) => table.len(),
            VisitedSet::Disk(set) => set.memory_len(),
        }
    }

    /// Slots of the in-memory table.
    pub fn memory_capacity(&self) -> usize {
        match self {
            VisitedSet::Memory(table) => table.capacity(),
            VisitedSet::Disk(set) => set.memory_capacity(),
        }
    }

    /// When [`memory_len`](Self::memory_len) reaches this, room must be made.
    pub fn pause_threshold(&self) -> u64 {
        pause_threshold_of(self.memory_capacity())
    }

    /// The slots of an in-memory set that started with `initial` slots once
    /// it holds `fingerprints` and must take one more: each pause on the way
    /// grows it as [`make_room`](Self::make_room) does without a memory
    /// budget when one more insert is wanted.
    pub fn memory_capacity_after(initial: usize, fingerprints: u64) -> usize {
        let mut capacity = initial;
        while fingerprints >= pause_threshold_of(capacity) {
            capacity = grown_capacity(capacity);
        }
        capacity
    }

    /// Whether room must be made before more inserts (for a set on disk,
    /// also when its stale fingerprints take a quarter of the table).
    pub fn needs_room(&self) -> bool {
        self.memory_len() >= self.pause_threshold()
            || matches!(self, VisitedSet::Disk(set) if set.stale_is_large())
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        match self {
            VisitedSet::Memory(table) => table.memory_bytes(),
            VisitedSet::Disk(set) => set.memory_bytes(),
        }
    }

    /// Bytes on disk.
    pub fn disk_bytes(&self) -> u64 {
        match self {
            VisitedSet::Memory(_) => 0,
            VisitedSet::Disk(set) => set.disk_bytes(),
        }
    }

    /// Inserts that may still be made into the in-memory table before room
    /// must be made: the table is never filled beyond [`HARD_LOAD`], so an
    /// insert within this room never finds it full.
    pub fn insert_room(&self) -> u64 {
        let limit = (self.memory_capacity() as f64 * HARD_LOAD) as u64;
        limit.saturating_sub(self.memory_len())
    }

    /// Makes room, if needed, so that afterwards the table is below its pause
    /// threshold and at least `wanted.least` inserts fit ([`insert_room`]),
    /// `wanted.preferred` when the budget allows: grows the in-memory table
    /// (by at least a quarter, within `memory_budget_bytes` when given), or
    /// flushes it to disk (growing the bounded table only when
    /// `wanted.least` exceeds it, within the same budget). Does nothing when
    /// there is room already.
    ///
    /// [`insert_room`]: Self::insert_room
    pub fn make_room(
        &mut self,
        memory_budget_bytes: Option<u64>,
        wanted: Wanted,
    ) -> Result<(), RoomError> {
        if !self.needs_room() && self.insert_room() >= wanted.preferred {
            return Ok(());
        }
        match self {
            VisitedSet::Memory(table) => {
                let len = table.len();
                let capacity = table.capacity();
                // The least capacity that does the job, and the one preferred.
                let least = slots_holding(len + wanted.least, HARD_LOAD)
                    .max(slots_holding(len + 1, GROW_AT_LOAD))
                    .max(capacity + capacity / 16);
                let preferred = grown_capacity(capacity)
                    .max(slots_holding(len + wanted.preferred, GROW_AT_LOAD))
                    .max(least);
                let capacity = affordable_capacity(least, preferred, memory_budget_bytes)?;
                table.grow(capacity);
                Ok(())
            }
            VisitedSet::Disk(set) => {
                if set.memory_len() > 0 {
                    set.flush().map_err(RoomError::Io)?;
                }
                let capacity = set.memory_capacity();
                let least = slots_holding(wanted.least, HARD_LOAD);
                if least > capacity {
                    let preferred = slots_holding(wanted.preferred, HARD_LOAD);
                    set.grow_memory(affordable_capacity(least, preferred, memory_budget_bytes)?);
                }
                Ok(())
            }
        }
    }

    /// Writes every fingerprint to a durable file at `path` (16 bytes each).
    pub fn save(&mut self, path: &Path) -> io::Result<()> {
        match self {
            VisitedSet::Memory(table) => table.save(path),
            VisitedSet::Disk(set) => set.save(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With fingerprints on disk, the in-memory table need hold only the
    /// least room wanted (one state's new successors), not the room a worker
    /// block would prefer, when the budget allows no more.
    #[test]
    fn a_set_on_disk_within_a_small_budget_makes_the_least_room_wanted() {
        let dir = tempfile::tempdir().unwrap();
        const BUDGET: u64 = 32 << 10; // 2,048 slots
        let mut set = VisitedSet::Disk(DiskFingerprintSet::new(2048, dir.path()));
        let wanted = Wanted {
            least: 64,
            preferred: 64 + 4096,
        };
        set.make_room(Some(BUDGET), wanted).unwrap();
        assert!(set.insert_room() >= 64);
        let too_much = Wanted::exactly(4096);
        assert!(matches!(
            set.make_room(Some(BUDGET), too_much),
            Err(RoomError::OverBudget { .. })
        ));
    }
}
