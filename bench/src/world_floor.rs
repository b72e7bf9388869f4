//! The floor under a World check: what the search of a World
//! configuration would cost if parts of it cost nothing. Two parts are
//! timed over the configuration's real states, explored beforehand
//! (untimed) by a breadth-first search of this module's own:
//!
//! - [`WorldFloorPart::Bytes`]: every state the checker inserts (initial
//!   states and every successor, as their canonical encodings) copied into
//!   a reused buffer, fingerprinted and inserted into a visited table, the
//!   new ones copied on to a frontier. A World whose state is its own
//!   encoding and whose step is free could go no faster: it is the bound
//!   on any rewrite of the World's state.
//! - [`WorldFloorPart::Step`]: the World's own step, the path the
//!   breadth-first search takes (parent decoded, actions listed, partial
//!   successors, encodings written from the parent's bytes, fingerprints),
//!   over every expanded state; no table, frontier, trace or properties.

use std::hint::black_box;
use std::time::Instant;

use cmc_model::{Encode, FastSuccessors, Fingerprint, Model};
use cmc_store::{FingerprintTable, Insertion};
use cmc_world::World;

use crate::floor::{checker_capacity, new_encodings};
use crate::sample::Sample;
use crate::world::WorldCase;

/// Which part of a World check a floor job times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldFloorPart {
    /// Copy, fingerprint and insert of every inserted state's encoding.
    Bytes,
    /// The World's step over every expanded state.
    Step,
}

impl WorldFloorPart {
    /// The word naming the part on a child's command line.
    pub fn word(self) -> &'static str {
        match self {
            WorldFloorPart::Bytes => "bytes",
            WorldFloorPart::Step => "step",
        }
    }

    /// The part a command-line word names.
    pub fn from_word(word: &str) -> Option<WorldFloorPart> {
        [WorldFloorPart::Bytes, WorldFloorPart::Step]
            .into_iter()
            .find(|part| part.word() == word)
    }

    /// What the part times, as the table's tool column says it.
    pub fn description(self) -> &'static str {
        match self {
            WorldFloorPart::Bytes => "copy+fingerprint+insert of each encoding",
            WorldFloorPart::Step => "decode+actions+step+encode+fingerprint",
        }
    }
}

/// Byte strings back to back.
#[derive(Default)]
struct Encodings {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Encodings {
    /// Empty, with room for `count` encodings of `bytes` bytes in all, the
    /// memory already touched (so that filling it costs no page faults).
    fn with_touched_room(bytes: usize, count: usize) -> Encodings {
        let mut room = Encodings {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(count),
        };
        room.bytes.resize(bytes, 1);
        room.ends.resize(count, 1);
        room.bytes.clear();
        room.ends.clear();
        room
    }

