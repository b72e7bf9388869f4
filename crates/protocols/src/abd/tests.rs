//! The ABD core in small configurations: the control passes with a crash and
//! a restart, with and without symmetry reduction; the shallow planted bugs
//! are caught by their properties; the history decoder.

use cmc_linearizability::specs::{RegisterOp, RegisterRet};
use cmc_search::{Checker, Outcome, Verdict};
use cmc_world::properties::consistency::ReplyMeaning;
use cmc_world::World;

use super::properties::{operation, reply_meaning};
use super::{world, REPLY_BUSY, REPLY_OK};

fn run(bug: u32, params: &[&str]) -> Outcome<World> {
    let checker = Checker::new(world(bug, 5, params).unwrap())
        .workers(2)
        .check_deadlock(false)
        .check_determinism(true);
    let outcome = checker.run();
    assert!(
        checker.model().fault().is_none(),
        "{:?}",
        checker.model().fault()
    );
    outcome
}

fn violated(outcome: &Outcome<World>) -> &str {
    match &outcome.verdict {
        Verdict::Violated { property, .. } => property,
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[test]
fn the_control_passes_through_a_replica_crash_and_restart() {
    let crash = ["requests=1", "crash_nodes=0,1,2", "crashes=1", "restarts=1"];
    let plain = run(0, &crash);
    assert_eq!(plain.verdict, Verdict::Pass);
    let reduced = run(0, &[&crash[..], &["symmetry=0,1,2"]].concat());
    assert_eq!(reduced.verdict, Verdict::Pass);
    assert_eq!(reduced.stats.depth, plain.stats.depth);
    assert!(reduced.stats.distinct_states * 3 < plain.stats.distinct_states);
}

#[test]
fn an_off_by_one_quorum_gives_a_stale_read_with_or_without_symmetry() {
    let plain = run(2, &["requests=2"]);
    let reduced = run(2, &["requests=2", "symmetry=0,1,2"]);
    for outcome in [&plain, &reduced] {
        assert_eq!(violated(outcome), "Linearizable");
    }
    let len = |outcome: &Outcome<World>| outcome.counterexample.as_ref().unwrap().len();
    assert_eq!(len(&plain), len(&reduced));
}

#[test]
fn a_read_keeping_the_first_reply_is_not_linearizable() {
    assert_eq!(
        violated(&run(3, &["requests=2", "symmetry=0,1,2"])),
        "Linearizable"
    );
}

#[test]
fn an_ack_before_the_flush_violates_reply_after_flush() {
    assert_eq!(violated(&run(5, &["requests=1"])), "ReplyAfterFlush");
}

#[test]
fn replies_decode_as_register_results_and_busy_is_refused() {
    let ret = |op, reply: &[u8]| reply_meaning(&op, reply);
    assert_eq!(operation(0, 3), RegisterOp::Write(1));
    assert_eq!(operation(1, 3), RegisterOp::Read);
    assert_eq!(
        ret(RegisterOp::Read, &[REPLY_OK, 3]),
        ReplyMeaning::Returned(RegisterRet::Value(3))
    );
    assert_eq!(
        ret(RegisterOp::Write(1), &[REPLY_OK]),
        ReplyMeaning::Returned(RegisterRet::Ack)
    );
    assert_eq!(ret(RegisterOp::Read, &[REPLY_BUSY]), ReplyMeaning::Refused);
    assert_eq!(
        ret(RegisterOp::Read, &[REPLY_OK]),
        ReplyMeaning::Returned(RegisterRet::Ack),
        "a read without a value is a wrong answer"
    );
}
