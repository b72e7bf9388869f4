//! A visited set larger than memory: recent fingerprints in a bounded
//! in-memory table, older ones in sorted runs on disk, log-structured.
//!
//! When the in-memory table fills up, its fingerprints are sorted and written
//! as a new run (a write proportional to the table, not to the set), and the
//! table starts empty. Runs are merged by size tiers, as in a log-structured
//! merge tree: when [`FANOUT`] runs of the same tier are the newest, they are
//! merged into one run of the next tier (one sequential pass), so every
//! fingerprint is rewritten about log_FANOUT(set / table) times over a whole
//! search, and there are at most `FANOUT - 1` runs a tier. A lookup that
//! misses in memory asks each run's in-memory filter (about 9 bits a
//! fingerprint) and reads one page only of the runs whose filter lets it
//! through: a new fingerprint reads a page with probability about 0.4% per
//! run, one already on disk reads its own run's page. Membership answers are
//! exact: a filter only skips runs.
//!
//! Lookups can also be batched ([`DiskFingerprintSet::defer_disk_lookups`]):
//! an insert then consults the in-memory table only, and its owner later
//! settles the batch of fingerprints it took as new
//! ([`DiskFingerprintSet::settle_candidates`]) in increasing order, one
//! monotone sweep over each run. Those found on disk were seen before; they
//! stay in the table (so that they are not taken as new again) but are
//! marked stale, and a flush leaves them out of its run, so runs stay
//! disjoint and the count exact.

use std::fs::File;
use std::io;
use std::mem;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cmc_model::Fingerprint;

use crate::sorted_run::{self, SortedRun};
use crate::{FingerprintTable, Insertion};

/// Runs of one tier merged into one of the next tier.
const FANOUT: usize = 4;

/// A set of fingerprints of bounded memory: a [`FingerprintTable`] of fixed
/// capacity in front of sorted runs on disk.
///
/// [`insert`](Self::insert) is safe from many threads at once; it never
/// adds to the runs. When [`needs_flush`](Self::needs_flush) says the table
/// is full enough, the owner calls [`flush`](Self::flush) with exclusive
/// access.
pub struct DiskFingerprintSet {
    memory: FingerprintTable,
    /// Oldest first; each holds fingerprints no other run or the table holds.
    runs: Vec<TieredRun>,
    /// Where the private directory of runs is made.
    parent: PathBuf,
    /// The private directory of runs, made at the first flush and removed
    /// with the set.
    runs_dir: Option<tempfile::TempDir>,
    /// Runs written so far (flushes and merges), naming the next file.
    runs_written: u64,
    flushes: u64,
    /// Whether inserts consult the in-memory table only (batched lookups).
    deferred: AtomicBool,
    /// Fingerprints in the table that a settled batch found on disk too
    /// (unordered); left out of the next flush.
    stale: Mutex<Vec<Fingerprint>>,
}

/// A run and its size tier.
struct TieredRun {
    run: SortedRun,
    tier: u32,
}

/// Fraction of the in-memory table's slots filled before a flush is due.
const FLUSH_AT_LOAD: f64 = 0.75;

impl DiskFingerprintSet {
    /// An empty set whose in-memory table has `memory_capacity` slots and
    /// whose runs are written in a private directory made under `dir`.
    pub fn new(memory_capacity: usize, dir: &Path) -> DiskFingerprintSet {
        DiskFingerprintSet {
            memory: FingerprintTable::with_capacity(memory_capacity),
            runs: Vec::new(),
            parent: dir.to_path_buf(),
            runs_dir: None,
            runs_written: 0,
            flushes: 0,
            deferred: AtomicBool::new(false),
            stale: Mutex::new(Vec::new()),
        }
    }

