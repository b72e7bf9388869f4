//! omnipaxos 0.2.0 decides different entries at two servers along the
//! schedule of upstream pull request 112; 0.2.1 keeps agreement along the
//! same schedule (`../tests/fixed.rs`).

use cmc_search::{Checker, Verdict};
use cmc_target_omnipaxos::scenario::{drive, ACCEPT_SYNC_SCHEDULE, LATE_STEPS};
use cmc_target_omnipaxos::{world, BUG_CONFIGURATION};

#[test]
fn release_0_2_0_decides_different_prefixes_along_the_accept_sync_schedule() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let (states, violated) = drive(&world, ACCEPT_SYNC_SCHEDULE).unwrap();
    eprintln!("{} steps, {violated:?}", states.len());
    assert_eq!(violated.as_deref(), Some("DecidedPrefixesAgree"));
}

#[test]
fn from_a_late_state_of_the_schedule_a_search_finds_the_shortest_loss() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let (states, violated) = drive(&world, &ACCEPT_SYNC_SCHEDULE[..LATE_STEPS]).unwrap();
    assert_eq!(violated, None);
    let world = world.starting_at(states.last().unwrap().clone());
    let outcome = Checker::new(world).workers(1).run();
    match &outcome.verdict {
        Verdict::Violated { property, .. } => assert_eq!(property, "DecidedPrefixesAgree"),
        other => panic!("expected DecidedPrefixesAgree to be violated, got {other:?}"),
    }
    // The start, then Accepted, its flush, Decide: the schedule's own end.
    assert_eq!(outcome.counterexample.map(|trace| trace.len()), Some(4));
}
