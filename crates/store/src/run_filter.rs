//! An in-memory filter in front of one sorted run of fingerprints: it says
//! "certainly not in the run" for most fingerprints that are not, so that a
//! lookup reads the run's pages only when the fingerprint may be there.

use cmc_model::Fingerprint;
use xorf::{BinaryFuse8, Filter};

/// Fingerprints per filter partition, on average: bounds the scratch memory
/// of building one partition (a few dozen bytes a key) whatever the run's size.
const KEYS_PER_PARTITION: u64 = 1 << 16;

/// A filter over the fingerprints of a sorted run, about 9 bits a
/// fingerprint, with no false negatives and about 0.4% false positives.
///
/// The run is cut into `2^bits` partitions by the top bits of the
/// fingerprint's high word (fingerprints are uniform, so partitions are of
/// similar size and contiguous in the sorted run), and each partition gets a
/// [`BinaryFuse8`] filter of the high words in it. A partition whose filter
/// could not be built (only a pathological key set makes construction fail)
/// passes every fingerprint, so the filter can only ever skip a run, never
/// hide a member.
pub(crate) struct RunFilter {
    /// Bits of the high word that choose the partition (0: one partition).
    bits: u32,
    /// One filter per partition; `None` lets every fingerprint through.
    partitions: Vec<Option<BinaryFuse8>>,
}

impl RunFilter {
    /// Builds the filter of `sorted`, the fingerprints of a run in increasing
    /// order (`count` of them).
    pub(crate) fn build(count: u64, sorted: impl Iterator<Item = Fingerprint>) -> RunFilter {
        let partitions = count
            .div_ceil(KEYS_PER_PARTITION)
            .max(1)
            .next_power_of_two();
        let bits = partitions.trailing_zeros();
        let mut filter = RunFilter {
            bits,
            partitions: Vec::with_capacity(partitions as usize),
        };
        let mut keys: Vec<u64> = Vec::new();
        for fingerprint in sorted {
            let partition = filter.partition_of(fingerprint);
            while filter.partitions.len() < partition {
                filter.partitions.push(Self::partition_filter(&mut keys));
            }
            // Equal high words are adjacent in a sorted run; a fuse filter
            // needs distinct keys.
            if keys.last() != Some(&fingerprint.high()) {
                keys.push(fingerprint.high());
            }
        }
        while filter.partitions.len() < partitions as usize {
            filter.partitions.push(Self::partition_filter(&mut keys));
        }
        filter
    }

    /// The filter of `keys` (distinct), which it empties.
    fn partition_filter(keys: &mut Vec<u64>) -> Option<BinaryFuse8> {
        let built = BinaryFuse8::try_from(keys.as_slice()).ok();
        keys.clear();
        built
    }

    #[inline]
    fn partition_of(&self, fingerprint: Fingerprint) -> usize {
        match self.bits {
            0 => 0,
            bits => (fingerprint.high() >> (64 - bits)) as usize,
        }
    }

    /// `false` only if `fingerprint` is certainly not in the run.
    #[inline]
    pub(crate) fn may_contain(&self, fingerprint: Fingerprint) -> bool {
        match &self.partitions[self.partition_of(fingerprint)] {
            Some(filter) => filter.contains(&fingerprint.high()),
            None => true,
        }
    }

    /// Bytes of memory the filter holds.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.partitions
            .iter()
            .flatten()
            .map(|filter| filter.len())
            .sum::<usize>()
            + self.partitions.len() * std::mem::size_of::<Option<BinaryFuse8>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::random_fingerprints;

    #[test]
    fn members_always_pass_and_most_others_are_skipped() {
        let mut members = random_fingerprints(300_000, 21);
        members.sort_unstable();
        let filter = RunFilter::build(members.len() as u64, members.iter().copied());
        assert!(filter.bits >= 2, "the run is cut into partitions");
        assert!(members.iter().all(|&fp| filter.may_contain(fp)));
        let others = random_fingerprints(100_000, 22);
        let passed = others.iter().filter(|&&fp| filter.may_contain(fp)).count();
        assert!(passed < 1_000, "{passed} of 100,000 non-members passed");
        let bits_per_key = filter.memory_bytes() as f64 * 8.0 / members.len() as f64;
        assert!(bits_per_key < 10.0, "{bits_per_key} bits a fingerprint");
    }

    #[test]
    fn fingerprints_sharing_a_high_word_pass() {
        let members: Vec<_> = (1..=5)
            .map(|low| Fingerprint::from_halves(77, low))
            .collect();
        let filter = RunFilter::build(5, members.iter().copied());
        assert!(members.iter().all(|&fp| filter.may_contain(fp)));
        assert!(filter.may_contain(Fingerprint::from_halves(77, 1000)));
    }
}
