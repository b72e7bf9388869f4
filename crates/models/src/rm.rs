//! Resource managers: the constant `RM` and the variable `rmState` that
//! TCommit, TwoPhase and PaxosCommit share (the latter two `INSTANCE TCommit`).
//!
//! The RMs `r1, r2, …` are numbered `0, 1, …`; a set of RMs is a bit set and
//! `rmState` packs two bits per RM, so both are canonical and copy-only.

use std::fmt;

use cmc_model::Encode;

/// The largest `RM` set the packed representations hold.
pub const RM_COUNT_MAX: usize = 16;

/// One resource manager, `r{index + 1}` in the specs' configurations.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rm(pub u8);

impl Rm {
    /// The RM's position in `0..rm_count`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The RMs `r1 … r{rm_count}` in order.
    pub fn all(rm_count: usize) -> impl Iterator<Item = Rm> {
        assert!(rm_count <= RM_COUNT_MAX, "at most {RM_COUNT_MAX} RMs");
        (0..rm_count as u8).map(Rm)
    }
}

impl fmt::Display for Rm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0 + 1)
    }
}

impl fmt::Debug for Rm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A subset of `RM`, as a bit set (bit `i` is `r{i+1}`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Encode)]
pub struct RmSet(u16);

impl RmSet {
    /// The empty set.
    pub const EMPTY: RmSet = RmSet(0);

    /// The whole of `RM` when it has `rm_count` elements.
    #[inline]
    pub fn full(rm_count: usize) -> RmSet {
        assert!(rm_count <= RM_COUNT_MAX, "at most {RM_COUNT_MAX} RMs");
        RmSet(((1u32 << rm_count) - 1) as u16)
    }

    /// Whether `rm` is in the set.
    #[inline]
    pub fn contains(self, rm: Rm) -> bool {
        self.0 & (1 << rm.0) != 0
    }

    /// The set with `rm` added.
    #[inline]
    pub fn with(self, rm: Rm) -> RmSet {
        RmSet(self.0 | (1 << rm.0))
    }

    /// Whether every member of `self` is in `other`.
    #[inline]
    pub fn is_subset(self, other: RmSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// `self \cap other`.
    #[inline]
    pub fn intersect(self, other: RmSet) -> RmSet {
        RmSet(self.0 & other.0)
    }

    /// `Cardinality(self)`.
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `self \cup other`.
    #[inline]
    pub fn union(self, other: RmSet) -> RmSet {
        RmSet(self.0 | other.0)
    }

    /// The members in ascending order.
    pub fn iter(self) -> impl Iterator<Item = Rm> {
        (0..RM_COUNT_MAX as u8)
            .map(Rm)
            .filter(move |&rm| self.contains(rm))
    }
}

impl fmt::Debug for RmSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// The state of one resource manager: `{"working", "prepared", "committed", "aborted"}`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Encode)]
pub enum RmState {
    /// `"working"`, the initial state.
    Working = 0,
    /// `"prepared"`: willing to commit.
    Prepared = 1,
    /// `"committed"`: decided to commit.
    Committed = 2,
    /// `"aborted"`: decided to abort.
    Aborted = 3,
}

impl RmState {
    const ALL: [RmState; 4] = [
        RmState::Working,
        RmState::Prepared,
        RmState::Committed,
        RmState::Aborted,
    ];

    /// The spec's string for this state, e.g. `"prepared"`.
    pub fn spec_name(self) -> &'static str {
        match self {
            RmState::Working => "working",
            RmState::Prepared => "prepared",
            RmState::Committed => "committed",
            RmState::Aborted => "aborted",
        }
    }
}

/// `rmState`, a function from `RM` to [`RmState`], two bits per RM.
///
/// Bits above `2 * rm_count` stay zero, so equal functions have equal bits.
/// The encoding of [`RmState`] makes the high bit "decided" and, among decided
/// states, the low bit "aborted", which the set queries below exploit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Encode)]
pub struct RmStates(u32);

/// Bit 0 of every RM's two-bit slot.
const LOW_BITS: u32 = 0x5555_5555;

impl RmStates {
    /// `[rm \in RM |-> "working"]`.
    pub const ALL_WORKING: RmStates = RmStates(0);

    /// `rmState[rm]`.
    #[inline]
    pub fn get(self, rm: Rm) -> RmState {
        RmState::ALL[(self.0 >> (2 * rm.0) & 3) as usize]
    }

    /// `[rmState EXCEPT ![rm] = state]`.
    #[inline]
    pub fn with(self, rm: Rm, state: RmState) -> RmStates {
        let shift = 2 * rm.0;
        RmStates(self.0 & !(3 << shift) | (state as u32) << shift)
    }