    /// Inserts `fingerprint`; `None` only if the in-memory table is full
    /// (the owner flushes before that happens).
    ///
    /// While disk lookups are deferred, only the in-memory table is asked:
    /// [`Insertion::New`] then means "new since the last flush", a candidate
    /// the owner must settle with [`settle_candidates`](Self::settle_candidates).
    #[inline]
    pub fn insert(&self, fingerprint: Fingerprint) -> Option<Insertion> {
        if self.deferred.load(Ordering::Relaxed) {
            return self.memory.insert(fingerprint);
        }
        if self.memory.contains(fingerprint)
            || self
                .runs
                .iter()
                .rev()
                .any(|tiered| tiered.run.contains(fingerprint))
        {
            return Some(Insertion::Present);
        }
        self.memory.insert(fingerprint)
    }

    /// Makes inserts consult the in-memory table only (`true`), leaving the
    /// runs to [`settle_candidates`](Self::settle_candidates), or the runs
    /// too (`false`). The owner settles every candidate before it flushes.
    pub fn defer_disk_lookups(&self, deferred: bool) {
        self.deferred.store(deferred, Ordering::Relaxed);
    }

    /// Settles candidates inserted while disk lookups were deferred:
    /// `sorted` holds their fingerprints in increasing order, each taken as
    /// new by the in-memory table since the last flush. Returns whether each
    /// is in a run (seen before the last flush: not new after all); those
    /// are marked stale. Each run is searched in one monotone sweep, its
    /// filter first.
    pub fn settle_candidates(&self, sorted: &[Fingerprint]) -> Vec<bool> {
        debug_assert!(sorted.windows(2).all(|pair| pair[0] < pair[1]));
        let mut on_disk = vec![false; sorted.len()];
        for tiered in &self.runs {
            for (found, &fingerprint) in on_disk.iter_mut().zip(sorted) {
                if !*found && tiered.run.contains(fingerprint) {
                    *found = true;
                }
            }
        }
        let mut stale = self.stale.lock().unwrap_or_else(|p| p.into_inner());
        stale.extend(
            sorted
                .iter()
                .zip(&on_disk)
                .filter(|(_, &found)| found)
                .map(|(&fingerprint, _)| fingerprint),
        );
        on_disk
    }

