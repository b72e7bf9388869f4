//! A successor's nodes that a step left unchanged are copied from its
//! parent's bytes (`Model::encode_successor`) rather than encoded again. The
//! determinism check compares those bytes with a full encoding of every
//! successor; these searches run it over Paxos (five nodes, a crash and a
//! restart) and ABD (symmetric replicas: nodes renamed after each step), with
//! the exact counts of the uncopied encoding.

use cmc_search::{Checker, Verdict};
use cmc_world::World;

/// Checks `world` to `max_depth` with the determinism check on; returns the
/// distinct states.
fn distinct_states_checked(world: World, max_depth: u64) -> u64 {
    let checker = Checker::new(world)
        .workers(2)
        .check_deadlock(false)
        .check_determinism(true)
        .max_depth(max_depth);
    let outcome = checker.run();
    assert!(
        checker.model().fault().is_none(),
        "{:?}",
        checker.model().fault()
    );
    assert_eq!(outcome.verdict, Verdict::Pass);
    outcome.stats.distinct_states
}

#[test]
fn paxos_successors_copied_from_their_parents_are_their_encodings() {
    let params = ["crash_nodes=0,1,2", "crashes=1", "restarts=1"];
    let world = cmc_protocols::paxos::properties::world(0, 5, &params).unwrap();
    assert_eq!(distinct_states_checked(world, 16), 188_337);
}

#[test]
fn abd_successors_renamed_by_symmetry_are_their_encodings() {
    let params = [
        "requests=2",
        "crash_nodes=0,1,2",
        "crashes=1",
        "restarts=1",
        "symmetry=0,1,2",
    ];
    let world = cmc_protocols::abd::properties::world(0, 5, &params).unwrap();
    assert_eq!(distinct_states_checked(world, 17), 56_127);
}
