//! A successor's nodes that a step left unchanged are copied from its
//! parent's bytes (`Model::encode_successor`) rather than encoded again. The
//! determinism check compares those bytes with a full encoding of every
//! successor; these searches run it over Paxos (five nodes, a crash and a
//! restart) and ABD (symmetric replicas: nodes renamed after each step), with
//! the exact counts of the uncopied encoding.

mod support;

use support::{check_determinism, ABD_GATE_PARAMS};

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