    /// Number of stale fingerprints in the table (found on disk too).
    fn stale_len(&self) -> usize {
        self.stale.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the stale fingerprints fill a quarter of the table's slots:
    /// the table should then be flushed, which frees them (it bounds the
    /// memory they take to a quarter of the table's).
    pub fn stale_is_large(&self) -> bool {
        self.stale_len() >= self.memory.capacity() / 4
    }

    /// Fingerprints in the in-memory table, stale ones included (its fill).
    pub fn memory_len(&self) -> u64 {
        self.memory.len()
    }

    /// Prefetches the in-memory slot of `fingerprint`.
    #[inline]
    pub fn prefetch(&self, fingerprint: Fingerprint) {
        self.memory.prefetch(fingerprint);
    }

    /// Number of fingerprints stored, in memory and on disk (candidates not
    /// yet settled count as stored).
    pub fn len(&self) -> u64 {
        self.memory.len() - self.stale_len() as u64 + self.disk_len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the in-memory table is full enough to be flushed.
    pub fn needs_flush(&self) -> bool {
        self.memory.len() as f64 >= self.memory.capacity() as f64 * FLUSH_AT_LOAD
    }

    /// Bytes of memory the set holds (table, stale list, fence indexes and
    /// filters; the runs' pages are the operating system's page cache).
    pub fn memory_bytes(&self) -> usize {
        self.memory.memory_bytes()
            + self.stale_len() * std::mem::size_of::<Fingerprint>()
            + self
                .runs
                .iter()
                .map(|tiered| tiered.run.memory_bytes())
                .sum::<usize>()
    }

    /// Number of fingerprints in the runs on disk.
    pub fn disk_len(&self) -> u64 {
        self.runs.iter().map(|tiered| tiered.run.len() as u64).sum()
    }

    /// Slots of the in-memory table.
    pub fn memory_capacity(&self) -> usize {
        self.memory.capacity()
    }

    /// Bytes of the runs on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.runs.iter().map(|tiered| tiered.run.disk_bytes()).sum()
    }

    /// Number of flushes so far.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Number of runs on disk.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// The tier of a run of `count` fingerprints: 0 up to `FANOUT` times a
    /// full table, then one more for every factor of `FANOUT`.
    fn tier_of(&self, count: usize) -> u32 {
        let unit = (self.memory.capacity() as f64 * FLUSH_AT_LOAD).max(1.0);
        let mut tier = 0;
        let mut bound = unit * FANOUT as f64;
        while count as f64 >= bound {
            tier += 1;
            bound *= FANOUT as f64;
        }
        tier
    }

    /// A path for the next run, in the private directory (made if needed).
    fn next_run_path(&mut self) -> io::Result<PathBuf> {
        if self.runs_dir.is_none() {
            self.runs_dir = Some(
                tempfile::Builder::new()
                    .prefix("cmc-fingerprints-")
                    .tempdir_in(&self.parent)?,
            );
        }
        self.runs_written += 1;
        let dir = self.runs_dir.as_ref().expect("made above").path();
        Ok(dir.join(format!("{}.run", self.runs_written)))
    }

    /// Adds `run` as the newest run, then merges the newest runs while
    /// [`FANOUT`] of them are of the newest one's tier or below.
    fn push_run(&mut self, run: SortedRun) -> io::Result<()> {
        let tier = self.tier_of(run.len());
        self.runs.push(TieredRun { run, tier });
        loop {
            let newest = self.runs.last().expect("just pushed").tier;
            let group = self
                .runs
                .iter()
                .rev()
                .take_while(|tiered| tiered.tier <= newest)
                .count();
            if group < FANOUT {
                return Ok(());
            }
            let first = self.runs.len() - group;
            let expected: usize = self.runs[first..].iter().map(|t| t.run.len()).sum();
            let path = self.next_run_path()?;
            let merged = {
                let parts: Vec<&SortedRun> = self.runs[first..].iter().map(|t| &t.run).collect();
                SortedRun::write(path, sorted_run::merged(&parts))?
            };
            check_count("merging runs", merged.len(), expected)?;
            for old in self.runs.drain(first..) {
                remove_run(old.run)?;
            }
            let tier = self.tier_of(merged.len()).max(newest + 1);
            self.runs.push(TieredRun { run: merged, tier });
        }
    }

    /// Writes the in-memory fingerprints as a new run (merging runs as
    /// their tiers fill) and empties the table.
    ///
    /// Stale fingerprints (already on disk) are left out of the new run.
    pub fn flush(&mut self) -> io::Result<()> {
        let mut recent: Vec<Fingerprint> = self.memory.iter().collect();
        let mut stale = mem::take(self.stale.get_mut().unwrap_or_else(|p| p.into_inner()));
        if recent.is_empty() {
            return Ok(());
        }
        recent.sort_unstable();
        stale.sort_unstable();
        let expected = recent.len() - stale.len();
        let fresh = without(recent, &stale);
        let path = self.next_run_path()?;
        let run = SortedRun::write(path, fresh.into_iter())?;
        check_count("flushing the table", run.len(), expected)?;
        self.flushes += 1;
        self.memory = FingerprintTable::with_capacity(self.memory.capacity());
        self.push_run(run)
    }

    /// Replaces the empty in-memory table by one of `memory_capacity` slots
    /// (for a burst of new fingerprints larger than the table).
    ///
    /// Panics if the table holds fingerprints (flush first; a caller bug).
    pub fn grow_memory(&mut self, memory_capacity: usize) {
        assert!(self.memory.is_empty(), "only an empty table is replaced");
        self.memory = FingerprintTable::with_capacity(memory_capacity);
    }

    /// Flushes, then writes every fingerprint, sorted, to a durable file at
    /// `path` (the format of [`FingerprintTable::save`]; a symbolic link
    /// there is refused).
    pub fn save(&mut self, path: &Path) -> io::Result<()> {
        self.flush()?;
        let mut out = io::BufWriter::with_capacity(1 << 20, crate::nofollow_files::create(path)?);
        let parts: Vec<&SortedRun> = self.runs.iter().map(|tiered| &tiered.run).collect();
        for fingerprint in sorted_run::merged(&parts) {
            sorted_run::write_record(&mut out, fingerprint)?;
        }
        out.into_inner()
            .map_err(|error| error.into_error())?
            .sync_all()
    }

    /// A set holding the fingerprints saved at `path` by [`save`](Self::save)
    /// (sorted; a symbolic link there is refused), with an empty in-memory
    /// table of `memory_capacity` slots and its runs under `dir`; `stop` can
    /// end the load (see [`crate::stop`]).
    pub fn load(
        path: &Path,
        memory_capacity: usize,
        dir: &Path,
        stop: crate::stop::Stop<'_>,
    ) -> io::Result<DiskFingerprintSet> {
        let mut set = DiskFingerprintSet::new(memory_capacity, dir);
        let run_path = set.next_run_path()?;
        io::copy(
            &mut crate::stop::Stoppable::new(crate::nofollow_files::open(path)?, stop),
            &mut File::create(&run_path)?,
        )?;
        let run = SortedRun::open(run_path).map_err(|error| match error.kind() {
            io::ErrorKind::InvalidData => io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a sorted fingerprint run", path.display()),
            ),
            _ => error,
        })?;
        if run.len() > 0 {
            let tier = set.tier_of(run.len());
            set.runs.push(TieredRun { run, tier });
        }
        Ok(set)
    }

