//! raft-rs 0.7 keeps every log-replication property in every run of up to
//! 15 World steps with three peers, one client proposal, two ticks (an
//! election), one crash and its restart, and one dropped message. The
//! search is cut at that depth and says so (a value is decided within it): it is a bounded check, not a
//! complete one.

use cmc_search::test_support::print_outcome;
use cmc_search::{Checker, Verdict};
use cmc_target_raft_rs::{world, RaftAdapter};

const CONFIGURATION: [&str; 5] = [
    "requests=1",
    "ticks=2",
    "crashes=1",
    "restarts=1",
    "drops=1",
];

#[test]
fn raft_0_7_keeps_every_property_up_to_depth_15() {
    let start = std::time::Instant::now();
    let world = world(RaftAdapter::default(), &CONFIGURATION).unwrap();
    let outcome = Checker::new(world)
        .workers(2)
        .max_depth(15)
        .check_deadlock(false)
        .check_determinism(true)
        .run();
    print_outcome(&outcome, start);
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert!(
        !outcome.stats.complete,
        "cut at depth 15, never reported complete"
    );
}