    fn push(&mut self, encoding: &[u8]) {
        self.bytes.extend_from_slice(encoding);
        self.ends.push(self.bytes.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, index: usize) -> &[u8] {
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.bytes[start..self.ends[index]]
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }
}

/// A World configuration's state space as the checker's breadth-first
/// search sees it.
struct Space {
    world: World,
    /// How many initial states there are.
    initial: usize,
    /// Every reachable state within the depth bound, in BFS order.
    reachable: Encodings,
    /// How many of `reachable` are expanded (those above the depth bound).
    expanded: usize,
    /// Every state the search inserts, in its order: the initial states,
    /// then each expanded state's successors.
    inserted: Encodings,
    /// BFS levels (initial states = 1): the level of the last states
    /// expanded, or the depth bound where it cut the search.
    depth: u64,
}

/// Explores `case` (set-up, not timed), with the checker's conventions: a
/// depth bound of `d` expands the states of the first `d - 1` levels.
fn explore(case: WorldCase) -> Space {
    let world = case
        .world()
        .unwrap_or_else(|problem| panic!("cannot build the World {}: {problem}", case.word()));
    let max_depth = case.max_depth();
    let mut is_new = new_encodings();
    let mut reachable = Encodings::default();
    let mut inserted = Encodings::default();
    let mut states = Vec::new();
    world.init_states(&mut states);
    for state in &states {
        let bytes = state.to_bytes();
        inserted.push(&bytes);
        if is_new(&bytes) {
            reachable.push(&bytes);
        }
    }
    let (mut level_end, mut depth, mut expanded) = (reachable.len(), 1, 0);
    let mut actions = Vec::new();
    while expanded < reachable.len() {
        if expanded == level_end {
            level_end = reachable.len();
            depth += 1;
        }
        if max_depth.is_some_and(|bound| depth >= bound) {
            break;
        }
        let state = <World as Model>::State::decode_exact(reachable.get(expanded))
            .expect("a World state decodes from its encoding");
        expanded += 1;
        actions.clear();
        world.actions(&state, &mut actions);
        for action in &actions {
            if let Some(next) = world.next_state(&state, action) {
                let bytes = next.to_bytes();
                inserted.push(&bytes);
                if is_new(&bytes) {
                    reachable.push(&bytes);
                }
            }
        }
    }
    if let Some(fault) = world.fault_text() {
        panic!("the World {} faulted while explored: {fault}", case.word());
    }
    Space {
        world,
        initial: states.len(),
        reachable,
        expanded,
        inserted,
        depth,
    }
}

/// How far ahead of its inserts a thread fingerprints and prefetches (the
/// checker prefetches all successors of a state before inserting them).
const PREFETCH_AHEAD: usize = 8;

/// Copies, fingerprints and inserts `share` (the new ones copied on to
/// `frontier`); returns how many were new.
fn insert_share(table: &FingerprintTable, share: &[&[u8]], frontier: &mut Encodings) -> u64 {
    let mut successor = Vec::new();
    let mut ahead = [Fingerprint::from_halves(1, 1); PREFETCH_AHEAD];
    let mut fingerprint_of = |bytes: &[u8]| {
        successor.clear();
        successor.extend_from_slice(bytes);
        let fingerprint = Fingerprint::of_bytes(&successor);
        table.prefetch(fingerprint);
        fingerprint
    };
    for (slot, bytes) in ahead.iter_mut().zip(share) {
        *slot = fingerprint_of(bytes);
    }
    let mut new = 0;
    for index in 0..share.len() {
        let fingerprint = ahead[index % PREFETCH_AHEAD];
        if let Some(bytes) = share.get(index + PREFETCH_AHEAD) {
            ahead[index % PREFETCH_AHEAD] = fingerprint_of(bytes);
        }
        if table.insert(fingerprint).expect("the table has room") == Insertion::New {
            frontier.push(share[index]);
            new += 1;
        }
    }
    new
}

/// Times [`WorldFloorPart::Bytes`] for `case` on `threads` threads (each
/// takes one contiguous share of the inserted states and has a frontier
/// whose memory is touched beforehand), into a table of the capacity the
/// checker ends with.
fn bytes_floor(case: WorldCase, threads: usize) -> Sample {
    let space = explore(case);
    let encodings: Vec<&[u8]> = space.inserted.iter().collect();
    let distinct = space.reachable.len() as u64;
    let table = FingerprintTable::with_capacity(checker_capacity(distinct));
    let share = encodings.len().div_ceil(threads.max(1)).max(1);
    let mut frontiers: Vec<Encodings> = encodings
        .chunks(share)
        .map(|_| Encodings::with_touched_room(space.reachable.bytes.len(), space.reachable.len()))
        .collect();
    let started = Instant::now();
    let new: u64 = std::thread::scope(|scope| {
        let table = &table;
        let workers: Vec<_> = encodings
            .chunks(share)
            .zip(&mut frontiers)
            .map(|(chunk, frontier)| scope.spawn(move || insert_share(table, chunk, frontier)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("an insert thread panicked"))
            .sum()
    });
    let wall = started.elapsed();
    black_box(frontiers.iter().map(Encodings::len).sum::<usize>());
    assert_eq!(new, distinct, "the floor inserts what the search found");
    Sample {
        distinct,
        generated: encodings.len() as u64,
        depth: space.depth,
        wall,
        table_bytes: table.memory_bytes() as u64,
        peak_rss_bytes: 0,
        verdict: "ok".into(),
    }
}

/// Times [`WorldFloorPart::Step`] for `case` on one thread.
fn step_floor(case: WorldCase) -> Sample {
    let space = explore(case);
    let world = &space.world;
    let mut state = <World as Model>::State::decode_exact(space.reachable.get(0))
        .expect("a World state decodes from its encoding");
    let mut next = state.clone();
    let mut actions = Vec::new();
    let mut bytes = Vec::new();
    let mut generated = space.initial as u64;
    let mut folded = 0u64;
    let started = Instant::now();
    for parent in space.reachable.iter().take(space.expanded) {
        state
            .decode_exact_in_place(parent)
            .expect("a World state decodes from its encoding");
        actions.clear();
        world.actions(&state, &mut actions);
        for action in &actions {
            if world.next_state_partial_into(&state, action, &mut next) {
                bytes.clear();
                world.encode_successor(&state, parent, &next, &mut bytes);
                folded ^= Fingerprint::of_bytes(&bytes).low();
                generated += 1;
            }
        }
    }
    let wall = started.elapsed();
    black_box(folded);
    assert_eq!(
        generated,
        space.inserted.len() as u64,
        "the step floor generates what the search generated"
    );
    Sample {
        distinct: space.reachable.len() as u64,
        generated,
        depth: space.depth,
        wall,
        table_bytes: 0,
        peak_rss_bytes: 0,
        verdict: "ok".into(),
    }
}

/// Runs the floor job: `part` of `case` on `threads` threads (the step is
/// timed on one).
pub fn run(case: WorldCase, part: WorldFloorPart, threads: usize) -> Sample {
    match part {
        WorldFloorPart::Bytes => bytes_floor(case, threads),
        WorldFloorPart::Step => step_floor(case),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_explores_what_the_checker_finds() {
        let checked = crate::world::check(WorldCase::Abd, 1);
        let floor = run(WorldCase::Abd, WorldFloorPart::Bytes, 2);
        assert_eq!(
            (floor.distinct, floor.generated, floor.depth),
            (checked.distinct, checked.generated, checked.depth)
        );
        let step = run(WorldCase::Abd, WorldFloorPart::Step, 1);
        assert_eq!(
            (step.distinct, step.generated),
            (floor.distinct, floor.generated)
        );
    }
}
