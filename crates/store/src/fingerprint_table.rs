//! A concurrent open-addressing set of 128-bit fingerprints.

use std::sync::atomic::{AtomicU64, Ordering};

use cmc_model::Fingerprint;

use crate::mapped_words::MappedWords;

/// Whether an insert added a new fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insertion {
    /// The fingerprint was not in the table and now is.
    New,
    /// The fingerprint was already in the table.
    Present,
}

/// The visited set of a search: a fixed-capacity, linearly probed table of
/// fingerprints, each stored as two 64-bit words (16 bytes per slot, nothing
/// else).
///
/// Inserts are lock-free and may run from any number of threads at once: a
/// slot is claimed by a compare-and-swap of its high word, then its low word
/// is published; readers that see a claimed slot wait for the low word. This
/// relies on [`Fingerprint`] never having a zero half.
///
/// The table does not grow by itself: the owner checks [`load_factor`] and
/// calls [`grow`](FingerprintTable::grow) (which needs exclusive access)
/// between batches of inserts. An insert into a full table is refused with a
/// panic-free `None`, never an endless probe.
///
/// [`load_factor`]: FingerprintTable::load_factor
pub struct FingerprintTable {
    /// `2 * capacity` words: `[high, low]` per slot; `0` marks an empty slot.
    words: MappedWords,
    capacity: usize,
    /// The number stored, split over cache lines so that threads inserting at
    /// once do not contend on one counter; `len` is their sum.
    len_stripes: Box<[LenStripe]>,
}

/// One counter on a cache line of its own.
#[repr(align(128))]
#[derive(Default)]
struct LenStripe(AtomicU64);

/// Number of [`LenStripe`]s: more than the threads that insert at once.
const LEN_STRIPES: usize = 64;

/// The stripe the current thread counts its inserts in.
fn len_stripe_index() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % LEN_STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

/// Bytes one slot takes.
const SLOT_BYTES: usize = 16;

