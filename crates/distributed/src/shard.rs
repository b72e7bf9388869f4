//! What one worker owns: its shard of the visited set, with a parent link
//! per state, and its part of a BFS level.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// How a state was first reached in its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    /// The parent's fingerprint, or [`crate::wire::NO_PARENT`].
    pub parent: u128,
    /// Index of the action among the parent's candidate actions (for an
    /// initial state: its index among the initial states).
    pub step: u32,
    /// The BFS level the state belongs to.
    pub level: u32,
}

/// A hasher for fingerprint keys: they are uniform already, so their low
/// 64 bits are the hash (the owner was chosen by the high bits).
#[derive(Debug, Default)]
pub(crate) struct FingerprintHasher(u64);

impl Hasher for FingerprintHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u128(&mut self, value: u128) {
        self.0 = value as u64;
    }
}

/// The worker among `peers` that owns the state with fingerprint `fingerprint`.
#[inline]
pub(crate) fn owner(fingerprint: u128, peers: usize) -> usize {
    ((fingerprint >> 64) as u64 % peers as u64) as usize
}

/// One worker's shard of the visited set: fingerprint to parent link.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    links: HashMap<u128, Link, BuildHasherDefault<FingerprintHasher>>,
}

impl Shard {
    /// Records that `fingerprint` was reached by `link`; true if the state is
    /// new. A state reached again in the same level keeps the least
    /// (parent, step), so the parent links, and with them the
    /// counterexample, do not depend on the order in which states arrive.
    pub fn admit(&mut self, fingerprint: u128, link: Link) -> bool {
        match self.links.entry(fingerprint) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(link);
                true
            }
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                let known = slot.get_mut();
                if known.level == link.level
                    && (link.parent, link.step) < (known.parent, known.step)
                {
                    *known = link;
                }
                false
            }
        }
    }

    /// The parent link of `fingerprint`, if this shard holds it.
    pub fn link(&self, fingerprint: u128) -> Option<Link> {
        self.links.get(&fingerprint).copied()
    }
}

/// The states of one BFS level that one worker owns, back to back.
#[derive(Debug, Default)]
pub(crate) struct Level {
    fingerprints: Vec<u128>,
    ends: Vec<usize>,
    bytes: Vec<u8>,
}

impl Level {
    /// Adds a state.
    pub fn push(&mut self, fingerprint: u128, state: &[u8]) {
        self.bytes.extend_from_slice(state);
        self.fingerprints.push(fingerprint);
        self.ends.push(self.bytes.len());
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    /// The states: fingerprint and canonical bytes.
    pub fn iter(&self) -> impl Iterator<Item = (u128, &[u8])> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.fingerprints
            .iter()
            .zip(starts.zip(self.ends.iter().copied()))
            .map(|(&fingerprint, (start, end))| (fingerprint, &self.bytes[start..end]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_keeps_its_least_parent_of_its_own_level() {
        let mut shard = Shard::default();
        let link = |parent, step, level| Link {
            parent,
            step,
            level,
        };
        assert!(shard.admit(5, link(9, 0, 2)));
        assert!(!shard.admit(5, link(3, 1, 2)));
        assert_eq!(shard.link(5), Some(link(3, 1, 2)));
        // Met again one level deeper: the shortest path stays.
        assert!(!shard.admit(5, link(1, 0, 3)));
        assert_eq!(shard.link(5), Some(link(3, 1, 2)));
        assert_eq!(shard.link(6), None);
    }

    #[test]
    fn a_level_gives_back_its_states() {
        let mut level = Level::default();
        level.push(1, b"ab");
        level.push(2, b"");
        level.push(3, b"c");
        let states: Vec<(u128, &[u8])> = level.iter().collect();
        assert_eq!(states, vec![(1, &b"ab"[..]), (2, &b""[..]), (3, &b"c"[..])]);
        assert_eq!(level.len(), 3);
    }
}
