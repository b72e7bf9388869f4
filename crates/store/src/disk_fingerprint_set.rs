//! A visited set larger than memory: recent fingerprints in a bounded
//! in-memory table, older ones in a sorted file on disk.
//!
//! The design follows TLC's disk fingerprint set: when the in-memory table
//! fills up, its fingerprints are sorted and merged with the sorted run on
//! disk into a new run (one sequential pass), and the table starts empty. A
//! lookup that misses in memory binary-searches the run through a small
//! in-memory index (the first fingerprint of every page) and one page of the
//! memory-mapped run, which the operating system keeps in its page cache as
//! long as memory allows. Breadth-first search finds most duplicates among
//! recent states, so most lookups never reach the run.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use cmc_model::Fingerprint;
use memmap2::Mmap;

use crate::{FingerprintTable, Insertion};

/// Fingerprints per page of the run (one 4 KiB page of 16-byte records).
const FINGERPRINTS_PER_PAGE: usize = 256;
/// Bytes of one fingerprint in the run: high then low word, little-endian.
const RECORD_BYTES: usize = 16;

/// The sorted run on disk.
struct SortedRun {
    path: PathBuf,
    map: Mmap,
    count: usize,
    /// The first fingerprint of every page, in order.
    page_starts: Vec<Fingerprint>,
}

impl SortedRun {
    fn open(path: PathBuf) -> io::Result<SortedRun> {
        let file = File::open(&path)?;
        // SAFETY: the run is written once, before it is mapped, and never
        // modified while mapped (a flush writes a new file).
        let map = unsafe { Mmap::map(&file)? };
        if map.len() % RECORD_BYTES != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a fingerprint run", path.display()),
            ));
        }
        let count = map.len() / RECORD_BYTES;
        let mut run = SortedRun {
            path,
            map,
            count,
            page_starts: Vec::new(),
        };
        run.page_starts = (0..count)
            .step_by(FINGERPRINTS_PER_PAGE)
            .map(|index| run.get(index))
            .collect();
        Ok(run)
    }

    #[inline]
    fn get(&self, index: usize) -> Fingerprint {
        let record = &self.map[index * RECORD_BYTES..(index + 1) * RECORD_BYTES];
        let word = |range: std::ops::Range<usize>| {
            u64::from_le_bytes(record[range].try_into().expect("8 bytes"))
        };
        Fingerprint::from_halves(word(0..8), word(8..16))
    }

    fn contains(&self, fingerprint: Fingerprint) -> bool {
        let Some(page) = self.page_of(fingerprint) else {
            return false;
        };
        let (mut low, mut high) = (
            page * FINGERPRINTS_PER_PAGE,
            ((page + 1) * FINGERPRINTS_PER_PAGE).min(self.count),
        );
        while low < high {
            let middle = (low + high) / 2;
            match self.get(middle).cmp(&fingerprint) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
        (0..self.count).map(|index| self.get(index))
    }

    /// The last page whose first fingerprint is <= `fingerprint`, if any.
    ///
    /// Fingerprints are uniform, so the page is guessed from the high word
    /// and found by galloping from the guess: a few probes of the index
    /// instead of a binary search over all of it (which, for a run of 10^8
    /// fingerprints, is some 20 cache misses per lookup).
    fn page_of(&self, fingerprint: Fingerprint) -> Option<usize> {
        let starts = &self.page_starts;
        let pages = starts.len();
        if pages == 0 || starts[0] > fingerprint {
            return None;
        }
        let guess = (((fingerprint.high() as u128) * pages as u128) >> 64) as usize;
        let guess = guess.min(pages - 1);
        // Bracket [low, high) with starts[low] <= fingerprint < starts[high].
        let (mut low, mut high) = if starts[guess] <= fingerprint {
            let mut step = 1;
            let mut low = guess;
            loop {
                let next = low + step;
                if next >= pages {
                    break (low, pages);
                }
                if starts[next] > fingerprint {
                    break (low, next);
                }
                low = next;
                step *= 2;
            }
        } else {
            let mut step = 1;
            let mut high = guess;
            loop {
                let next = high.saturating_sub(step);
                if starts[next] <= fingerprint {
                    break (next, high);
                }
                high = next;
                step *= 2;
            }
        };
        while high - low > 1 {
            let middle = (low + high) / 2;
            if starts[middle] <= fingerprint {
                low = middle;
            } else {
                high = middle;
            }
        }
        Some(low)
    }
}

