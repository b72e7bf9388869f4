//! Primary-backup beyond the gate's one request: with two requests, a crash
//! and a restart, the control passes and every planted bug is still caught by
//! the property the gate expects. Two requests give the control two Appends
//! of one view to reorder, and a primary that crashes between them; before
//! the fix, a backup adopted the older, shorter log after acking the longer
//! one (10 states), and node 0, restarted as the primary of view 0, counted
//! a backup's ack of the log it lost in the crash for the new log it wrote
//! in its place (9 states).

mod common;

use cmc_protocols::primary_backup;

/// Checks variant `bug` on 3 nodes with two requests, a crash and a restart,
/// to `max_depth`: the violated property (or "pass") and the distinct states.
fn check(bug: u32, max_depth: u64) -> (String, u64) {
    let params = ["requests=2", "crashes=1", "restarts=1"];
    let world = primary_backup::world(bug, 3, &params).unwrap();
    let concluded = common::check(world, max_depth);
    (concluded.verdict, concluded.states)
}

/// The control's depth bound: beyond both counterexamples the control had
/// (9 and 10 states). To depth 40 it passes too, in 18.4 million states.
const CONTROL_DEPTH: u64 = 14;

#[test]
fn the_control_passes_with_two_requests_a_crash_and_a_restart() {
    let (verdict, states) = check(0, CONTROL_DEPTH);
    eprintln!("control: {verdict}, {states} distinct states");
    assert_eq!(verdict, "pass");
}

#[test]
fn every_planted_bug_is_still_caught_with_two_requests() {
    for (bug, expected) in [
        (1, "CommittedSurvives"),
        (2, "CommittedSurvives"),
        (3, "OnePrimaryPerView"),
        (4, "CommittedSurvives"),
    ] {
        let (verdict, states) = check(bug, 30);
        eprintln!("bug {bug}: {verdict} after {states} distinct states");
        assert_eq!(verdict, expected, "bug {bug}");
    }
}