    /// Every fingerprint, from disk then memory (stale ones of the table
    /// twice: flush first for each once).
    pub fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
        self.runs
            .iter()
            .flat_map(|tiered| tiered.run.iter())
            .chain(self.memory.iter())
    }
}

/// `sorted` without the members of `removed` (both increasing; `removed`
/// a subset of `sorted`, else the caller's count check fails).
fn without(sorted: Vec<Fingerprint>, removed: &[Fingerprint]) -> Vec<Fingerprint> {
    if removed.is_empty() {
        return sorted;
    }
    let mut removed = removed.iter().peekable();
    sorted
        .into_iter()
        .filter(|fingerprint| {
            while removed.next_if(|&r| r < fingerprint).is_some() {}
            removed.next_if(|&r| r == fingerprint).is_none()
        })
        .collect()
}

/// An error unless a run written while `doing` holds the `expected` count.
fn check_count(doing: &str, count: usize, expected: usize) -> io::Result<()> {
    if count == expected {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{doing} gave {count} fingerprints, expected {expected}"
        )))
    }
}

/// Unmaps `run` and deletes its file.
fn remove_run(run: SortedRun) -> io::Result<()> {
    let path = run.path().to_path_buf();
    drop(run);
    std::fs::remove_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::random_fingerprints;
    use rand::{Rng, SeedableRng};
    use std::collections::HashSet;

    #[test]
    fn fingerprints_stay_members_across_flushes_and_merges() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(4096, dir.path());
        let fingerprints = random_fingerprints(60_000, 9);
        let mut new = 0;
        for chunk in fingerprints.chunks(1000) {
            for &fp in chunk {
                if set.insert(fp) == Some(Insertion::New) {
                    new += 1;
                }
            }
            if set.needs_flush() {
                set.flush().unwrap();
            }
        }
        assert_eq!(new, 60_000);
        assert!(set.flushes() >= 12, "the table was flushed many times");
        assert!(set.runs() < set.flushes() as usize, "runs were merged");
        assert!(set.runs() <= 2 * (FANOUT - 1) + 1, "{} runs", set.runs());
        assert_eq!(set.len(), 60_000);
        for &fp in &fingerprints {
            assert_eq!(set.insert(fp), Some(Insertion::Present));
        }
        assert_eq!(
            set.insert(Fingerprint::from_halves(3, 3)),
            Some(Insertion::New)
        );
        let mut all: Vec<_> = set.iter().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 60_001);
    }

    #[test]
    fn runs_stay_few_and_tiers_decrease_from_oldest_to_newest() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(1024, dir.path());
        for (flush, chunk) in random_fingerprints(200 * 700, 13).chunks(700).enumerate() {
            for &fp in chunk {
                set.insert(fp).unwrap();
            }
            set.flush().unwrap();
            let tiers: Vec<u32> = set.runs.iter().map(|t| t.tier).collect();
            assert!(tiers.windows(2).all(|w| w[0] >= w[1]), "{tiers:?}");
            for tier in 0..=tiers[0] {
                let same = tiers.iter().filter(|&&t| t == tier).count();
                assert!(same < FANOUT, "after flush {flush}: {tiers:?}");
            }
        }
        assert_eq!(set.flushes(), 200);
        assert!(set.runs() <= 4 * (FANOUT - 1), "{} runs", set.runs());
        assert_eq!(set.disk_len(), 200 * 700);
    }

    /// Random inserts, flushes, saves and loads agree with a `HashSet`.
    #[test]
    fn membership_agrees_with_a_hash_set() {
        for seed in 0..8u64 {
            let dir = tempfile::tempdir().unwrap();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut set = DiskFingerprintSet::new(1024, dir.path());
            let mut model = HashSet::new();
            let mut most_runs = 0;
            // A small universe, so that most inserts are repeats of
            // fingerprints in memory or in any run; some share a high word.
            let universe: Vec<Fingerprint> = random_fingerprints(5000, 100 + seed)
                .into_iter()
                .enumerate()
                .map(|(i, fp)| match i % 7 {
                    0 => Fingerprint::from_halves(0x5555, fp.low()),
                    _ => fp,
                })
                .collect();
            for step in 0..30_000 {
                let fp = universe[rng.gen_range(0..universe.len())];
                let expected = if model.insert(fp) {
                    Insertion::New
                } else {
                    Insertion::Present
                };
                assert_eq!(set.insert(fp), Some(expected), "seed {seed} step {step}");
                match rng.gen_range(0..1000) {
                    0..=9 => set.flush().unwrap(),
                    10 => {
                        let path = dir.path().join("saved");
                        set.save(&path).unwrap();
                        set = DiskFingerprintSet::load(&path, 1024, dir.path(), crate::stop::NEVER)
                            .unwrap();
                        std::fs::remove_file(path).unwrap();
                    }
                    _ if set.needs_flush() => set.flush().unwrap(),
                    _ => {}
                }
                assert_eq!(set.len(), model.len() as u64);
                most_runs = most_runs.max(set.runs());
            }
            assert!(most_runs >= 3, "seed {seed}: several runs were searched");
        }
    }

    /// Batched lookups: inserts consult the table only, batches are settled
    /// against the runs, and the candidates settled as new are exactly
    /// those a `HashSet` has not seen; flushes leave stale ones out, so the
    /// runs stay disjoint and `len` exact.
    #[test]
    fn settled_batches_agree_with_a_hash_set() {
        for seed in 0..6u64 {
            let dir = tempfile::tempdir().unwrap();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut set = DiskFingerprintSet::new(1024, dir.path());
            set.defer_disk_lookups(true);
            let mut model = HashSet::new();
            let universe = random_fingerprints(4000, 200 + seed);
            let (mut stale_seen, mut most_runs) = (0, 0);
            for batch in 0..200 {
                let size = rng.gen_range(1..300);
                let mut candidates = Vec::new();
                for _ in 0..size {
                    let fp = universe[rng.gen_range(0..universe.len())];
                    if set.insert(fp) == Some(Insertion::New) {
                        candidates.push(fp);
                    }
                }
                candidates.sort_unstable();
                let on_disk = set.settle_candidates(&candidates);
                for (fp, on_disk) in candidates.iter().zip(on_disk) {
                    assert_eq!(model.insert(*fp), !on_disk, "seed {seed} batch {batch}");
                    stale_seen += usize::from(on_disk);
                }
                assert_eq!(set.len(), model.len() as u64, "seed {seed} batch {batch}");
                if set.memory.len() as f64 >= set.memory.capacity() as f64 * 0.6
                    || set.stale_is_large()
                {
                    set.flush().unwrap();
                    assert_eq!(set.len(), model.len() as u64);
                    assert_eq!(set.disk_len(), model.len() as u64, "disjoint runs");
                }
                most_runs = most_runs.max(set.runs());
            }
            assert!(
                stale_seen > 100,
                "seed {seed}: {stale_seen} candidates were on disk"
            );
            assert!(most_runs >= 3, "seed {seed}: several runs were searched");
            set.defer_disk_lookups(false);
            assert!(model
                .iter()
                .all(|&fp| set.insert(fp) == Some(Insertion::Present)));
            set.flush().unwrap();
            let mut all: Vec<_> = set.iter().collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), model.len());
        }
    }

    #[test]
    fn a_stale_fingerprint_missing_from_the_table_fails_the_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(1024, dir.path());
        set.insert(Fingerprint::from_halves(1, 1)).unwrap();
        set.stale
            .get_mut()
            .unwrap()
            .push(Fingerprint::from_halves(2, 2));
        let error = set.flush().unwrap_err();
        assert!(error.to_string().contains("expected"), "{error}");
    }

    #[test]
    fn a_saved_set_loads_back_and_unsorted_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(1024, dir.path());
        let fingerprints = random_fingerprints(5000, 14);
        for chunk in fingerprints.chunks(500) {
            for &fp in chunk {
                set.insert(fp).unwrap();
            }
            set.flush().unwrap();
        }
        let path = dir.path().join("saved");
        set.save(&path).unwrap();
        let loaded = DiskFingerprintSet::load(&path, 1024, dir.path(), crate::stop::NEVER).unwrap();
        assert_eq!(loaded.len(), 5000);
        assert!(fingerprints
            .iter()
            .all(|&fp| loaded.insert(fp) == Some(Insertion::Present)));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[..32].rotate_left(16);
        std::fs::write(&path, &bytes).unwrap();
        let error = DiskFingerprintSet::load(&path, 1024, dir.path(), crate::stop::NEVER)
            .err()
            .unwrap();
        assert!(error.to_string().contains("not a sorted"), "{error}");
    }

    /// Two searches sharing a spill directory (the default temporary one)
    /// must not write each other's runs (a run file rewritten under a set
    /// would answer for other fingerprints, or SIGBUS on a shorter file).
    #[test]
    fn two_sets_in_one_directory_keep_their_own_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut sets = [1024, 1024].map(|capacity| DiskFingerprintSet::new(capacity, dir.path()));
        let members = [random_fingerprints(3000, 15), random_fingerprints(3000, 16)];
        for (set, members) in sets.iter_mut().zip(&members) {
            for chunk in members.chunks(500) {
                for &fp in chunk {
                    assert_eq!(set.insert(fp), Some(Insertion::New));
                }
                set.flush().unwrap();
            }
        }
        for (set, members) in sets.iter().zip(&members) {
            assert_eq!(set.len(), members.len() as u64);
            assert!(members
                .iter()
                .all(|&fp| set.insert(fp) == Some(Insertion::Present)));
        }
        let [first, second] = &sets;
        assert!(members[1].iter().all(|&fp| !first.memory.contains(fp)
            && !first.runs.iter().any(|tiered| tiered.run.contains(fp))));
        assert!(members[0]
            .iter()
            .all(|&fp| !second.runs.iter().any(|tiered| tiered.run.contains(fp))));
    }

    #[test]
    fn runs_live_in_a_private_directory_removed_with_the_set() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(1024, dir.path());
        set.insert(Fingerprint::from_halves(1, 1)).unwrap();
        set.flush().unwrap();
        let private = set.runs_dir.as_ref().unwrap().path().to_path_buf();
        assert!(private.starts_with(dir.path()) && private != dir.path());
        drop(set);
        assert!(!private.exists());
    }
}
