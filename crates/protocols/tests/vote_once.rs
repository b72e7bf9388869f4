//! Raft's `VoteOnce` ("a server never grants its vote to two candidates in
//! a term"), a property over the ghost variable `Votes`, which remembers
//! each server's last durable vote across the crash that may erase it.
//!
//! The configuration: two servers that may both stand, one term, no client
//! request, one crash and one restart of server 1.

mod common;

use std::collections::HashSet;

use cmc_model::{Encode, Model};
use cmc_protocols::raft;
use cmc_search::{Checker, Verdict};
use cmc_world::system::spec::BUDGET_NAMES;
use cmc_world::system::state::{GhostEntry, WorldState};
use cmc_world::{World, WorldSpec};
use common::check_determinism;

const PARAMS: [&str; 5] = [
    "cfg0=1",
    "requests=0",
    "crashes=1",
    "restarts=1",
    "crash_nodes=1",
];

/// Two terms: a server's vote of term 1 is forgotten by its state once it
/// moves to term 2, and remembered by the ghost.
const TWO_TERMS: [&str; 5] = [
    "cfg0=2",
    "requests=0",
    "crashes=1",
    "restarts=1",
    "crash_nodes=1",
];

/// The World of raft variant `bug` with `params` and Raft's state
/// properties only: no ghost variable.
fn without_ghost_in(bug: u32, params: &[&str]) -> World {
    let mut spec = WorldSpec::new(raft::core(bug).unwrap(), 2).unwrap();
    spec.set_all(params).unwrap();
    World::new(spec).with_properties(raft::properties())
}

fn without_ghost(bug: u32) -> World {
    without_ghost_in(bug, &PARAMS)
}

/// The World as the catalog registers it: Raft's properties and `VoteOnce`.
fn with_ghost(bug: u32) -> World {
    raft::world(bug, 2, &PARAMS).unwrap()
}

fn verdict(world: World) -> (String, bool) {
    let outcome = Checker::new(world).workers(1).check_deadlock(false).run();
    let verdict = match &outcome.verdict {
        Verdict::Violated { property, .. } => property.clone(),
        other => other.as_str().to_string(),
    };
    (verdict, outcome.stats.complete)
}

#[test]
fn a_server_that_forgets_its_vote_is_caught_by_vote_once_alone() {
    // Bug 3: server 1 votes for itself, crashes, restarts without its
    // vote and votes for server 0 in the same term. No two leaders
    // follow (server 1 is no longer a candidate), so the state
    // properties pass after a complete search.
    assert_eq!(verdict(without_ghost(3)), ("pass".to_string(), true));
    assert_eq!(verdict(with_ghost(3)).0, "VoteOnce");
    // The correct core keeps its vote.
    assert_eq!(verdict(with_ghost(0)), ("pass".to_string(), true));
}

/// The reachable states of `world`, by breadth-first search.
fn reachable(world: &World) -> Vec<WorldState> {
    let mut states = Vec::new();
    world.init_states(&mut states);
    let mut seen: HashSet<Vec<u8>> = states.iter().map(Encode::to_bytes).collect();
    let mut at = 0;
    let mut actions = Vec::new();
    while at < states.len() {
        actions.clear();
        world.actions(&states[at], &mut actions);
        for action in &actions {
            let next = world.next_state(&states[at], action).unwrap();
            if seen.insert(next.to_bytes()) {
                states.push(next);
            }
        }
        at += 1;
    }
    assert!(world.fault().is_none());
    states
}

/// What `state` holds but its ghost variables, as bytes: every part the
/// inspection view shows.
fn without_vars(world: &World, state: &WorldState) -> Vec<u8> {
    let view = world.inspect(state);
    let mut bytes = Vec::new();
    for node in 0..view.nodes() {
        view.node(node).env.encode(&mut bytes);
    }
    for packet in view.messages() {
        let (count, surplus, len) = (packet.count, u8::from(packet.surplus), packet.msg.len());
        bytes.extend([packet.src, packet.dst, count, surplus, len as u8]);
        bytes.extend_from_slice(packet.msg);
    }
    let nodes = view.nodes() as u8;
    for (src, dst) in (0..nodes).flat_map(|src| (0..nodes).map(move |dst| (src, dst))) {
        bytes.push(u8::from(view.link_up(src, dst)));
    }
    bytes.extend(BUDGET_NAMES.map(|(_, budget, _)| view.budget(budget)));
    bytes.push(view.issued());
    GhostEntry::encode_slice(view.ghost(), &mut bytes);
    bytes.extend_from_slice(view.lost_in_crash());
    bytes
}

#[test]
fn the_ghost_splits_states_by_the_votes_it_remembers_and_changes_nothing_else() {
    let (plain_world, ghost_world) = (
        without_ghost_in(0, &TWO_TERMS),
        raft::world(0, 2, &TWO_TERMS).unwrap(),
    );
    let plain = reachable(&plain_world);
    let ghost = reachable(&ghost_world);
    // Ghost variables are part of the state: a state of the plain World
    // reached along histories of different votes is several states.
    assert_eq!((plain.len(), ghost.len()), (66_138, 66_166));
    let plain: HashSet<Vec<u8>> = plain
        .iter()
        .map(|s| without_vars(&plain_world, s))
        .collect();
    let projected: HashSet<Vec<u8>> = ghost
        .iter()
        .map(|s| without_vars(&ghost_world, s))
        .collect();
    assert_eq!(projected, plain, "the ghost World reaches the same states");
    let votes = |state| {
        ghost_world
            .inspect(state)
            .ghost_var(raft::votes::VOTES)
            .map(<[u8]>::len)
    };
    assert!(ghost.iter().all(|state| votes(state) == Some(2 * 5)));
}

#[test]
fn successors_copied_from_their_parents_carry_the_updated_ghost() {
    // A FLUSH that makes a vote durable changes the ghost and no other
    // field after the network: the copy of the parent's bytes must not
    // keep the parent's ghost.
    let concluded = check_determinism(with_ghost(0), 30);
    assert_eq!(concluded.verdict.as_str(), "pass");
    let three = raft::world(0, 3, &["cfg0=2", "cfg1=3", "requests=0"]).unwrap();
    assert_eq!(check_determinism(three, 12).verdict.as_str(), "pass");
}
