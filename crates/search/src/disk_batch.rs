//! Breadth-first passes over a visited set on disk with its disk lookups
//! batched, as TLC's disk fingerprint set does.
//!
//! During a pass, a successor is looked up in the set's in-memory table
//! only. One the table has not seen since its last flush is a *candidate*:
//! it gets its invariants checked as a new state would, but it goes into
//! this pass's staging level, not into the next level, with its parent
//! link kept beside it ([`NewLink::Deferred`]) instead of written to the
//! trace log. When the pass pauses (the staging level reached its share of
//! memory, the table must be flushed, or the level is done), the candidates
//! are settled: their fingerprints are sorted and swept against each run on
//! disk in increasing order ([`DiskFingerprintSet::settle_candidates`]),
//! and only those on no run have their parent links written and enter the
//! next level. The others were seen before the last flush: they are
//! dropped, and the trace log holds one link per distinct state. (A
//! candidate that breaks an invariant has its link written at once, for
//! the counterexample: at most one a property and worker per pass.)
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
use cmc_store::{
    DiskFingerprintSet, Frontier, FrontierEntry, LevelBuilder, Segment, TraceId, TraceLog,
    TraceRecord, TraceWriter, VisitedSet,
};

use crate::expand::SearchError;
use crate::SearchOptions;

/// Candidates one worker settles at a time: a sort of this many 32-byte
/// keys (about 200 MB with their bookkeeping); the more at once, the
/// denser each sweep over the runs.
const SETTLE_CHUNK: usize = 1 << 22;

/// The high bit of a staged entry's trace id: the entry is a candidate
/// whose parent link is deferred, the other bits are its parent's id and
/// its bytes are its step (u32 LE) then its state. (A trace id never has
/// this bit: the log would be 2^68 bytes.)
const DEFERRED: u64 = 1 << 63;

/// Where a new state's parent link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewLink {
    /// Written to the trace log, as this record.
    Written(TraceId),
    /// Not written yet: the state is a candidate of a batched pass, reached
    /// from `parent` by its action number `step`; the link is written if it
    /// is settled as new.
    Deferred { parent: TraceId, step: u32 },
}

impl NewLink {
    /// Appends the state `state` with this link to `segment`: a level's
    /// entry, or for a deferred link a staged candidate's.
    #[inline]
    pub fn push_to(self, segment: &mut Segment, state: &[u8]) {
        match self {
            NewLink::Written(id) => segment.push(id, state),
            NewLink::Deferred { parent, step } => {
                debug_assert!(parent & DEFERRED == 0, "a trace id is below 2^63");
                segment.push_joined(parent | DEFERRED, &step.to_le_bytes(), state)
            }
        }
    }

    /// The link and state of a staged entry written by [`push_to`](Self::push_to).
    fn staged(entry: FrontierEntry<'_>) -> (NewLink, &[u8]) {
        if entry.trace_id & DEFERRED == 0 {
            return (NewLink::Written(entry.trace_id), entry.state);
        }
        let (step, state) = entry.state.split_at(4);
        let link = NewLink::Deferred {
            parent: entry.trace_id & !DEFERRED,
            step: u32::from_le_bytes(step.try_into().expect("4 bytes")),
        };
        (link, state)
    }
}

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
    /// threads, writes the parent links of those on no run into `log` and
    /// pushes them into `next`, and turns the table's disk lookups back on.
    /// Returns the number of candidates dropped.
    pub fn settle(
        self,
        table: &VisitedSet,
        next: &LevelBuilder,
        log: &TraceLog,
        workers: usize,
    ) -> Result<u64, SearchError> {
        let VisitedSet::Disk(set) = table else {
            unreachable!("a batch is only begun on a set on disk");
        };
        let staged = self.staging.finish();
        let cursor = AtomicUsize::new(0);
        let results: Vec<Result<u64, SearchError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers.max(1))
                .map(|_| scope.spawn(|| settle_share(set, &staged, &cursor, next, log)))
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
/// `cursor` until none is left, their new candidates' links written to `log`.
fn settle_share(
    set: &DiskFingerprintSet,
    staged: &Frontier,
    cursor: &AtomicUsize,
    next: &LevelBuilder,
    log: &TraceLog,
) -> Result<u64, SearchError> {
    let mut writer = log.writer();
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
            writer.flush()?;
            return Ok(dropped);
        }
        dropped += settle_chunk(set, &chunk, next, &mut writer)?;
    }
}

