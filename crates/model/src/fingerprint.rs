//! 128-bit state fingerprints computed from canonical bytes.

use std::fmt;

/// A 128-bit fingerprint of a state's canonical encoding.
///
/// Computed with XXH3-128 and a fixed seed, so the same bytes give the same
/// fingerprint in every process, on every run and for every worker count.
/// Neither 64-bit half is ever zero, so stores may use a zero word to mark an
/// empty slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Fingerprint(pub u128);

impl Fingerprint {
    /// Fingerprints the canonical encoding `bytes` of one state.
    #[inline]
    pub fn of_bytes(bytes: &[u8]) -> Fingerprint {
        let hash = xxhash_rust::xxh3::xxh3_128(bytes);
        // Zero halves are reserved for "empty"; folding them onto 1 costs a
        // fraction 2^-63 of the fingerprint space.
        let high = ((hash >> 64) as u64).max(1);
        let low = (hash as u64).max(1);
        Fingerprint::from_halves(high, low)
    }

    /// The upper 64 bits.
    #[inline]
    pub fn high(self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// The lower 64 bits.
    #[inline]
    pub fn low(self) -> u64 {
        self.0 as u64
    }

    /// Rebuilds a fingerprint from its two halves (inverse of [`high`](Self::high)
    /// and [`low`](Self::low)).
    #[inline]
    pub fn from_halves(high: u64, low: u64) -> Fingerprint {
        Fingerprint(((high as u128) << 64) | low as u128)
    }

    /// The estimated probability that at least one pair among `distinct`
    /// states shares a fingerprint, as TLC reports it ("calculated"
    /// optimistic estimate): `n * (n - 1) / 2 / 2^128` for `n` distinct states.
    pub fn collision_probability(distinct: u64) -> f64 {
        let n = distinct as f64;
        n * (n - 1.0).max(0.0) / 2.0 / 2f64.powi(128)
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_stable_across_processes() {
        // A fixed value: if the hash function or seed changes, replay files and
        // checkpoints written by older versions would no longer match.
        assert_eq!(
            Fingerprint::of_bytes(b"cmc").to_string(),
            "b963a2ffa468503b1f9eb605051b011f"
        );
        assert_ne!(Fingerprint::of_bytes(b"a"), Fingerprint::of_bytes(b"b"));
    }

    #[test]
    fn halves_round_trip() {
        let fp = Fingerprint::of_bytes(b"round trip");
        assert_eq!(Fingerprint::from_halves(fp.high(), fp.low()), fp);
    }

    #[test]
    fn collision_probability_grows_with_states() {
        assert_eq!(Fingerprint::collision_probability(1), 0.0);
        let small = Fingerprint::collision_probability(1_000);
        let large = Fingerprint::collision_probability(1_000_000);
        assert!(small > 0.0 && large > small * 1e5);
    }
}
