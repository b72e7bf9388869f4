//! omnipaxos 0.2.0 decides different entries at two servers along the
//! schedule of upstream pull request 112; 0.2.1 keeps agreement along the
//! same schedule (`../tests/fixed.rs`).

use cmc_search::Checker;
use cmc_target_omnipaxos::scenario::{drive, ACCEPT_SYNC_SCHEDULE, SYNC_SENT_STEPS};
use cmc_target_omnipaxos::{world, BUG_CONFIGURATION};

#[test]
fn release_0_2_0_decides_different_prefixes_along_the_accept_sync_schedule() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let (states, violated) = drive(&world, ACCEPT_SYNC_SCHEDULE).unwrap();
    eprintln!("{} steps, {violated:?}", states.len());
    assert_eq!(violated.as_deref(), Some("DecidedPrefixesAgree"));
}

#[test]
fn from_the_second_election_a_search_finds_the_shortest_loss() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let (states, violated) = drive(&world, &ACCEPT_SYNC_SCHEDULE[..SYNC_SENT_STEPS]).unwrap();
    assert_eq!(violated, None);
    let start = std::time::Instant::now();
    let world = world.starting_at(states.last().unwrap().clone());
    let outcome = Checker::new(world).workers(1).run();
    eprintln!(
        "{:?} {:?} {:?} {:?}",
        outcome.verdict,
        outcome.stats,
        outcome.counterexample.as_ref().map(|c| c.len()),
        start.elapsed()
    );
}