/// Asks the kernel to back `items` with transparent huge pages: a table
/// probed at random would, with 4 KiB pages, miss the TLB on most probes.
/// Only whole 2 MiB pages inside the allocation are advised; the advice is
/// a hint, so a kernel that declines it changes nothing but speed.
pub fn advise_huge_pages<T>(items: &[T]) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = items.as_ptr() as usize;
    let end = start + std::mem::size_of_val(items);
    let aligned_start = start.next_multiple_of(HUGE_PAGE);
    let aligned_end = end / HUGE_PAGE * HUGE_PAGE;
    if aligned_end > aligned_start {
        // SAFETY: the range lies inside the live allocation of `items`;
        // MADV_HUGEPAGE changes no contents and its failure is harmless.
        unsafe {
            libc::madvise(
                aligned_start as *mut libc::c_void,
                aligned_end - aligned_start,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

impl FingerprintTable {
    /// A table with room for `capacity` fingerprints (at least 1024).
    ///
    /// The slots are a zeroed mapping of their own (which grows in place),
    /// so pages no insert has touched take no physical memory.
    pub fn with_capacity(capacity: usize) -> FingerprintTable {
        let capacity = capacity.max(1024);
        FingerprintTable {
            words: MappedWords::zeroed(2 * capacity),
            capacity,
            len_stripes: (0..LEN_STRIPES).map(|_| LenStripe::default()).collect(),
        }
    }

    /// Number of fingerprints stored.
    pub fn len(&self) -> u64 {
        self.len_stripes
            .iter()
            .map(|stripe| stripe.0.load(Ordering::Relaxed))
            .sum()
    }

    /// Whether no fingerprint is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Fraction of slots in use.
    pub fn load_factor(&self) -> f64 {
        self.len() as f64 / self.capacity as f64
    }

    /// Bytes of memory the slots take.
    pub fn memory_bytes(&self) -> usize {
        FingerprintTable::bytes_for(self.capacity)
    }

    /// Bytes of memory a table of `capacity` slots takes.
    pub fn bytes_for(capacity: usize) -> usize {
        capacity * SLOT_BYTES
    }

    #[inline]
    fn home_slot(&self, high: u64) -> usize {
        // Multiply-shift range reduction: any capacity, no modulo.
        ((high as u128 * self.capacity as u128) >> 64) as usize
    }

    /// Asks the processor to bring `fingerprint`'s home slot into cache, so
    /// that a later [`insert`](Self::insert) of it does not wait on memory.
    #[inline]
    pub fn prefetch(&self, fingerprint: Fingerprint) {
        let slot = &self.words[2 * self.home_slot(fingerprint.high())];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is a hint with no effect on memory; the
        // pointer is to a live element of `self.words`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (slot as *const AtomicU64).cast::<i8>(),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Inserts `fingerprint`; `None` only if the table is completely full.
    #[inline]
    pub fn insert(&self, fingerprint: Fingerprint) -> Option<Insertion> {
        let (high, low) = (fingerprint.high(), fingerprint.low());
        debug_assert!(high != 0 && low != 0, "fingerprint halves are never zero");
        let mut slot = self.home_slot(high);
        for _ in 0..self.capacity {
            let high_word = &self.words[2 * slot];
            let low_word = &self.words[2 * slot + 1];
            let mut seen = high_word.load(Ordering::Acquire);
            if seen == 0 {
                match high_word.compare_exchange(0, high, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        low_word.store(low, Ordering::Release);
                        self.len_stripes[len_stripe_index()]
                            .0
                            .fetch_add(1, Ordering::Relaxed);
                        return Some(Insertion::New);
                    }
                    Err(current) => seen = current,
                }
            }
            if seen == high {
                let seen_low = loop {
                    let value = low_word.load(Ordering::Acquire);
                    if value != 0 {
                        break value;
                    }
                    std::hint::spin_loop();
                };
                if seen_low == low {
                    return Some(Insertion::Present);
                }
            }
            slot += 1;
            if slot == self.capacity {
                slot = 0;
            }
        }
        None
    }

    /// Whether `fingerprint` is in the table.
    pub fn contains(&self, fingerprint: Fingerprint) -> bool {
        let (high, low) = (fingerprint.high(), fingerprint.low());
        let mut slot = self.home_slot(high);
        for _ in 0..self.capacity {
            let seen = self.words[2 * slot].load(Ordering::Acquire);
            if seen == 0 {
                return false;
            }
            if seen == high && self.words[2 * slot + 1].load(Ordering::Acquire) == low {
                return true;
            }
            slot = (slot + 1) % self.capacity;
        }
        false
    }

    /// Every stored fingerprint, in slot order (for checkpoints and growth).
    pub fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
        self.words.chunks_exact(2).filter_map(|pair| {
            let high = pair[0].load(Ordering::Acquire);
            (high != 0).then(|| Fingerprint::from_halves(high, pair[1].load(Ordering::Acquire)))
        })
    }

    /// Writes every fingerprint to a durable file at `path` (16 bytes each;
    /// a symbolic link there is refused).
    pub fn save(&self, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(crate::nofollow_files::create(path)?);
        for fingerprint in self.iter() {
            out.write_all(&fingerprint.high().to_le_bytes())?;
            out.write_all(&fingerprint.low().to_le_bytes())?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    }

    /// A table of `capacity` slots holding the fingerprints saved at `path`
    /// (a symbolic link there is refused); `stop` can end the load (see
    /// [`crate::stop`]).
    pub fn load(
        path: &std::path::Path,
        capacity: usize,
        stop: crate::stop::Stop<'_>,
    ) -> std::io::Result<FingerprintTable> {
        use std::io::Read;
        let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
        let file = crate::nofollow_files::open(path)?;
        let length = file.metadata()?.len();
        if length % SLOT_BYTES as u64 != 0 {
            return Err(invalid(format!(
                "{} is not a fingerprint file",
                path.display()
            )));
        }
        let count = length / SLOT_BYTES as u64;
        let table = FingerprintTable::with_capacity(capacity.max((count as usize) * 2));
        let mut input = std::io::BufReader::new(crate::stop::Stoppable::new(file, stop));
        let mut slot = [0u8; SLOT_BYTES];
        for _ in 0..count {
            input.read_exact(&mut slot)?;
            let high = u64::from_le_bytes(slot[..8].try_into().expect("8 bytes"));
            let low = u64::from_le_bytes(slot[8..].try_into().expect("8 bytes"));
            if high == 0 || low == 0 {
                return Err(invalid(format!(
                    "{} holds a zero fingerprint",
                    path.display()
                )));
            }
            if table.insert(Fingerprint::from_halves(high, low)) != Some(Insertion::New) {
                return Err(invalid(format!(
                    "{} holds a fingerprint twice",
                    path.display()
                )));
            }
        }
        Ok(table)
    }

    /// The fingerprint in `slot`, if any.
    #[inline]
    fn stored(&self, slot: usize) -> Option<Fingerprint> {
        let high = self.words[2 * slot].load(Ordering::Relaxed);
        (high != 0).then(|| {
            Fingerprint::from_halves(high, self.words[2 * slot + 1].load(Ordering::Relaxed))
        })
    }

    /// Rebuilds the table with `new_capacity` slots, keeping every fingerprint.
    ///
    /// Panics if `new_capacity` is not more than the slots it has (a caller
    /// bug).
    pub fn grow(&mut self, new_capacity: usize) {
        self.grow_in_blocks(new_capacity, GROWTH_BLOCK_SLOTS);
    }

    /// [`grow`](Self::grow), in place, moving the fingerprints of blocks of
    /// about `block_slots` old slots at a time.
    ///
    /// The mapping of the slots is extended (the old slots keep their
    /// contents, the new ones are zero), so only the added memory is fresh:
    /// a growth into a new table would touch (and make the kernel zero)
    /// the whole new table, and growths by a quarter touch five times the
    /// final table in all.
    ///
    /// The home slot grows with a fingerprint's high word, so the table is
    /// in order but for the order inside each cluster (a run of full slots)
    /// and the cluster that wraps around the end: every fingerprint of a
    /// cluster has its home in that cluster. With each cluster sorted, the
    /// fingerprints are placed in order, each in its new home slot or the
    /// slot after the one placed before it, whichever is later (what linear
    /// probing finds). A first pass computes where each block's first
    /// fingerprint goes; the second places the blocks from the last to the
    /// first: a block's fingerprints land in its own slots (read before any
    /// is written) or after them, in slots already emptied, never in an
    /// earlier block's (block boundaries are chosen so). The fingerprints of
    /// the wrapped cluster's start, and those placed past the end, are
    /// inserted afterwards by probing.
    fn grow_in_blocks(&mut self, new_capacity: usize, block_slots: usize) {
        let len = self.len();
        let old_capacity = self.capacity;
        assert!(
            new_capacity > old_capacity,
            "a table of {old_capacity} slots only grows, not to {new_capacity}"
        );
        let first_empty = (0..old_capacity)
            .find(|&slot| self.stored(slot).is_none())
            .unwrap_or(old_capacity);
        let wrapped: Vec<Fingerprint> = (0..first_empty)
            .filter_map(|slot| self.take(slot))
            .collect();
        self.words.grow(2 * new_capacity);
        self.capacity = new_capacity;
        let blocks = self.plan_blocks(first_empty..old_capacity, block_slots);
        let mut left_over = Vec::new();
        let mut cluster = Vec::new();
        let mut block = Vec::new();
        for plan in blocks.iter().rev() {
            for slot in plan.slots.clone() {
                match self.take(slot) {
                    Some(fingerprint) => cluster.push(fingerprint),
                    None => sorted_into(&mut cluster, &mut block),
                }
            }
            sorted_into(&mut cluster, &mut block);
            let mut next_free = plan.first_free;
            for fingerprint in block.drain(..) {
                let slot = self.home_slot(fingerprint.high()).max(next_free);
                debug_assert!(
                    slot >= plan.slots.start,
                    "a block lands in its own slots or later"
                );
                next_free = slot + 1;
                if slot < new_capacity {
                    self.put(slot, fingerprint);
                } else {
                    left_over.push(fingerprint);
                }
            }
        }
        let reinserted = (wrapped.len() + left_over.len()) as u64;
        for fingerprint in wrapped.into_iter().chain(left_over) {
            self.insert(fingerprint).expect("the grown table has room");
        }
        // The fingerprints inserted again were counted already.
        self.len_stripes[len_stripe_index()]
            .0
            .fetch_sub(reinserted, Ordering::Relaxed);
        assert_eq!(self.len(), len, "growth kept every fingerprint");
    }

    /// The first pass of [`grow_in_blocks`](Self::grow_in_blocks), with the
    /// new capacity set: splits `slots` (old slots, starting at an empty
    /// one, holding no wrapped cluster) into blocks of whole clusters of
    /// at least `block_slots` slots (but the last), each with the slot its
    /// first fingerprint may go to at the earliest.
    fn plan_blocks(&self, slots: std::ops::Range<usize>, block_slots: usize) -> Vec<BlockPlan> {
        let mut blocks = Vec::new();
        let mut current = BlockPlan {
            slots: slots.start..slots.start,
            first_free: 0,
        };
        let mut next_free = 0;
        let mut cluster = Vec::new();
        let mut cluster_start = slots.start;
        let mut place = |cluster: &mut Vec<Fingerprint>, start: usize, current: &mut BlockPlan| {
            if cluster.is_empty() {
                return;
            }
            cluster.sort_unstable();
            if start - current.slots.start >= block_slots {
                current.slots.end = start;
                blocks.push(std::mem::replace(
                    current,
                    BlockPlan {
                        slots: start..start,
                        first_free: next_free,
                    },
                ));
            }
            for fingerprint in cluster.drain(..) {
                next_free = self.home_slot(fingerprint.high()).max(next_free) + 1;
            }
        };
        for slot in slots.clone() {
            match self.stored(slot) {
                Some(fingerprint) => {
                    if cluster.is_empty() {
                        cluster_start = slot;
                    }
                    cluster.push(fingerprint);
                }
                None => place(&mut cluster, cluster_start, &mut current),
            }
        }
        place(&mut cluster, cluster_start, &mut current);
        current.slots.end = slots.end;
        blocks.push(current);
        blocks
    }

    /// Empties `slot`, returning the fingerprint it held.
    fn take(&self, slot: usize) -> Option<Fingerprint> {
        let stored = self.stored(slot);
        if stored.is_some() {
            self.words[2 * slot].store(0, Ordering::Relaxed);
            self.words[2 * slot + 1].store(0, Ordering::Relaxed);
        }
        stored
    }

    /// Writes `fingerprint` into the empty `slot`.
    fn put(&self, slot: usize, fingerprint: Fingerprint) {
        debug_assert!(self.stored(slot).is_none(), "slot {slot} is empty");
        self.words[2 * slot].store(fingerprint.high(), Ordering::Relaxed);
        self.words[2 * slot + 1].store(fingerprint.low(), Ordering::Relaxed);
    }
}

/// Old slots a block of a growth covers at least (see
/// [`FingerprintTable::grow`]): the fingerprints of one block are held in
/// memory while they are placed.
const GROWTH_BLOCK_SLOTS: usize = 1 << 14;

/// One block of a growth: its old slots, and the slot its first
/// fingerprint goes to at the earliest.
struct BlockPlan {
    slots: std::ops::Range<usize>,
    first_free: usize,
}

/// Sorts `cluster` and moves it to the end of `block`.
fn sorted_into(cluster: &mut Vec<Fingerprint>, block: &mut Vec<Fingerprint>) {
    cluster.sort_unstable();
    block.append(cluster);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::random_fingerprints;

    #[test]
    fn inserts_are_new_once_then_present() {
        let table = FingerprintTable::with_capacity(4096);
        let fingerprints = random_fingerprints(3000, 1);
        for &fp in &fingerprints {
            assert_eq!(table.insert(fp), Some(Insertion::New));
        }
        for &fp in &fingerprints {
            assert_eq!(table.insert(fp), Some(Insertion::Present));
            assert!(table.contains(fp));
        }
        assert_eq!(table.len(), 3000);
        assert!(!table.contains(Fingerprint::from_halves(7, 7)));
    }

    #[test]
    fn same_high_word_different_low_words_are_distinct() {
        let table = FingerprintTable::with_capacity(1024);
        let a = Fingerprint::from_halves(42, 1);
        let b = Fingerprint::from_halves(42, 2);
        assert_eq!(table.insert(a), Some(Insertion::New));
        assert_eq!(table.insert(b), Some(Insertion::New));
        assert_eq!(table.insert(b), Some(Insertion::Present));
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn full_table_refuses_instead_of_looping() {
        let table = FingerprintTable::with_capacity(1024);
        for fp in random_fingerprints(1024, 2) {
            table.insert(fp).unwrap();
        }
        assert_eq!(table.insert(Fingerprint::from_halves(5, 5)), None);
    }

    #[test]
    fn growth_keeps_every_fingerprint() {
        let mut table = FingerprintTable::with_capacity(1024);
        let fingerprints = random_fingerprints(900, 3);
        for &fp in &fingerprints {
            table.insert(fp);
        }
        table.grow(5000);
        assert_eq!(table.capacity(), 5000);
        assert!(fingerprints.iter().all(|&fp| table.contains(fp)));
    }

    /// Whether every stored fingerprint is found by probing from its home
    /// slot (no free slot between them), and the table holds nothing else.
    fn probing_finds_exactly(table: &FingerprintTable, fingerprints: &[Fingerprint]) -> bool {
        table.len() == fingerprints.len() as u64
            && table.iter().count() == fingerprints.len()
            && fingerprints.iter().all(|&fp| table.contains(fp))
            && fingerprints
                .iter()
                .all(|&fp| table.insert(fp) == Some(Insertion::Present))
    }

    #[test]
    fn growth_keeps_wrapped_clusters_and_full_tables_findable() {
        // Fingerprints whose home slots crowd the end of the table, so that
        // clusters wrap around to its start; grown by a little (many run
        // past the end of the grown table) and by a lot.
        for (count, capacity, grown) in [(1000, 1024, 1025), (1000, 1024, 1100), (1020, 1024, 8192)]
        {
            let mut table = FingerprintTable::with_capacity(capacity);
            let crowded: Vec<Fingerprint> = random_fingerprints(count, 7)
                .into_iter()
                .enumerate()
                .map(|(index, fp)| {
                    // Half of them in the top 1/64 of the home slots.
                    let high = if index % 2 == 0 {
                        fp.high() | (0xfc << 56)
                    } else {
                        fp.high()
                    };
                    Fingerprint::from_halves(high, fp.low())
                })
                .collect();
            for &fp in &crowded {
                assert_eq!(table.insert(fp), Some(Insertion::New));
            }
            assert!(table.contains(crowded[0]));
            table.grow(grown);
            assert_eq!(table.capacity(), grown);
            assert!(
                probing_finds_exactly(&table, &crowded),
                "{count} in {capacity} grown to {grown}"
            );
        }
    }

    #[test]
    fn growth_in_small_blocks_keeps_crowded_clusters_findable() {
        // Long clusters at the start and at the end (they wrap around and
        // run past the end), grown by a little and by much, in blocks of 1
        // to 4096 slots (each block's fingerprints land in later blocks).
        for block_slots in [1, 2, 7, 64, 4096] {
            for (count, capacity, grown) in
                [(950, 1024, 1030), (900, 1024, 1100), (600, 1024, 4096)]
            {
                let mut table = FingerprintTable::with_capacity(capacity);
                let crowded: Vec<Fingerprint> = random_fingerprints(count, 9)
                    .into_iter()
                    .enumerate()
                    .map(|(index, fp)| {
                        let high = match index % 3 {
                            0 => fp.high() >> 6 | 1,
                            1 => fp.high() | (0xfc << 56),
                            _ => fp.high(),
                        };
                        Fingerprint::from_halves(high, fp.low())
                    })
                    .collect();
                for &fp in &crowded {
                    assert_eq!(table.insert(fp), Some(Insertion::New));
                }
                table.grow_in_blocks(grown, block_slots);
                assert_eq!(table.capacity(), grown);
                assert!(
                    probing_finds_exactly(&table, &crowded),
                    "{count} in {capacity} grown to {grown} in blocks of {block_slots}"
                );
            }
        }
    }

    #[test]
    fn grown_tables_take_new_fingerprints() {
        let mut table = FingerprintTable::with_capacity(1024);
        let fingerprints = random_fingerprints(1800, 8);
        for &fp in &fingerprints[..850] {
            table.insert(fp);
        }
        table.grow(1280);
        for &fp in &fingerprints[850..1050] {
            assert_eq!(table.insert(fp), Some(Insertion::New));
        }
        table.grow(2048);
        for &fp in &fingerprints[1050..] {
            assert_eq!(table.insert(fp), Some(Insertion::New));
        }
        assert!(probing_finds_exactly(&table, &fingerprints));
    }

    #[test]
    fn saved_tables_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fingerprints");
        let table = FingerprintTable::with_capacity(4096);
        let fingerprints = random_fingerprints(1000, 5);
        for &fp in &fingerprints {
            table.insert(fp);
        }
        table.save(&path).unwrap();
        let loaded = FingerprintTable::load(&path, 1024, crate::stop::NEVER).unwrap();
        assert_eq!(loaded.len(), 1000);
        assert!(fingerprints.iter().all(|&fp| loaded.contains(fp)));
        std::fs::write(&path, [0u8; 15]).unwrap();
        assert!(FingerprintTable::load(&path, 1024, crate::stop::NEVER).is_err());
    }

    #[test]
    fn concurrent_inserts_count_each_fingerprint_once() {
        let table = FingerprintTable::with_capacity(1 << 16);
        let fingerprints = random_fingerprints(20_000, 4);
        let new_counts: Vec<usize> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        fingerprints
                            .iter()
                            .filter(|&&fp| table.insert(fp) == Some(Insertion::New))
                            .count()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(new_counts.iter().sum::<usize>(), 20_000);
        assert_eq!(table.len(), 20_000);
    }
}
