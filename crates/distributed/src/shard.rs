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
/// owner was chosen by its high bits). A slot holds the fingerprint, then
/// the step and level, then the parent, so that a probe and the level test
/// of a state met again read one cache line (mostly; [`Shard::prefetch`]
/// fetches it before the state is admitted), and the table is backed by
/// huge pages where the kernel allows (fewer TLB misses).
#[derive(Debug)]
pub(crate) struct Shard {
    /// A slot's words: fingerprint (low, high; 0 for an empty slot: no
    /// fingerprint is 0), step | level << 32, parent (low, high).
    slots: Vec<[u64; SLOT_WORDS]>,
    len: usize,
}

/// Words of a slot.
const SLOT_WORDS: usize = 5;

/// A slot holding `fingerprint` with `link`.
fn slot_of(fingerprint: u128, link: Link) -> [u64; SLOT_WORDS] {
    [
        fingerprint as u64,
        (fingerprint >> 64) as u64,
        u64::from(link.step) | u64::from(link.level) << 32,
        link.parent as u64,
        (link.parent >> 64) as u64,
    ]
}

/// The fingerprint of a slot (0 if it is empty).
#[inline]
fn key_of(slot: &[u64; SLOT_WORDS]) -> u128 {
    u128::from(slot[0]) | u128::from(slot[1]) << 64
}

/// The link of a full slot.
fn link_of(slot: &[u64; SLOT_WORDS]) -> Link {
    Link {
        parent: u128::from(slot[3]) | u128::from(slot[4]) << 64,
        step: slot[2] as u32,
        level: (slot[2] >> 32) as u32,
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::with_slots(INITIAL_SLOTS)
    }
}

impl Shard {
    fn with_slots(slots: usize) -> Shard {
        debug_assert!(slots.is_power_of_two());
        // Zeroed memory from the allocator: untouched pages cost nothing.
        let slots = vec![[0; SLOT_WORDS]; slots];
        cmc_store::advise_huge_pages(&slots);
        Shard { slots, len: 0 }
    }

    #[inline]
    fn home(&self, fingerprint: u128) -> usize {
        (fingerprint as u64 as usize) & (self.slots.len() - 1)
    }

    /// The slot holding `fingerprint`, or the empty slot where it belongs.
    #[inline]
    fn slot(&self, fingerprint: u128) -> usize {
        let mask = self.slots.len() - 1;
        let mut slot = self.home(fingerprint);
        loop {
            let key = key_of(&self.slots[slot]);
            if key == fingerprint || key == 0 {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Asks the processor to fetch the home slot of `fingerprint` and the
    /// cache line after it, where a probe goes on (a hint only).
    #[inline]
    pub fn prefetch(&self, fingerprint: u128) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let home = self.slots.as_ptr().wrapping_add(self.home(fingerprint));
            // SAFETY: prefetching is a hint, valid for any address.
            unsafe {
                _mm_prefetch(home.cast(), _MM_HINT_T0);
                _mm_prefetch(home.cast::<i8>().wrapping_add(64), _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fingerprint;
    }

    /// Doubles the table when it is too full to stay fast.
    fn make_room(&mut self) {
        if (self.len + 1) * 1024 <= self.slots.len() * LOAD_PER_1024 {
            return;
        }
        let mut bigger = Shard::with_slots(self.slots.len() * 2);
        for slot in &self.slots {
            let key = key_of(slot);
            if key != 0 {
                let at = bigger.slot(key);
                bigger.slots[at] = *slot;
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
        let at = self.slot(fingerprint);
        let slot = &mut self.slots[at];
        if key_of(slot) == 0 {
            *slot = slot_of(fingerprint, link);
            self.len += 1;
            return true;
        }
        if (slot[2] >> 32) as u32 == link.level {
            let known = link_of(slot);
            if (link.parent, link.step) < (known.parent, known.step) {
                *slot = slot_of(fingerprint, link);
            }
        }
        false
    }

    /// Every fingerprint of the shard with its link, in table order.
    pub fn entries(&self) -> impl Iterator<Item = (u128, Link)> + '_ {
        self.slots
            .iter()
            .filter(|slot| key_of(slot) != 0)
            .map(|slot| (key_of(slot), link_of(slot)))
    }

    /// Number of fingerprints held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The parent link of `fingerprint`, if this shard holds it.
    pub fn link(&self, fingerprint: u128) -> Option<Link> {
        let slot = &self.slots[self.slot(fingerprint)];
        (key_of(slot) == fingerprint).then(|| link_of(slot))
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
        assert!(shard.slots.len() > INITIAL_SLOTS);
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