/// A set of fingerprints of bounded memory: a [`FingerprintTable`] of fixed
/// capacity in front of a sorted run on disk.
///
/// [`insert`](Self::insert) is safe from many threads at once; it never
/// adds to the run. When [`needs_flush`](Self::needs_flush) says the table is
/// full enough, the owner calls [`flush`](Self::flush) with exclusive access.
pub struct DiskFingerprintSet {
    memory: FingerprintTable,
    run: Option<SortedRun>,
    dir: PathBuf,
    flushes: u64,
}

/// Fraction of the in-memory table's slots filled before a flush is due.
const FLUSH_AT_LOAD: f64 = 0.75;

impl DiskFingerprintSet {
    /// An empty set whose in-memory table has `memory_capacity` slots and
    /// whose runs are written under `dir`.
    pub fn new(memory_capacity: usize, dir: &Path) -> DiskFingerprintSet {
        DiskFingerprintSet {
            memory: FingerprintTable::with_capacity(memory_capacity),
            run: None,
            dir: dir.to_path_buf(),
            flushes: 0,
        }
    }

    /// Inserts `fingerprint`; `None` only if the in-memory table is full
    /// (the owner flushes before that happens).
    #[inline]
    pub fn insert(&self, fingerprint: Fingerprint) -> Option<Insertion> {
        if self.memory.contains(fingerprint)
            || self
                .run
                .as_ref()
                .is_some_and(|run| run.contains(fingerprint))
        {
            return Some(Insertion::Present);
        }
        self.memory.insert(fingerprint)
    }

    /// Prefetches the in-memory slot of `fingerprint`.
    #[inline]
    pub fn prefetch(&self, fingerprint: Fingerprint) {
        self.memory.prefetch(fingerprint);
    }

    /// Number of fingerprints stored, in memory and on disk.
    pub fn len(&self) -> u64 {
        self.memory.len() + self.run.as_ref().map_or(0, |run| run.count as u64)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the in-memory table is full enough to be flushed.
    pub fn needs_flush(&self) -> bool {
        self.memory.len() as f64 >= self.memory.capacity() as f64 * FLUSH_AT_LOAD
    }

    /// Bytes of memory the set holds (table and page index; the run's pages
    /// are the operating system's page cache).
    pub fn memory_bytes(&self) -> usize {
        self.memory.memory_bytes()
            + self
                .run
                .as_ref()
                .map_or(0, |run| run.page_starts.len() * RECORD_BYTES)
    }

    /// Number of fingerprints in the run on disk.
    pub fn disk_len(&self) -> u64 {
        self.run.as_ref().map_or(0, |run| run.count as u64)
    }

    /// Slots of the in-memory table.
    pub fn memory_capacity(&self) -> usize {
        self.memory.capacity()
    }

    /// Bytes of the run on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.run.as_ref().map_or(0, |run| run.map.len() as u64)
    }

