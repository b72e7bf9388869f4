//! A breadth-first search written by hand for two-phase commit alone: what
//! one thread can do when it knows the model. The general engine with two
//! workers is measured against it.
//!
//! The state is packed in one `u64`; the visited set is an open-addressing
//! table of those words (exact: no fingerprint, no collision); a level is a
//! `Vec<u64>`. It checks what cmc's check of `cmc_models::TwoPhase` checks:
//! `TPTypeOK` and `TCConsistent` on every distinct state, and deadlock (a
//! state with no enabled action) on every expanded state; it keeps no parent
//! links, so it could not print a counterexample.

use std::time::Instant;

use crate::sample::Sample;

/// The largest `RM` whose packed state fits in a `u64` (4·RM + 4 bits).
pub const RM_COUNT_MAX: usize = 15;

/// `rmState` values, two bits per RM (the spec's order).
const WORKING: u64 = 0;
const PREPARED: u64 = 1;
const COMMITTED: u64 = 2;
const ABORTED: u64 = 3;

/// `tmState` values.
const TM_INIT: u64 = 0;
const TM_COMMITTED: u64 = 1;
const TM_ABORTED: u64 = 2;

/// Where each variable sits in the packed word, for `rm_count` RMs:
/// `rmState` (2 bits each) | `tmState` (2) | `tmPrepared` (1 each) |
/// Prepared messages (1 each) | Commit message | Abort message.
#[derive(Debug, Clone, Copy)]
struct Layout {
    rm_count: u32,
    tm_state: u32,
    tm_prepared: u32,
    msg_prepared: u32,
    msg_commit: u32,
    msg_abort: u32,
    /// Every bit a state may use.
    used: u64,
}

impl Layout {
    fn new(rm_count: usize) -> Layout {
        assert!(
            (1..=RM_COUNT_MAX).contains(&rm_count),
            "the packed two-phase state holds 1 to {RM_COUNT_MAX} RMs, not {rm_count}"
        );
        let rm_count = rm_count as u32;
        let tm_state = 2 * rm_count;
        let tm_prepared = tm_state + 2;
        let msg_prepared = tm_prepared + rm_count;
        let msg_commit = msg_prepared + rm_count;
        let msg_abort = msg_commit + 1;
        let bits = msg_abort + 1;
        Layout {
            rm_count,
            tm_state,
            tm_prepared,
            msg_prepared,
            msg_commit,
            msg_abort,
            used: if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            },
        }
    }

    fn all_rms(self) -> u64 {
        (1 << self.rm_count) - 1
    }

    fn rm_state(self, state: u64, rm: u32) -> u64 {
        state >> (2 * rm) & 3
    }

    fn with_rm_state(self, state: u64, rm: u32, value: u64) -> u64 {
        state & !(3 << (2 * rm)) | value << (2 * rm)
    }

    fn tm_state(self, state: u64) -> u64 {
        state >> self.tm_state & 3
    }

    fn with_tm_state(self, state: u64, value: u64) -> u64 {
        state & !(3 << self.tm_state) | value << self.tm_state
    }

    fn tm_prepared(self, state: u64) -> u64 {
        state >> self.tm_prepared & self.all_rms()
    }

    fn msg_prepared(self, state: u64) -> u64 {
        state >> self.msg_prepared & self.all_rms()
    }

    fn flag(state: u64, bit: u32) -> bool {
        state >> bit & 1 == 1
    }

    /// `TPTypeOK`: `tmState` is one of its three values and no bit outside
    /// the layout is set (the RM-indexed parts stay within `RM`).
    fn type_ok(self, state: u64) -> bool {
        state & !self.used == 0 && self.tm_state(state) <= TM_ABORTED
    }

    /// `TCConsistent`: no RM aborted while another committed.
    fn consistent(self, state: u64) -> bool {
        let (mut aborted, mut committed) = (false, false);
        for rm in 0..self.rm_count {
            match self.rm_state(state, rm) {
                ABORTED => aborted = true,
                COMMITTED => committed = true,
                _ => {}
            }
        }
        !(aborted && committed)
    }

    /// Calls `visit` with every successor of `state` under `TPNext` (one
    /// per enabled action, stuttering steps included); returns how many.
    #[inline]
    fn successors(self, state: u64, mut visit: impl FnMut(u64)) -> u64 {
        let mut count = 0;
        let mut emit = |next: u64| {
            count += 1;
            visit(next);
        };
        let tm_init = self.tm_state(state) == TM_INIT;
        let commit = Layout::flag(state, self.msg_commit);
        let abort = Layout::flag(state, self.msg_abort);
        if tm_init {
            if self.tm_prepared(state) == self.all_rms() {
                emit(self.with_tm_state(state, TM_COMMITTED) | 1 << self.msg_commit);
            }
            emit(self.with_tm_state(state, TM_ABORTED) | 1 << self.msg_abort);
        }
        let sent = self.msg_prepared(state);
        for rm in 0..self.rm_count {
            if tm_init && sent >> rm & 1 == 1 {
                emit(state | 1 << (self.tm_prepared + rm));
            }
            if self.rm_state(state, rm) == WORKING {
                emit(self.with_rm_state(state, rm, PREPARED) | 1 << (self.msg_prepared + rm));
                emit(self.with_rm_state(state, rm, ABORTED));
            }
            if commit {
                emit(self.with_rm_state(state, rm, COMMITTED));
            }
            if abort {
                emit(self.with_rm_state(state, rm, ABORTED));
            }
        }
        count
    }
}