    /// The RMs whose state is `state`, given `RM` has `rm_count` elements.
    #[inline]
    pub fn in_state(self, state: RmState, rm_count: usize) -> RmSet {
        let high = (self.0 >> 1) & LOW_BITS;
        let low = self.0 & LOW_BITS;
        let slots = match state {
            RmState::Working => !high & !low,
            RmState::Prepared => !high & low,
            RmState::Committed => high & !low,
            RmState::Aborted => high & low,
        } & LOW_BITS;
        RmSet(compress_even_bits(slots) as u16).intersect(RmSet::full(rm_count))
    }

    /// Whether the slots of RMs beyond the first `rm_count` are all zero
    /// (part of `rmState \in [RM -> …]`).
    pub fn is_within(self, rm_count: usize) -> bool {
        rm_count >= RM_COUNT_MAX || self.0 >> (2 * rm_count) == 0
    }

    /// TCommit's `TCConsistent`: no RM has aborted while another committed.
    #[inline]
    pub fn tc_consistent(self, rm_count: usize) -> bool {
        self.in_state(RmState::Aborted, rm_count) == RmSet::EMPTY
            || self.in_state(RmState::Committed, rm_count) == RmSet::EMPTY
    }

    /// `\A rm \in RM : rmState[rm] # "committed"`.
    #[inline]
    pub fn none_committed(self, rm_count: usize) -> bool {
        self.in_state(RmState::Committed, rm_count) == RmSet::EMPTY
    }

    /// The function as text, e.g. `[r1 |-> "working", r2 |-> "aborted"]`.
    pub fn describe(self, rm_count: usize) -> String {
        let entries: Vec<String> = Rm::all(rm_count)
            .map(|rm| format!("{rm} |-> \"{}\"", self.get(rm).spec_name()))
            .collect();
        format!("[{}]", entries.join(", "))
    }
}

/// Gathers bits 0, 2, 4, … of `slots` into bits 0, 1, 2, ….
#[inline]
fn compress_even_bits(slots: u32) -> u32 {
    let mut x = slots & LOW_BITS;
    x = (x | x >> 1) & 0x3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff;
    (x | x >> 8) & 0x0000_ffff
}

impl fmt::Debug for RmStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(Rm::all(RM_COUNT_MAX).map(|rm| self.get(rm)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rm_states_get_what_was_set() {
        let states = RmStates::ALL_WORKING
            .with(Rm(0), RmState::Prepared)
            .with(Rm(2), RmState::Aborted)
            .with(Rm(15), RmState::Committed)
            .with(Rm(2), RmState::Committed);
        assert_eq!(states.get(Rm(0)), RmState::Prepared);
        assert_eq!(states.get(Rm(1)), RmState::Working);
        assert_eq!(states.get(Rm(2)), RmState::Committed);
        assert_eq!(states.get(Rm(15)), RmState::Committed);
    }

    #[test]
    fn in_state_lists_exactly_the_rms_in_that_state() {
        let rm_count = 5;
        let states = RmStates::ALL_WORKING
            .with(Rm(1), RmState::Prepared)
            .with(Rm(3), RmState::Aborted)
            .with(Rm(4), RmState::Committed);
        for state in RmState::ALL {
            let expected: Vec<Rm> = Rm::all(rm_count)
                .filter(|&rm| states.get(rm) == state)
                .collect();
            let got: Vec<Rm> = states.in_state(state, rm_count).iter().collect();
            assert_eq!(got, expected, "{state:?}");
        }
        assert!(!states.tc_consistent(rm_count));
        assert!(!states.none_committed(rm_count));
        assert!(states.is_within(rm_count) && !states.is_within(4));
        assert_eq!(
            states.describe(2),
            "[r1 |-> \"working\", r2 |-> \"prepared\"]"
        );
    }

    #[test]
    fn sets_behave_as_sets() {
        let set = RmSet::EMPTY.with(Rm(0)).with(Rm(3)).with(Rm(0));
        assert_eq!(set.len(), 2);
        assert!(set.contains(Rm(3)) && !set.contains(Rm(1)));
        assert!(set.is_subset(RmSet::full(4)) && !set.is_subset(RmSet::full(3)));
        assert_eq!(format!("{set:?}"), "{r1, r4}");
        assert_eq!(RmSet::full(16).len(), 16);
        let mut bytes = Vec::new();
        set.encode(&mut bytes);
        assert_eq!(RmSet::decode_exact(&bytes).unwrap(), set);
    }
}
