//! Micro-benchmarks of the floor under the checker: what inserting into
//! the visited table costs, and what the model's bare step costs. A search
//! can be no faster than generating each state, fingerprinting it and
//! looking it up.

use std::hint::black_box;
use std::time::Instant;

use cmc_model::{Encode, Fingerprint, Model};
use cmc_models::TwoPhase;
use cmc_search::SearchOptions;
use cmc_store::{FingerprintTable, Insertion, VisitedSet};

use crate::sample::Sample;

/// Which inserts are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertKind {
    /// Inserts of fingerprints not yet in the table (a new state).
    New,
    /// Inserts of fingerprints already there (a state seen before: most
    /// generated states).
    Present,
}

/// The slots cmc's table starts with (the search's default).
fn checker_initial_capacity() -> usize {
    SearchOptions::default().table_capacity
}

/// The capacity cmc's BFS ends with after storing `fingerprints`, so the
/// micro-benchmark probes a table as full as the checker's.
pub fn checker_capacity(fingerprints: u64) -> usize {
    VisitedSet::memory_capacity_after(checker_initial_capacity(), fingerprints)
}

/// `count` pseudo-random fingerprints (SplitMix64; no half is zero).
fn random_fingerprints(count: u64) -> Vec<Fingerprint> {
    let mut seed = 0x5eed_cafe_f00d_u64;
    let mut next = move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..count)
        .map(|_| Fingerprint::from_halves(next() | 1, next() | 1))
        .collect()
}

/// How far ahead of its inserts a thread prefetches table slots (the
/// checker prefetches all successors of a state before inserting them).
const PREFETCH_AHEAD: usize = 8;

/// Inserts `chunk` into `table`, prefetching [`PREFETCH_AHEAD`] slots
/// ahead; returns how many were new.
fn insert_chunk(table: &FingerprintTable, chunk: &[Fingerprint]) -> u64 {
    let mut new = 0;
    for (index, &fingerprint) in chunk.iter().enumerate() {
        if let Some(&ahead) = chunk.get(index + PREFETCH_AHEAD) {
            table.prefetch(ahead);
        }
        if table.insert(fingerprint).expect("the table has room") == Insertion::New {
            new += 1;
        }
    }
    new
}

/// Inserts `fingerprints` into `table` from `threads` threads (each takes
/// one contiguous share); returns how many were new.
fn insert_all(table: &FingerprintTable, fingerprints: &[Fingerprint], threads: usize) -> u64 {
    let share = fingerprints.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = fingerprints
            .chunks(share)
            .map(|chunk| scope.spawn(move || insert_chunk(table, chunk)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("an insert thread panicked"))
            .sum()
    })
}

/// Times `fingerprints` random inserts of `kind` into a table of the size
/// cmc's checker would have, from `threads` threads.
pub fn table_insert(fingerprints: u64, threads: usize, kind: InsertKind) -> Sample {
    let values = random_fingerprints(fingerprints);
    let table = FingerprintTable::with_capacity(checker_capacity(fingerprints));
    if kind == InsertKind::Present {
        assert_eq!(insert_all(&table, &values, threads), fingerprints);
    }
    let started = Instant::now();
    let new = insert_all(&table, &values, threads);
    let wall = started.elapsed();
    let expected_new = if kind == InsertKind::New {
        fingerprints
    } else {
        0
    };
    assert_eq!(new, expected_new, "random fingerprints are distinct");
    assert_eq!(table.len(), fingerprints);
    Sample {
        distinct: new,
        generated: fingerprints,
        depth: 0,
        wall,
        table_bytes: table.memory_bytes() as u64,
        peak_rss_bytes: 0,
        verdict: "ok".into(),
    }
}

/// Whether an encoding is new to the filter, which remembers it: a set-up
/// visited set (not timed; cmc's, in memory, far faster than a `HashSet` of
/// states).
pub fn new_encodings() -> impl FnMut(&[u8]) -> bool {
    let mut visited =
        VisitedSet::Memory(FingerprintTable::with_capacity(checker_initial_capacity()));
    move |bytes| {
        visited
            .make_room(None, cmc_store::Wanted::exactly(1))
            .expect("an in-memory set without a budget always grows");
        visited.insert(Fingerprint::of_bytes(bytes)) == Some(Insertion::New)
    }
}

/// Every reachable state of `model`, in BFS order (set-up, not timed).
fn reachable_states(model: &TwoPhase) -> Vec<<TwoPhase as Model>::State> {
    let mut is_new_encoding = new_encodings();
    let mut bytes = Vec::new();
    let mut is_new = |state: &<TwoPhase as Model>::State| {
        bytes.clear();
        state.encode(&mut bytes);
        is_new_encoding(&bytes)
    };
    let mut states = Vec::new();
    model.init_states(&mut states);
    states.retain(&mut is_new);
    let mut actions = Vec::new();
    let mut next_index = 0;
    while let Some(&state) = states.get(next_index) {
        next_index += 1;
        actions.clear();
        model.actions(&state, &mut actions);
        for action in &actions {
            if let Some(next) = model.next_state(&state, action) {
                if is_new(&next) {
                    states.push(next);
                }
            }
        }
    }
    states
}

/// Times the bare step of two-phase commit over all its reachable states:
/// actions, next state, canonical encoding and fingerprint of every
/// successor; no table, no frontier, no trace.
pub fn two_phase_step(rm_count: usize) -> Sample {
    let model = TwoPhase::new(rm_count);
    let states = reachable_states(&model);
    let mut actions = Vec::new();
    let mut bytes = Vec::new();
    let mut generated = 0u64;
    let mut folded = 0u64;
    let started = Instant::now();
    for state in &states {
        actions.clear();
        model.actions(state, &mut actions);
        for action in &actions {
            if let Some(next) = model.next_state(state, action) {
                bytes.clear();
                next.encode(&mut bytes);
                folded ^= Fingerprint::of_bytes(&bytes).low();
                generated += 1;
            }
        }
    }
    let wall = started.elapsed();
    black_box(folded);
    Sample {
        distinct: states.len() as u64,
        generated,
        depth: 0,
        wall,
        table_bytes: 0,
        peak_rss_bytes: 0,
        verdict: "ok".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_the_checker_s_growth() {
        assert_eq!(checker_capacity(1000), 1 << 20);
        // 2^20 doubled 3 times, then grown by a quarter once.
        assert_eq!(checker_capacity(10_340_352), 10_485_760 / 4 * 5);
    }

    #[test]
    fn inserts_count_new_and_present() {
        assert_eq!(table_insert(5_000, 2, InsertKind::New).distinct, 5_000);
        assert_eq!(table_insert(5_000, 2, InsertKind::Present).distinct, 0);
    }

    #[test]
    fn step_floor_sees_every_state_and_tlc_s_generated_count() {
        let sample = two_phase_step(3);
        assert_eq!(sample.distinct, 288);
        // TLC's generated count includes the initial state.
        assert_eq!(sample.generated + 1, 1_146);
    }
}
