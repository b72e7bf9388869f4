//! The visited set a search uses: in memory, or in memory and on disk.

use std::io;
use std::path::Path;

use cmc_model::Fingerprint;

use crate::{DiskFingerprintSet, FingerprintTable, Insertion};

/// Fraction of an in-memory table's slots filled before it must grow.
///
/// With [`GROWTH_NUMERATOR`]/[`GROWTH_DENOMINATOR`] = 5/4, the load stays
/// between 0.68 and 0.85, so a slot of 16 bytes costs 18.8 to 23.5 bytes per
/// stored fingerprint. (Doubling at 0.75 was measured 15% faster on
/// two-phase RM=8 but costs up to 43 bytes per fingerprint.)
const GROW_AT_LOAD: f64 = 0.85;
/// A growing table gets `capacity * GROWTH_NUMERATOR / GROWTH_DENOMINATOR` slots.
const GROWTH_NUMERATOR: usize = 5;
/// See [`GROWTH_NUMERATOR`].
const GROWTH_DENOMINATOR: usize = 4;

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
/// Shared by all workers through `&self` between pauses; when
/// [`needs_room`](Self::needs_room) (checked through
/// [`pause_threshold`](Self::pause_threshold) by workers), the owner calls
/// [`make_room`](Self::make_room) with exclusive access.
pub enum VisitedSet {
    /// Every fingerprint in one table that grows as it fills.
    Memory(FingerprintTable),
    /// A bounded table in front of a sorted run on disk.
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

    /// Number of fingerprints in the in-memory table.
    pub fn memory_len(&self) -> u64 {
        match self {
            VisitedSet::Memory(table) => table.len(),
            VisitedSet::Disk(set) => set.len() - set.disk_len(),
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
        (self.memory_capacity() as f64 * GROW_AT_LOAD) as u64
    }

    /// Whether room must be made before more inserts.
    pub fn needs_room(&self) -> bool {
        self.memory_len() >= self.pause_threshold()
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

    /// Makes room for more inserts: grows the in-memory table by a quarter (within
    /// `memory_budget_bytes`, when given), or flushes it to disk.
    pub fn make_room(&mut self, memory_budget_bytes: Option<u64>) -> Result<(), RoomError> {
        match self {
            VisitedSet::Memory(table) => {
                let wanted = table.capacity() / GROWTH_DENOMINATOR * GROWTH_NUMERATOR;
                let needed_bytes = FingerprintTable::bytes_for(wanted) as u64;
                // Within a budget, the last growth takes whatever is left,
                // as long as that is worth a rehash (a sixteenth more).
                let capacity = match memory_budget_bytes {
                    Some(budget_bytes) if needed_bytes > budget_bytes => {
                        let affordable =
                            (budget_bytes / FingerprintTable::bytes_for(1) as u64) as usize;
                        if affordable < table.capacity() + table.capacity() / 16 {
                            return Err(RoomError::OverBudget {
                                needed_bytes,
                                budget_bytes,
                            });
                        }
                        affordable
                    }
                    _ => wanted,
                };
                table.grow(capacity);
                Ok(())
            }
            VisitedSet::Disk(set) => set.flush().map_err(RoomError::Io),
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