    /// Number of flushes so far.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Merges the in-memory fingerprints into the run on disk and empties
    /// the table.
    pub fn flush(&mut self) -> io::Result<()> {
        let mut recent: Vec<Fingerprint> = self.memory.iter().collect();
        recent.sort_unstable();
        self.flushes += 1;
        let path = self.dir.join(format!("fingerprints-{}.run", self.flushes));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        let mut write = |fingerprint: Fingerprint| -> io::Result<()> {
            out.write_all(&fingerprint.high().to_le_bytes())?;
            out.write_all(&fingerprint.low().to_le_bytes())
        };
        {
            let mut old = self.run.as_ref().map(|run| run.iter().peekable());
            for fingerprint in recent {
                if let Some(old) = old.as_mut() {
                    while let Some(&earlier) = old.peek().filter(|&&earlier| earlier < fingerprint)
                    {
                        write(earlier)?;
                        old.next();
                    }
                }
                write(fingerprint)?;
            }
            for earlier in old.into_iter().flatten() {
                write(earlier)?;
            }
        }
        out.into_inner().map_err(|error| error.into_error())?;
        let expected = self.len();
        let merged = SortedRun::open(path)?;
        if merged.count as u64 != expected {
            return Err(io::Error::other(format!(
                "merging fingerprints gave {} entries, expected {expected}",
                merged.count
            )));
        }
        if let Some(old) = self.run.replace(merged) {
            drop(old.map);
            std::fs::remove_file(&old.path)?;
        }
        self.memory = FingerprintTable::with_capacity(self.memory.capacity());
        Ok(())
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
        let mut out = crate::guarded::create(path)?;
        if let Some(run) = &self.run {
            io::copy(&mut File::open(&run.path)?, &mut out)?;
        }
        out.sync_all()
    }

    /// A set holding the fingerprints saved at `path` by [`save`](Self::save)
    /// (sorted; a symbolic link there is refused), with an empty in-memory
    /// table of `memory_capacity` slots.
    pub fn load(path: &Path, memory_capacity: usize, dir: &Path) -> io::Result<DiskFingerprintSet> {
        let mut set = DiskFingerprintSet::new(memory_capacity, dir);
        set.flushes = 1;
        let run_path = dir.join("fingerprints-1.run");
        io::copy(
            &mut crate::guarded::open(path)?,
            &mut File::create(&run_path)?,
        )?;
        let run = SortedRun::open(run_path)?;
        let sorted = run
            .iter()
            .zip(run.iter().skip(1))
            .all(|(earlier, later)| earlier < later);
        if !sorted {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a sorted fingerprint run", path.display()),
            ));
        }
        set.run = Some(run);
        Ok(set)
    }

    /// Every fingerprint, from disk then memory (for checkpoints).
    pub fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
        self.run
            .iter()
            .flat_map(|run| run.iter())
            .chain(self.memory.iter())
    }
}

impl Drop for DiskFingerprintSet {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            drop(run.map);
            // Best effort: a run left behind is only a file in the spill directory.
            let _ = std::fs::remove_file(&run.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::random_fingerprints;

    #[test]
    fn fingerprints_stay_members_across_flushes() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(4096, dir.path());
        let fingerprints = random_fingerprints(20_000, 9);
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
        assert_eq!(new, 20_000);
        assert!(set.flushes() >= 4, "the table was flushed several times");
        assert_eq!(set.len(), 20_000);
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
        assert_eq!(all.len(), 20_001);
    }

    #[test]
    fn the_run_is_sorted_and_found_at_page_edges() {
        let dir = tempfile::tempdir().unwrap();
        let mut set = DiskFingerprintSet::new(2048, dir.path());
        let fingerprints = random_fingerprints(1500, 10);
        for &fp in &fingerprints {
            set.insert(fp);
        }
        set.flush().unwrap();
        let run = set.run.as_ref().unwrap();
        let stored: Vec<_> = run.iter().collect();
        assert!(stored.windows(2).all(|pair| pair[0] < pair[1]));
        for index in [0, 255, 256, 257, 511, 512, 1499] {
            assert!(run.contains(stored[index]), "index {index}");
        }
        assert!(!run.contains(Fingerprint::from_halves(1, 0)));
        for (index, &fingerprint) in stored.iter().enumerate() {
            let page = run.page_of(fingerprint).unwrap();
            assert_eq!(page, index / FINGERPRINTS_PER_PAGE, "index {index}");
        }
        assert!(!run.contains(Fingerprint::from_halves(u64::MAX, u64::MAX)));
    }
}
