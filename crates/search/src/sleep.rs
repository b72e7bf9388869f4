//! Sleep sets (Godefroid) in level-by-level breadth-first search: a step
//! that an explored interleaving already covers is not computed again.
//!
//! Each state `s` of the level being expanded has a sleep set Z(s) of step
//! keys ([`SleepKey`]); a step of `s` whose key is in Z(s) is enabled but
//! neither computed nor followed. Expanding `p`, the steps not asleep are
//! taken in their order; the successor by the i-th one, `a`, gets the
//! contribution
//!
//! C(p, a) = { z in Z(p) independent of a } ∪ { b taken before a at p, independent of a }
//!
//! (empty when `a` does not [commute](cmc_model::Model::taken_key)),
//! and Z(s) of a state `s` first found in level d+1 is the intersection of
//! the contributions of all its parents in level d: every one of them is
//! expanded before `s` is. A state reached again from a later level keeps
//! its sleep set (that path is not a shortest one).
//!
//! Why every state is still found at its breadth-first depth. Let `u` be
//! a state at distance k+1, and π = a1 … ak+1 the least path of that length
//! to `u` in the order "compare the first differing step by its position
//! in the enabled steps of the state before it". Suppose some a_j is asleep
//! at s_{j-1} (the state before it on π). Z(s_{j-1}) is inside the
//! contribution along π's own parent, so a_j entered it at some i < j as
//! a step taken before a_i at s_{i-1}, independent of a_i, …, a_{j-1}.
//! Then a_j is enabled at s_{i-1} and commutes with a_i … a_{j-1} (the
//! [contract](cmc_model::Model::sleep_key)): a1 … a_{i-1} a_j a_i … a_{j-1}
//! a_{j+1} … reaches `u` with k+1 steps and is less than π, a
//! contradiction. So no step of π is asleep: every state is stored, in the
//! level of its distance, and the distinct states, the depth, every
//! invariant and witness and every shortest counterexample are those of
//! the search without sleep sets. Steps that sleep are steps not checked
//! by step properties, so a model with step properties is refused (see
//! the World's `sleep_support`).
//!
//! Workers share the sets of the level being found: a successor's table
//! insertion and the note of its contribution are made under one lock of
//! its shard, so a second parent never misses the first one's note.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use cmc_model::{Fingerprint, SleepKey};

/// Shards of each level's sleep sets.
const SHARDS: usize = 64;

/// A fingerprint is a hash already: its low bits index the table.
#[derive(Default)]
struct FingerprintHasher(u64);

impl std::hash::Hasher for FingerprintHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u128(&mut self, value: u128) {
        self.0 = value as u64;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Shard = HashMap<Fingerprint, Vec<SleepKey>, std::hash::BuildHasherDefault<FingerprintHasher>>;

/// The sleep sets of one breadth-first search, shared by its workers.
#[derive(Debug)]
pub(crate) struct SleepSets {
    /// The sets of the level being expanded (a state without one sleeps
    /// nothing).
    current: Vec<Mutex<Shard>>,
    /// The sets of the level being found.
    next: Vec<Mutex<Shard>>,
    /// Steps left asleep.
    skipped: AtomicU64,
}

fn lock(shard: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    shard.lock().unwrap_or_else(|e| e.into_inner())
}

fn shard_of(fingerprint: Fingerprint) -> usize {
    (fingerprint.high() as usize) % SHARDS
}

impl SleepSets {
    pub fn new() -> SleepSets {
        let shards = || (0..SHARDS).map(|_| Mutex::default()).collect();
        SleepSets {
            current: shards(),
            next: shards(),
            skipped: AtomicU64::new(0),
        }
    }

    /// The level found so far is the one to expand now.
    pub fn begin_level(&self) {
        for (current, next) in self.current.iter().zip(&self.next) {
            *lock(current) = std::mem::take(&mut *lock(next));
        }
    }

    /// Writes to `out` the sleep set of the state `fingerprint` of the level
    /// being expanded.
    pub fn asleep(&self, fingerprint: Fingerprint, out: &mut Vec<SleepKey>) {
        out.clear();
        if let Some(set) = lock(&self.current[shard_of(fingerprint)]).get(&fingerprint) {
            out.extend_from_slice(set);
        }
    }