/// An open-addressing set of packed states (linear probing, power-of-two
/// capacity, doubled at three quarters full). A slot holds its state plus
/// one, so that zero marks a free slot (`u64::MAX` is no state: its
/// `tmState` would be 3).
struct StateSet {
    slots: Vec<u64>,
    len: usize,
}

const EMPTY: u64 = 0;

impl StateSet {
    fn new() -> StateSet {
        StateSet {
            slots: vec![EMPTY; 1 << 16],
            len: 0,
        }
    }

    /// A well-mixed hash of a packed state (one 128-bit multiply, modulo
    /// 2^128, folded).
    #[inline]
    fn hash(state: u64) -> u64 {
        let product = u128::from(state).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
        (product as u64) ^ (product >> 64) as u64
    }

    /// Adds `state`; whether it was not there before.
    #[inline]
    fn insert(&mut self, state: u64) -> bool {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let key = state.wrapping_add(1);
        let mask = self.slots.len() - 1;
        let mut slot = StateSet::hash(state) as usize & mask;
        loop {
            match self.slots[slot] {
                EMPTY => {
                    self.slots[slot] = key;
                    self.len += 1;
                    return true;
                }
                seen if seen == key => return false,
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let doubled = vec![EMPTY; 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, doubled);
        let mask = self.slots.len() - 1;
        for key in old.into_iter().filter(|&key| key != EMPTY) {
            let mut slot = StateSet::hash(key.wrapping_sub(1)) as usize & mask;
            while self.slots[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = key;
        }
    }

    fn memory_bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<u64>()) as u64
    }
}

/// Checks two-phase commit with `rm_count` RMs by the specialised BFS and
/// times it; the counts follow TLC's conventions (the initial state is
/// generated, and is depth 1). A violated invariant or a deadlock makes
/// the verdict `violated` (none is expected).
pub fn two_phase_bfs(rm_count: usize) -> Sample {
    let started = Instant::now();
    let layout = Layout::new(rm_count);
    let mut seen = StateSet::new();
    let initial = 0u64; // every RM working, TM init, nothing sent
    let mut sound = layout.type_ok(initial) && layout.consistent(initial);
    seen.insert(initial);
    let mut level = vec![initial];
    let mut next = Vec::new();
    let mut generated = 1u64;
    let mut depth = 0u64;
    while !level.is_empty() {
        depth += 1;
        for &state in &level {
            let enabled = layout.successors(state, |successor| {
                if seen.insert(successor) {
                    sound &= layout.type_ok(successor) && layout.consistent(successor);
                    next.push(successor);
                }
            });
            sound &= enabled > 0; // no deadlock: two-phase has no terminal states
            generated += enabled;
        }
        std::mem::swap(&mut level, &mut next);
        next.clear();
    }
    let wall = started.elapsed();
    Sample {
        distinct: seen.len as u64,
        generated,
        depth,
        wall,
        table_bytes: seen.memory_bytes(),
        peak_rss_bytes: 0,
        verdict: if sound { "pass" } else { "violated" }.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmc_model::Model;
    use cmc_models::two_phase::{TmState, TwoPhaseState};
    use cmc_models::TwoPhase;

    /// TLC's distinct states and depth for RM = 3..6.
    const TLC: [(usize, u64, u64); 4] = [
        (3, 288, 11),
        (4, 1_568, 14),
        (5, 8_832, 17),
        (6, 50_816, 20),
    ];

    #[test]
    fn counts_are_tlc_s_and_the_engine_s() {
        for (rm_count, distinct, depth) in TLC {
            let sample = two_phase_bfs(rm_count);
            assert_eq!(
                (sample.distinct, sample.depth),
                (distinct, depth),
                "RM={rm_count}"
            );
            assert_eq!(sample.verdict, "pass");
            let engine = crate::cmc::check(TwoPhase::new(rm_count), 1, true);
            assert_eq!(
                (sample.distinct, sample.generated, sample.depth),
                (engine.distinct, engine.generated, engine.depth),
                "RM={rm_count}"
            );
        }
        // TLC's generated count at RM=3 (the initial state included).
        assert_eq!(two_phase_bfs(3).generated, 1_146);
    }

    /// The packed state of the model's `state`.
    fn pack(layout: Layout, state: &TwoPhaseState) -> u64 {
        let mut packed = 0;
        for rm in 0..layout.rm_count {
            let value = state.rm_state.get(cmc_models::rm::Rm(rm as u8)) as u64;
            packed = layout.with_rm_state(packed, rm, value);
        }
        let tm = match state.tm_state {
            TmState::Init => TM_INIT,
            TmState::Committed => TM_COMMITTED,
            TmState::Aborted => TM_ABORTED,
        };
        packed = layout.with_tm_state(packed, tm);
        for rm in 0..layout.rm_count {
            let member = cmc_models::rm::Rm(rm as u8);
            if state.tm_prepared.contains(member) {
                packed |= 1 << (layout.tm_prepared + rm);
            }
            if state.msgs.prepared.contains(member) {
                packed |= 1 << (layout.msg_prepared + rm);
            }
        }
        if state.msgs.commit {
            packed |= 1 << layout.msg_commit;
        }
        if state.msgs.abort {
            packed |= 1 << layout.msg_abort;
        }
        packed
    }

    #[test]
    fn successors_are_the_model_s() {
        let rm_count = 3;
        let model = TwoPhase::new(rm_count);
        let layout = Layout::new(rm_count);
        let mut states = Vec::new();
        model.init_states(&mut states);
        let mut index = 0;
        let mut seen: std::collections::HashSet<u64> =
            states.iter().map(|state| pack(layout, state)).collect();
        while let Some(&state) = states.get(index) {
            index += 1;
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            let mut expected: Vec<u64> = actions
                .iter()
                .filter_map(|action| model.next_state(&state, action))
                .map(|next| pack(layout, &next))
                .collect();
            let mut got = Vec::new();
            layout.successors(pack(layout, &state), |next| got.push(next));
            expected.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expected, "{state:?}");
            for action in &actions {
                let next = model.next_state(&state, action).unwrap();
                if seen.insert(pack(layout, &next)) {
                    states.push(next);
                }
            }
        }
        assert_eq!(seen.len(), 288);
    }

    #[test]
    fn a_broken_invariant_is_seen() {
        let layout = Layout::new(3);
        let committed_and_aborted =
            layout.with_rm_state(layout.with_rm_state(0, 0, COMMITTED), 1, ABORTED);
        assert!(!layout.consistent(committed_and_aborted));
        assert!(!layout.type_ok(3 << layout.tm_state));
        assert!(!layout.type_ok(1 << 63));
    }
}
