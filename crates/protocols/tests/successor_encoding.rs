//! A successor's nodes that a step left unchanged are copied from its
//! parent's bytes (`FastSuccessors::encode_successor`) rather than encoded again. The
//! determinism check compares those bytes with a full encoding of every
//! successor; these searches run it over Paxos (five nodes, a crash and a
//! restart), ABD (symmetric replicas: nodes renamed after each step) and
//! reqack (every kind of action), with the exact counts of the uncopied
//! encoding.
//!
//! Most successors are also *partial* (`FastSuccessors::next_state_partial_into`):
//! the nodes a step leaves alone are not copied into them until the search
//! needs them whole. The determinism check makes each whole, compares it
//! with the successor made again from scratch, and compares the partial
//! one's encoding with the whole one's.

mod common;

use std::sync::Arc;

use cmc_world::example_cores::reqack::ReqAck;
use cmc_world::{World, WorldSpec};
use common::{check_determinism, check_determinism_depth_first, ABD_GATE_PARAMS};

#[test]
fn paxos_successors_copied_from_their_parents_are_their_encodings() {
    let params = ["crash_nodes=0,1,2", "crashes=1", "restarts=1"];
    let world = cmc_protocols::paxos::properties::world(0, 5, &params).unwrap();
    let concluded = check_determinism(world, 16);
    assert_eq!(
        (concluded.verdict.as_str(), concluded.states),
        ("pass", 188_337)
    );
}

#[test]
fn abd_successors_renamed_by_symmetry_are_their_encodings() {
    let world = cmc_protocols::abd::properties::world(0, 5, &ABD_GATE_PARAMS).unwrap();
    let concluded = check_determinism(world, 17);
    assert_eq!(
        (concluded.verdict.as_str(), concluded.states),
        ("pass", 56_127)
    );
}

/// Every kind of action (deliver, drop, dup, flush, timer, tick, crash,
/// restart, client, local failure, each kind of link cut) and replies: the
/// World copies every node but the one an action may change, and the
/// history when it has as many entries as the parent's, without comparing
/// them; a step that changed another node, or a reply left out, fails here
/// (both mutation-checked). Deep enough for a request to be answered.
#[test]
fn reqack_successors_under_every_fault_are_their_encodings() {
    let concluded = check_determinism(reqack_under_every_fault(), 14);
    assert_eq!(
        (concluded.verdict.as_str(), concluded.states),
        ("pass", 237_692)
    );
}

/// Depth-first, the state expanded is a copy with no bytes to copy from: a
/// partial successor's nodes are encoded from the parent's typed nodes
/// (mutation-checked: encoded from its own, it fails here).
#[test]
fn reqack_partial_successors_of_a_copied_parent_are_their_encodings() {
    let concluded = check_determinism_depth_first(reqack_under_every_fault(), 10);
    assert_eq!(concluded.verdict, "pass");
    assert!(concluded.states > 10_000, "{concluded:?}");
}

/// reqack with two nodes, a request and a budget for every fault.
fn reqack_under_every_fault() -> World {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
    spec.set_all(&[
        "requests=1",
        "drops=1",
        "dups=1",
        "partitions=1",
        "oneway_cuts=1",
        "isolations=1",
        "splits=1",
        "ticks=2",
        "crash_nodes=0,1",
        "crashes=1",
        "restarts=1",
        "local_fails=1",
    ])
    .unwrap();
    World::new(spec)
}
