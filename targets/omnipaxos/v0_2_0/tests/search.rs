//! omnipaxos 0.2.0's `AcceptSync` bug found by a search from the initial
//! state, with no schedule: random walks in [`SEARCH_CONFIGURATION`] (two
//! appends, three election rounds, a crash and a restart) reach two servers
//! that decided different entries, and the walk's run is then shrunk to a
//! locally minimal one. omnipaxos 0.2.1 passes the same walks
//! (`../tests/fixed.rs`).

use cmc_search::Verdict;
use cmc_target_omnipaxos::scenario::{replay_until, shrink};
use cmc_target_omnipaxos::{walks, world, SEARCH_CONFIGURATION};
use cmc_world::system::action::Action;

#[test]
fn random_walks_from_the_initial_state_find_two_servers_deciding_differently() {
    let start = std::time::Instant::now();
    let outcome = walks(world(&SEARCH_CONFIGURATION).unwrap()).run();
    let walks = outcome.stats.walks.as_ref().map(|w| w.walks);
    eprintln!(
        "{:?} after {walks:?} walk(s), {:?}",
        outcome.verdict,
        start.elapsed()
    );
    match &outcome.verdict {
        Verdict::Violated { property, .. } => assert_eq!(property, "DecidedPrefixesAgree"),
        other => panic!("expected DecidedPrefixesAgree to be violated, got {other:?}"),
    }
    let walk: Vec<Action> = outcome
        .counterexample
        .expect("a violation comes with its run")
        .steps
        .iter()
        .filter_map(|step| step.action)
        .collect();

    let world = world(&SEARCH_CONFIGURATION).unwrap();
    let shrunk = shrink(&world, &walk, "DecidedPrefixesAgree").expect("the walk replays");
    eprintln!(
        "the walk's {} actions shrunk to {} ({:?})",
        walk.len(),
        shrunk.len(),
        start.elapsed()
    );
    for (index, action) in shrunk.iter().enumerate() {
        eprintln!(
            "{:3}: {}",
            index + 1,
            cmc_model::Model::format_action(&world, action)
        );
    }
    assert!(shrunk.len() < walk.len());
    // The shrunk run, replayed exactly, ends in the violation and not before.
    assert_eq!(
        replay_until(&world, &shrunk, "DecidedPrefixesAgree").map(|run| run.len()),
        Some(shrunk.len())
    );
}
