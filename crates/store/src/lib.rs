//! Storage for a search: visited sets, BFS frontier segments and parent links (see `ARCHITECTURE.md`).
//!
//! - [`FingerprintTable`]: the visited set, 16 bytes per slot, lock-free inserts
//!   from many workers; [`DiskFingerprintSet`]: a bounded table in front of
//!   log-structured sorted runs on disk, each with an in-memory filter, for
//!   visited sets larger than memory; [`InsertRoom`]:
//!   the inserts it can take between two pauses, shared out among workers.
//! - [`Frontier`]: a BFS level as segments of canonical state bytes, never heap
//!   objects, so a level can be written to disk or sent to another process.
//! - [`TraceLog`]: parent links of every distinct state, kept in a file (as
//!   TLC's trace file), from which a counterexample path is rebuilt.

mod disk_fingerprint_set;
mod fingerprint_table;
mod frontier;
pub mod input_file;
mod insert_room;
mod mapped_words;
pub mod nofollow_files;
mod run_filter;
mod sorted_run;
pub mod stop;
mod trace_log;
mod visited_set;

pub use disk_fingerprint_set::DiskFingerprintSet;
pub use fingerprint_table::{advise_huge_pages, FingerprintTable, Insertion};
pub use frontier::{Frontier, FrontierEntry, LevelBuilder, Segment, SEGMENT_STATES_MAX};
pub use insert_room::{InsertRoom, Wanted, WorkerRoom};
pub use trace_log::{TraceId, TraceLog, TraceRecord, TraceWriter};
pub use visited_set::{RoomError, VisitedSet};

/// Helpers shared by the unit tests of the store.
#[cfg(test)]
mod test_support {
    use cmc_model::Fingerprint;
    use rand::{Rng, SeedableRng};

    /// `count` pseudo-random fingerprints (no zero half) from `seed`.
    pub fn random_fingerprints(count: usize, seed: u64) -> Vec<Fingerprint> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..count)
            .map(|_| Fingerprint::from_halves(rng.gen::<u64>() | 1, rng.gen::<u64>() | 1))
            .collect()
    }
}
