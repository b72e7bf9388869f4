//! One immutable sorted run of fingerprints on disk, with the in-memory
//! indexes that make a lookup cost at most one page of it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use cmc_model::Fingerprint;
use memmap2::Mmap;

use crate::run_filter::RunFilter;

/// Fingerprints per page of the run (one 4 KiB page of 16-byte records).
pub(crate) const FINGERPRINTS_PER_PAGE: usize = 256;
/// Bytes of one fingerprint in the run: high then low word, little-endian.
pub(crate) const RECORD_BYTES: usize = 16;

/// A file of distinct fingerprints in increasing order, memory-mapped, with
/// a fence index (the first fingerprint of every page) and a [`RunFilter`].
///
/// A lookup asks the filter first (no disk access); only when the filter
/// lets the fingerprint through does it read one page of the run, found
/// through the fence index. The operating system keeps the run's pages in
/// its page cache as long as memory allows.
pub(crate) struct SortedRun {
    path: PathBuf,
    map: Mmap,
    count: usize,
    /// The first fingerprint of every page, in order.
    page_starts: Vec<Fingerprint>,
    filter: RunFilter,
}

impl SortedRun {
    /// Writes `sorted` (strictly increasing fingerprints) to a new file at
    /// `path` and opens it as a run. Fingerprints out of order are an error
    /// (the file is left for the caller's directory to remove).
    pub(crate) fn write(
        path: PathBuf,
        sorted: impl Iterator<Item = Fingerprint>,
    ) -> io::Result<SortedRun> {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        let mut previous: Option<Fingerprint> = None;
        for fingerprint in sorted {
            if previous.is_some_and(|previous| previous >= fingerprint) {
                return Err(io::Error::other(format!(
                    "fingerprints reached {} out of order or twice",
                    path.display()
                )));
            }
            previous = Some(fingerprint);
            write_record(&mut out, fingerprint)?;
        }
        out.into_inner().map_err(|error| error.into_error())?;
        SortedRun::open(path)
    }

    /// Opens the run at `path`; a file that is not a strictly increasing
    /// sequence of fingerprints is refused.
    pub(crate) fn open(path: PathBuf) -> io::Result<SortedRun> {
        let file = File::open(&path)?;
        // SAFETY: the run is written once, before it is mapped, and never
        // modified while mapped (a flush or merge writes a new file).
        let map = unsafe { Mmap::map(&file)? };
        let invalid = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not {what}", path.display()),
            )
        };
        if map.len() % RECORD_BYTES != 0 {
            return Err(invalid("a fingerprint run"));
        }
        let count = map.len() / RECORD_BYTES;
        let get = |index: usize| record_at(&map, index);
        if (1..count).any(|index| get(index - 1) >= get(index)) {
            return Err(invalid("a sorted fingerprint run"));
        }
        let page_starts = (0..count).step_by(FINGERPRINTS_PER_PAGE).map(get).collect();
        let filter = RunFilter::build(count as u64, (0..count).map(get));
        Ok(SortedRun {
            path,
            map,
            count,
            page_starts,
            filter,
        })
    }

    /// Number of fingerprints in the run.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Bytes of the run's file.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.map.len() as u64
    }

    /// Bytes of memory its indexes hold (the pages are the page cache's).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.page_starts.len() * RECORD_BYTES + self.filter.memory_bytes()
    }

    /// The run's file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    #[inline]
    fn get(&self, index: usize) -> Fingerprint {
        record_at(&self.map, index)
    }

    /// Whether `fingerprint` is in the run (exact: the filter only decides
    /// whether the page must be read).
    #[inline]
    pub(crate) fn contains(&self, fingerprint: Fingerprint) -> bool {
        self.filter.may_contain(fingerprint) && self.page_contains(fingerprint)
    }

    /// Whether `fingerprint` is in its page of the run.
    ///
    /// Fingerprints are uniform, so its place in the page is guessed from
    /// its high word between the page's first and the next page's first
    /// (about 8 records off on average), and found by stepping from the
    /// guess: a cache line or two of the page, where a binary search would
    /// touch a line per probe.
    fn page_contains(&self, fingerprint: Fingerprint) -> bool {
        let Some(page) = self.page_of(fingerprint) else {
            return false;
        };
        let start = page * FINGERPRINTS_PER_PAGE;
        let end = ((page + 1) * FINGERPRINTS_PER_PAGE).min(self.count);
        let low_key = self.page_starts[page].high();
        let high_key = self
            .page_starts
            .get(page + 1)
            .map_or(u64::MAX, |next| next.high());
        let span = u128::from(high_key - low_key) + 1;
        let offset = u128::from(fingerprint.high() - low_key) * (end - start) as u128 / span;
        let mut index = start + (offset as usize).min(end - start - 1);
        if self.get(index) <= fingerprint {
            while index + 1 < end && self.get(index + 1) <= fingerprint {
                index += 1;
            }
        } else {
            while index > start && self.get(index) > fingerprint {
                index -= 1;
            }
        }
        self.get(index) == fingerprint
    }

    /// The run's fingerprints in increasing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
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

