//! Breadth-first passes over a visited set on disk with its disk lookups
//! batched, as TLC's disk fingerprint set does.
//!
//! During a pass, a successor is looked up in the set's in-memory table
//! only. One the table has not seen since its last flush is a *candidate*:
//! it gets its parent link and its invariants checked as a new state would,
//! but it goes into this pass's staging level, not into the next level.
//! When the pass pauses (the staging level reached its share of memory, the
//! table must be flushed, or the level is done), the candidates are settled:
//! their fingerprints are sorted and swept against each run on disk in
//! increasing order ([`DiskFingerprintSet::settle_candidates`]), and only
//! those on no run enter the next level. The others were seen before the
//! last flush: they are dropped (their parent links are never followed).
//!
//! Counts, depth and counterexamples stay exact and shortest: a pass ends
//! inside the level it started in and every candidate is settled before the
//! next pass, flush or checkpoint; a candidate found on disk was a state
//! already stored at this depth or less, so an invariant it breaks was
//! reported when it was first stored, at a length no greater. Coverage
//! counts ("taken to a new state") would count candidates, so a search with
//! coverage keeps the per-fingerprint lookups.

use std::sync::atomic::{AtomicUsize, Ordering};

use cmc_model::Fingerprint;
use cmc_store::{DiskFingerprintSet, Frontier, LevelBuilder, Segment, VisitedSet};

use crate::expand::SearchError;
use crate::SearchOptions;

/// Candidates one worker settles at a time: a sort of this many 32-byte
/// keys (about 200 MB with their bookkeeping); the more at once, the
/// denser each sweep over the runs.
const SETTLE_CHUNK: usize = 1 << 22;

/// One pass's candidates, staged until they are settled against the runs.
pub(crate) struct CandidateBatch {
    staging: LevelBuilder,
    /// Bytes of staged states at which the pass pauses to settle them.
    pause_at_bytes: usize,
}

/// Whether a breadth-first search with `options` batches the disk lookups
/// of its visited set (fingerprints on disk, no coverage counts).
pub(crate) fn batched(options: &SearchOptions) -> bool {
    options.fingerprints_on_disk && !options.coverage
}

impl CandidateBatch {
    /// A batch for the next pass if `table` is on disk and `options` batch
    /// its lookups; the table's disk lookups are deferred until
    /// [`settle`](Self::settle).
    pub fn begin(table: &VisitedSet, options: &SearchOptions) -> Option<CandidateBatch> {
        let VisitedSet::Disk(set) = table else {
            return None;
        };
        if !batched(options) {
            return None;
        }
        set.defer_disk_lookups(true);
        Some(CandidateBatch {
            // Never spilled: the pass pauses when it holds `pause_at_bytes`.
            staging: LevelBuilder::new(usize::MAX, &options.spill_dir()),
            pause_at_bytes: options.candidate_memory_budget_bytes(),
        })
    }

    /// Where the pass puts its candidates (in place of the next level).
    pub fn staging(&self) -> &LevelBuilder {
        &self.staging
    }

    /// Whether the staged candidates fill the batch's memory: the pass
    /// should pause and settle them.
    pub fn is_full(&self) -> bool {
        self.staging.memory_bytes() >= self.pause_at_bytes
    }

    /// Settles the candidates against the runs of `table` with `workers`
    /// threads, pushes those on no run into `next`, and turns the table's
    /// disk lookups back on. Returns the number of candidates dropped.
    pub fn settle(
        self,
        table: &VisitedSet,
        next: &LevelBuilder,
        workers: usize,
    ) -> Result<u64, SearchError> {
        let VisitedSet::Disk(set) = table else {
            unreachable!("a batch is only begun on a set on disk");
        };
        let staged = self.staging.finish();
        let cursor = AtomicUsize::new(0);
        let results: Vec<Result<u64, SearchError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers.max(1))
                .map(|_| scope.spawn(|| settle_share(set, &staged, &cursor, next)))
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("a settling worker panicked"))
                .collect()
        });
        set.defer_disk_lookups(false);
        results.into_iter().sum()
    }
}

/// One worker's share of settling `staged`: chunks of segments taken from
/// `cursor` until none is left.
fn settle_share(
    set: &DiskFingerprintSet,
    staged: &Frontier,
    cursor: &AtomicUsize,
    next: &LevelBuilder,
) -> Result<u64, SearchError> {
    let mut dropped = 0;
    loop {
        let mut chunk = Vec::new();
        let mut entries = 0;
        while entries < SETTLE_CHUNK {
            let index = cursor.fetch_add(1, Ordering::Relaxed);
            if index >= staged.segment_count() {
                break;
            }
            if let Some(segment) = staged.take(index)? {
                entries += segment.len();
                chunk.push(segment);
            }
        }
        if chunk.is_empty() {
            return Ok(dropped);
        }
        dropped += settle_chunk(set, &chunk, next)?;
    }
}

/// Settles the candidates of `chunk`, pushing those on no run into `next`
/// in their staged order; returns the number dropped.
fn settle_chunk(
    set: &DiskFingerprintSet,
    chunk: &[Segment],
    next: &LevelBuilder,
) -> Result<u64, SearchError> {
    let mut keyed: Vec<(Fingerprint, u32)> = chunk
        .iter()
        .flat_map(Segment::iter)
        .zip(0u32..)
        .map(|(entry, index)| (Fingerprint::of_bytes(entry.state), index))
        .collect();
    keyed.sort_unstable();
    let sorted: Vec<Fingerprint> = keyed.iter().map(|&(fingerprint, _)| fingerprint).collect();
    let mut seen = vec![false; keyed.len()];
    for (&(_, index), on_disk) in keyed.iter().zip(set.settle_candidates(&sorted)) {
        seen[index as usize] = on_disk;
    }
    let mut out = Segment::new();
    for (entry, &seen) in chunk.iter().flat_map(Segment::iter).zip(&seen) {
        if !seen {
            out.push(entry.trace_id, entry.state);
            if out.is_full() {
                next.push(std::mem::take(&mut out))?;
            }
        }
    }
    next.push(out)?;
    Ok(seen.iter().filter(|&&seen| seen).count() as u64)
}