/// Settles the candidates of `chunk`, pushing those on no run into `next`
/// in their staged order, their deferred links written with `writer`;
/// returns the number dropped.
fn settle_chunk(
    set: &DiskFingerprintSet,
    chunk: &[Segment],
    next: &LevelBuilder,
    writer: &mut TraceWriter<'_>,
) -> Result<u64, SearchError> {
    let staged = || chunk.iter().flat_map(Segment::iter).map(NewLink::staged);
    let fingerprints: Vec<Fingerprint> = staged()
        .map(|(_, state)| Fingerprint::of_bytes(state))
        .collect();
    let mut keyed: Vec<(Fingerprint, u32)> = fingerprints.iter().copied().zip(0u32..).collect();
    keyed.sort_unstable();
    let sorted: Vec<Fingerprint> = keyed.iter().map(|&(fingerprint, _)| fingerprint).collect();
    let mut seen = vec![false; keyed.len()];
    for (&(_, index), on_disk) in keyed.iter().zip(set.settle_candidates(&sorted)) {
        seen[index as usize] = on_disk;
    }
    let mut out = Segment::new();
    for (((link, state), &fingerprint), &seen) in staged().zip(&fingerprints).zip(&seen) {
        if seen {
            continue;
        }
        let id = match link {
            NewLink::Written(id) => id,
            NewLink::Deferred { parent, step } => writer.append(TraceRecord {
                fingerprint,
                parent: Some(parent),
                step,
            })?,
        };
        out.push(id, state);
        if out.is_full() {
            next.push(std::mem::take(&mut out))?;
        }
    }
    next.push(out)?;
    Ok(seen.iter().filter(|&&seen| seen).count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmc_store::Insertion;

    fn state(byte: u8) -> Vec<u8> {
        vec![byte; 3]
    }

    #[test]
    fn only_candidates_settled_as_new_have_their_links_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(1024, dir.path());
        set.insert(Fingerprint::of_bytes(&state(1)));
        set.flush().unwrap();
        let table = VisitedSet::Disk(set);
        let options = SearchOptions {
            fingerprints_on_disk: true,
            ..SearchOptions::default()
        };
        let batch = CandidateBatch::begin(&table, &options).unwrap();
        let VisitedSet::Disk(set) = &table else {
            unreachable!()
        };
        // State 1 is on disk, state 2 is new, state 3 is new with its link
        // written already (as a candidate breaking an invariant has).
        let mut segment = Segment::new();
        let links = [
            NewLink::Deferred { parent: 7, step: 0 },
            NewLink::Deferred { parent: 7, step: 1 },
            NewLink::Written(42),
        ];
        for (byte, link) in (1..).zip(links) {
            let fingerprint = Fingerprint::of_bytes(&state(byte));
            assert_eq!(set.insert(fingerprint), Some(Insertion::New));
            link.push_to(&mut segment, &state(byte));
        }
        batch.staging().push(segment).unwrap();
        let log = TraceLog::create_in(dir.path()).unwrap();
        let next = LevelBuilder::new(usize::MAX, dir.path());
        assert_eq!(batch.settle(&table, &next, &log, 2).unwrap(), 1);
        let level = next.finish();
        let entries: Vec<(u64, Vec<u8>)> = (0..level.segment_count())
            .filter_map(|index| level.take(index).unwrap())
            .flat_map(|segment| {
                segment
                    .iter()
                    .map(|entry| (entry.trace_id, entry.state.to_vec()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(entries.len(), 2);
        let (written, ref settled) = entries[0];
        assert_eq!(settled, &state(2));
        assert_eq!(
            log.read(written).unwrap(),
            TraceRecord {
                fingerprint: Fingerprint::of_bytes(&state(2)),
                parent: Some(7),
                step: 1,
            }
        );
        assert!(log.read(written + 1).is_err(), "one link was written");
        assert_eq!(entries[1], (42, state(3)));
    }
}