    /// Counts `steps` left asleep.
    pub fn count_skipped(&self, steps: usize) {
        self.skipped.fetch_add(steps as u64, Ordering::Relaxed);
    }

    /// Steps left asleep so far.
    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    /// Runs `insert`, the visited-set insertion of the successor
    /// `fingerprint` (`Ok(true)`: it is new, of the level being found), and
    /// notes `contribution` for it: its sleep set if new, else intersected
    /// with the one it has if it is of the level being found (a state
    /// without a set sleeps nothing, or is older).
    pub fn admit<E>(
        &self,
        fingerprint: Fingerprint,
        contribution: &[SleepKey],
        insert: impl FnOnce() -> Result<bool, E>,
    ) -> Result<bool, E> {
        let mut shard = lock(&self.next[shard_of(fingerprint)]);
        let new = insert()?;
        if new {
            if !contribution.is_empty() {
                shard.insert(fingerprint, contribution.to_vec());
            }
        } else if let Some(set) = shard.get_mut(&fingerprint) {
            set.retain_mut(|key| match contribution.iter().find(|c| c.same_step(key)) {
                Some(also) => {
                    key.feeds |= also.feeds;
                    key.shared |= also.shared;
                    true
                }
                None => false,
            });
            if set.is_empty() {
                shard.remove(&fingerprint);
            }
        }
        Ok(new)
    }
}

/// The contribution C(p, a) of the step `taken[at]` (see the module text):
/// written to `out`. `asleep` is Z(p); `taken` are the keys of the steps
/// taken at p, in order, `None` for a step that does not commute.
pub(crate) fn contribution(
    asleep: &[SleepKey],
    taken: &[Option<SleepKey>],
    at: usize,
    out: &mut Vec<SleepKey>,
) {
    out.clear();
    let Some(step) = taken[at] else {
        return;
    };
    let before = taken[..at].iter().flatten();
    for key in asleep.iter().chain(before) {
        if !key.independent(&step) {
            continue;
        }
        match out.iter_mut().find(|known| known.same_step(key)) {
            Some(known) => {
                known.feeds |= key.feeds;
                known.shared |= key.shared;
            }
            None => out.push(*key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(owner: u32, name: u128) -> SleepKey {
        SleepKey {
            owner,
            partner: None,
            name: Fingerprint(name),
            feeds: u64::MAX,
            shared: false,
        }
    }

    #[test]
    fn a_step_passes_on_the_independent_steps_taken_before_it_and_asleep() {
        let asleep = [key(2, 20), key(1, 10)];
        let taken = [Some(key(0, 1)), None, Some(key(1, 11)), Some(key(0, 2))];
        let mut out = Vec::new();
        contribution(&asleep, &taken, 3, &mut out);
        assert_eq!(
            out,
            [key(2, 20), key(1, 10), key(1, 11)],
            "node 0's own step is dependent"
        );
        contribution(&asleep, &taken, 0, &mut out);
        assert_eq!(out, [key(2, 20), key(1, 10)], "nothing taken before it");
        contribution(&asleep, &taken, 1, &mut out);
        assert!(
            out.is_empty(),
            "a step that does not commute passes nothing on"
        );
    }

    #[test]
    fn a_state_of_the_next_level_sleeps_on_what_every_parent_passes_on() {
        let sleep = SleepSets::new();
        let state = Fingerprint(7);
        let first = sleep.admit::<()>(state, &[key(1, 1), key(2, 2)], || Ok(true));
        let second = sleep.admit::<()>(state, &[key(2, 2), key(3, 3)], || Ok(false));
        assert_eq!((first, second), (Ok(true), Ok(false)));
        let older = sleep.admit::<()>(Fingerprint(8), &[key(1, 1)], || Ok(false));
        assert_eq!(older, Ok(false));
        sleep.begin_level();
        let mut out = Vec::new();
        sleep.asleep(state, &mut out);
        assert_eq!(out, [key(2, 2)]);
        sleep.asleep(Fingerprint(8), &mut out);
        assert!(
            out.is_empty(),
            "a state reached again from a later level sleeps nothing new"
        );
    }
}
