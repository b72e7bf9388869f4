//! The ABD core in small configurations: the control passes with a crash and
//! a restart, with and without symmetry reduction; the shallow planted bugs
//! are caught by their properties; the history decoder; the node ids a state
//! holds cover what renaming changes.

use cmc_linearizability::specs::{RegisterOp, RegisterRet};
use cmc_search::{Checker, Outcome, Verdict};
use cmc_world::core::abi::Config;
use cmc_world::core::helpers::node_bit;
use cmc_world::properties::consistency::ReplyMeaning;
use cmc_world::{TypedCore, World};

use super::properties::{operation, reply_meaning};
use super::{phase, world, Abd, Durable, Msg, Timestamp, Volatile, REPLY_OK, REPLY_REFUSED};

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
    assert_eq!(
        ret(RegisterOp::Read, &[REPLY_REFUSED]),
        ReplyMeaning::Refused
    );
    assert_eq!(
        ret(RegisterOp::Read, &[REPLY_OK]),
        ReplyMeaning::Returned(RegisterRet::Ack),
        "a read without a value is a wrong answer"
    );
}

/// Every renaming of five nodes that moves none of the ids `node_ids` gives
/// leaves a state unchanged in `permute` (which symmetry reduction then
/// skips), for replica and client states with every renamed field in use.
#[test]
fn renamings_that_fix_the_node_ids_leave_a_state_unchanged() {
    let ts = |counter, writer| Timestamp { counter, writer };
    let mut replica = Volatile {
        ts: ts(3, 4),
        value: 5,
        ..Volatile::default()
    };
    let ack = Msg::StoreOk {
        request: 1,
        ts: ts(2, 3),
    };
    replica.pending.hold(4, &ack).unwrap();
    replica.pending.hold_nothing().unwrap();
    let store = Msg::Store {
        request: 0,
        ts: ts(1, 1),
        value: 1,
    };
    replica.pending.hold(3, &store).unwrap();
    let client = Volatile {
        request: 1,
        phase: phase::STORE,
        replies: 0b101,
        best: ts(2, 3),
        best_value: 1,
        lowest: ts(1, 0),
        writes: 1,
        ..Volatile::default()
    };
    let durable = Durable {
        ts: ts(2, 4),
        value: 1,
    };
    let states = [
        (Durable::default(), Volatile::default()),
        (durable, replica),
        (Durable::default(), client),
    ];
    let config = Config {
        node: 0,
        nodes: 5,
        params: [0; 8],
    };
    let core = Abd::<0>;
    let mut skipped = 0;
    for (durable, volatile) in states {
        let ids = core.node_ids(&config, &durable, &volatile);
        for perm in permutations(5) {
            let moved = (0..5u32)
                .filter(|&old| perm[old as usize] != old)
                .fold(0, |moved, old| moved | node_bit(old));
            let (mut d, mut v) = (durable, volatile);
            assert!(core.permute(&config, &mut d, &mut v, &perm));
            if ids & moved == 0 {
                assert_eq!((d, v), (durable, volatile), "{perm:?} fixes {ids:#b}");
                skipped += 1;
            }
        }
    }
    assert!(
        skipped > 120,
        "{skipped}: the initial state's every renaming, and more"
    );
}

/// Every permutation of `0..n`.
fn permutations(n: u32) -> Vec<Vec<u32>> {
    match n {
        0 => vec![Vec::new()],
        _ => permutations(n - 1)
            .into_iter()
            .flat_map(|perm| {
                (0..n as usize).map(move |at| {
                    let mut longer = perm.clone();
                    longer.insert(at, n - 1);
                    longer
                })
            })
            .collect(),
    }
}
