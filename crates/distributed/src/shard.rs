//! What one worker owns: its shard of the visited set, with a parent link
//! per state, and its part of a BFS level.

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

/// The worker among `peers` that owns the state with fingerprint `fingerprint`.
#[inline]
pub(crate) fn owner(fingerprint: u128, peers: usize) -> usize {
    ((fingerprint >> 64) as u64 % peers as u64) as usize
}

/// Most slots a shard fills before it doubles (as a fraction of 1024).
const LOAD_PER_1024: usize = 600;
/// Slots a shard starts with.
const INITIAL_SLOTS: usize = 1 << 14;

/// One worker's shard of the visited set: fingerprint to parent link, in an
/// open-addressing table (linear probing on the fingerprint's low bits; the
/// owner was chosen by its high bits). Keys and links are in two arrays so
/// that both slots of a fingerprint can be prefetched before it is admitted
/// ([`Shard::prefetch`]): a batch of admissions then waits for memory once,
/// not once per state.
#[derive(Debug)]
pub(crate) struct Shard {
    /// Fingerprints; 0 marks an empty slot (no fingerprint is 0).
    keys: Vec<u128>,
    links: Vec<Link>,
    len: usize,
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::with_slots(INITIAL_SLOTS)
    }
}

impl Shard {
    fn with_slots(slots: usize) -> Shard {
        debug_assert!(slots.is_power_of_two());
        let empty = Link {
            parent: 0,
            step: 0,
            level: 0,
        };
        Shard {
            keys: vec![0; slots],
            links: vec![empty; slots],
            len: 0,
        }
    }

    #[inline]
    fn home(&self, fingerprint: u128) -> usize {
        (fingerprint as u64 as usize) & (self.keys.len() - 1)
    }

    /// The slot holding `fingerprint`, or the empty slot where it belongs.
    #[inline]
    fn slot(&self, fingerprint: u128) -> usize {
        let mask = self.keys.len() - 1;
        let mut slot = self.home(fingerprint);
        loop {
            let key = self.keys[slot];
            if key == fingerprint || key == 0 {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Asks the processor to fetch the slots of `fingerprint` (a hint only).
    #[inline]
    pub fn prefetch(&self, fingerprint: u128) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let home = self.home(fingerprint);
            // SAFETY: prefetching is a hint; both pointers are in bounds.
            unsafe {
                _mm_prefetch(self.keys.as_ptr().add(home).cast(), _MM_HINT_T0);
                _mm_prefetch(self.links.as_ptr().add(home).cast(), _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fingerprint;
    }

    /// Doubles the table when it is too full to stay fast.
    fn make_room(&mut self) {
        if (self.len + 1) * 1024 <= self.keys.len() * LOAD_PER_1024 {
            return;
        }
        let mut bigger = Shard::with_slots(self.keys.len() * 2);
        for (&key, &link) in self.keys.iter().zip(&self.links) {
            if key != 0 {
                let slot = bigger.slot(key);
                bigger.keys[slot] = key;
                bigger.links[slot] = link;
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }

    /// Records that `fingerprint` was reached by `link`; true if the state is
    /// new. A state reached again in the same level keeps the least
    /// (parent, step), so the parent links, and with them the
    /// counterexample, do not depend on the order in which states arrive.
    pub fn admit(&mut self, fingerprint: u128, link: Link) -> bool {
        debug_assert!(fingerprint != 0, "no fingerprint is zero");
        self.make_room();
        let slot = self.slot(fingerprint);
        if self.keys[slot] == 0 {
            self.keys[slot] = fingerprint;
            self.links[slot] = link;
            self.len += 1;
            return true;
        }
        let known = &mut self.links[slot];
        if known.level == link.level && (link.parent, link.step) < (known.parent, known.step) {
            *known = link;
        }
        false
    }

    /// Every fingerprint of the shard with its link, in table order.
    pub fn entries(&self) -> impl Iterator<Item = (u128, Link)> + '_ {
        self.keys
            .iter()
            .zip(&self.links)
            .filter(|(key, _)| **key != 0)
            .map(|(&key, &link)| (key, link))
    }

    /// Number of fingerprints held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The parent link of `fingerprint`, if this shard holds it.
    pub fn link(&self, fingerprint: u128) -> Option<Link> {
        let slot = self.slot(fingerprint);
        (self.keys[slot] == fingerprint).then(|| self.links[slot])
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
    fn a_growing_shard_keeps_every_link() {
        let mut shard = Shard::default();
        let count = 3 * INITIAL_SLOTS as u128;
        for key in 1..=count {
            // Spread like fingerprints: distinct low bits.
            let fingerprint = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 64;
            assert!(shard.admit(fingerprint, link_to(key)));
        }
        for key in 1..=count {
            let fingerprint = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 64;
            assert_eq!(shard.link(fingerprint), Some(link_to(key)));
        }
        assert!(shard.keys.len() > INITIAL_SLOTS);
    }

    fn link_to(parent: u128) -> Link {
        Link {
            parent,
            step: 0,
            level: 1,
        }
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
