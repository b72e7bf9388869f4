//! A property over a ghost variable from the command line: Raft's
//! `VoteOnce` catches planted bug 3 (a restarted server forgets its vote
//! and votes again in the same term), and the replay file shows the ghost
//! variable `Votes` step by step.

mod common;

use common::cmc_exiting;

#[test]
fn a_forgotten_vote_is_caught_and_replayed_with_the_ghost_that_remembers_it() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = cmc_exiting(
        &[
            "check",
            "--core",
            "rust:raft-bug3",
            "--nodes",
            "2",
            "cfg0=1",
            "requests=0",
            "crashes=1",
            "restarts=1",
            "crash_nodes=1",
            "--no-deadlock",
            "--replay-out",
            "votes.cmc",
        ],
        dir.path(),
        1,
    );
    assert!(
        stdout.contains("Invariant VoteOnce is violated"),
        "{stdout}"
    );
    let (replayed, _) = cmc_exiting(&["replay", "votes.cmc"], dir.path(), 1);
    assert!(replayed.contains("VoteOnce"), "{replayed}");
    // Server 1's own vote, made durable, is remembered through its crash.
    assert!(
        replayed.contains("changed ghost.Votes[n1] none  =>  t1->n1"),
        "{replayed}"
    );
    assert!(replayed.contains("CRASH n1"), "{replayed}");
}
