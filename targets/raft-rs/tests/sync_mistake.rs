//! raft 0.5.0's mistake (a ready that appends entries but changes no term
//! or vote did not need a sync), planted in the adapter's sync handling as
//! [`RaftAdapter::sync_ignores_entries`], is found by a breadth-first
//! search from the initial state with one proposal, three ticks, a crash
//! and a restart: a follower acknowledges an entry it has not synced,
//! crashes and restarts without it, and the leader, which counted the
//! acknowledgement, tells it the entry is committed; raft-rs itself stops
//! there (`to_commit 1 is out of range`), and a panic inside the library is
//! the counterexample. With the adapter as raft-rs's contract asks, no
//! property fails and the library never stops in any run of the same
//! configuration as deep (no client entry is committed that early, so the
//! witness `ValueDecided` is not reached there: `bounded.rs` reaches it).

use cmc_search::test_support::print_outcome;
use cmc_search::{Checker, Verdict};
use cmc_target_raft_rs::{world, RaftAdapter};
use cmc_world::core::fault::FaultKind;

const CONFIGURATION: [&str; 4] = ["requests=1", "ticks=3", "crashes=1", "restarts=1"];

fn search(adapter: RaftAdapter, max_depth: Option<u64>) -> Checker<cmc_world::World> {
    let checker = Checker::new(world(adapter, &CONFIGURATION).unwrap())
        .workers(1)
        .check_deadlock(false);
    match max_depth {
        Some(depth) => checker.max_depth(depth),
        None => checker,
    }
}

#[test]
fn a_follower_that_acknowledges_unsynced_entries_loses_a_committed_entry() {
    let start = std::time::Instant::now();
    let checker = search(
        RaftAdapter {
            sync_ignores_entries: true,
        },
        None,
    );
    let outcome = checker.run();
    print_outcome(&outcome, start);
    let fault = checker
        .model()
        .fault()
        .expect("the search stops at the library's panic");
    match &fault.kind {
        FaultKind::CoreError(why) => assert!(
            why.contains("panicked") && why.contains("to_commit 1 is out of range [last_index 0]"),
            "{why}"
        ),
        other => panic!("expected raft-rs's own panic, got {other:?}"),
    }
    assert!(fault.action.contains("MsgHeartbeat"), "{}", fault.action);
    assert!(!outcome.verdict.is_pass());

    // The contract kept: nothing fails in any run as deep as the one that
    // found the mistake.
    let depth = outcome.stats.depth;
    let checker = search(RaftAdapter::default(), Some(depth)).check_determinism(true);
    let outcome = checker.run();
    print_outcome(&outcome, start);
    assert_eq!(checker.model().fault(), None);
    assert_eq!(
        outcome.verdict,
        Verdict::Vacuous {
            properties: vec!["ValueDecided".into()]
        }
    );
}