/// Writes one fingerprint as a run record.
pub(crate) fn write_record(out: &mut impl Write, fingerprint: Fingerprint) -> io::Result<()> {
    out.write_all(&fingerprint.high().to_le_bytes())?;
    out.write_all(&fingerprint.low().to_le_bytes())
}

/// The fingerprint at `index` of a mapped run.
#[inline]
fn record_at(map: &[u8], index: usize) -> Fingerprint {
    let record = &map[index * RECORD_BYTES..(index + 1) * RECORD_BYTES];
    let word = |range: std::ops::Range<usize>| {
        u64::from_le_bytes(record[range].try_into().expect("8 bytes"))
    };
    Fingerprint::from_halves(word(0..8), word(8..16))
}

/// The union of `runs` (pairwise disjoint, each sorted) in increasing order:
/// a k-way merge in one sequential pass over each run.
pub(crate) fn merged<'a>(runs: &'a [&'a SortedRun]) -> impl Iterator<Item = Fingerprint> + 'a {
    let mut heads: Vec<_> = runs.iter().map(|run| run.iter().peekable()).collect();
    std::iter::from_fn(move || {
        let (_, least) = heads
            .iter_mut()
            .enumerate()
            .filter_map(|(index, head)| head.peek().map(|&fingerprint| (fingerprint, index)))
            .min()?;
        heads[least].next()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::random_fingerprints;

    fn run_of(dir: &Path, name: &str, fingerprints: &[Fingerprint]) -> SortedRun {
        let mut sorted = fingerprints.to_vec();
        sorted.sort_unstable();
        SortedRun::write(dir.join(name), sorted.into_iter()).unwrap()
    }

    #[test]
    fn every_member_is_found_at_page_edges_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_of(dir.path(), "a.run", &random_fingerprints(1500, 10));
        let stored: Vec<_> = run.iter().collect();
        assert!(stored.windows(2).all(|pair| pair[0] < pair[1]));
        for index in [0, 255, 256, 257, 511, 512, 1499] {
            assert!(run.contains(stored[index]), "index {index}");
        }
        for (index, &fingerprint) in stored.iter().enumerate() {
            assert!(run.contains(fingerprint));
            let page = run.page_of(fingerprint).unwrap();
            assert_eq!(page, index / FINGERPRINTS_PER_PAGE, "index {index}");
        }
        assert!(!run.page_contains(Fingerprint::from_halves(1, 0)));
        assert!(!run.page_contains(Fingerprint::from_halves(u64::MAX, u64::MAX)));
        for other in random_fingerprints(5000, 11) {
            assert!(!run.contains(other));
        }
    }

    #[test]
    fn unsorted_input_and_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b] = [1, 2].map(|n| Fingerprint::from_halves(n, n));
        assert!(SortedRun::write(dir.path().join("x.run"), [b, a].into_iter()).is_err());
        assert!(SortedRun::write(dir.path().join("y.run"), [a, a].into_iter()).is_err());
        let path = dir.path().join("z.run");
        let mut bytes = Vec::new();
        for fp in [b, a] {
            write_record(&mut bytes, fp).unwrap();
        }
        std::fs::write(&path, bytes).unwrap();
        assert!(SortedRun::open(path).is_err());
    }

    #[test]
    fn merging_runs_gives_their_sorted_union() {
        let dir = tempfile::tempdir().unwrap();
        let all = random_fingerprints(3000, 12);
        let runs: Vec<_> = all
            .chunks(700)
            .enumerate()
            .map(|(index, chunk)| run_of(dir.path(), &format!("{index}.run"), chunk))
            .collect();
        let refs: Vec<&SortedRun> = runs.iter().collect();
        let union: Vec<_> = merged(&refs).collect();
        let mut expected = all.clone();
        expected.sort_unstable();
        assert_eq!(union, expected);
    }
}
