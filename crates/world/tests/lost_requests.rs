//! Faults end before progress is judged, and a request lost with its node
//! is explained, not a hang: a correct core passes under crashes and
//! partitions, with and without the quiescence check, while reqack's planted
//! bugs are still caught.

mod common;

use std::sync::Arc;

use cmc_model::Model;
use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::system::action::{Action, ClientAction, CrashAction, LinkAction};
use cmc_world::system::quiescence::QUIESCENCE;
use cmc_world::{World, WorldSpec};

fn world(bug: u32, nodes: usize, params: &[&str]) -> World {
    let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), nodes).unwrap();
    spec.set_all(params).unwrap();
    World::new(spec).with_properties(reqack::properties())
}

fn verdict(bug: u32, nodes: usize, params: &[&str]) -> Verdict {
    let checker = Checker::new(world(bug, nodes, params)).workers(2);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None, "{params:?}");
    outcome.verdict
}

fn violated(verdict: &Verdict) -> Option<&str> {
    match verdict {
        Verdict::Violated { property, .. } => Some(property),
        _ => None,
    }
}

#[test]
fn quiescence_is_judged_after_links_heal() {
    // Before: a link cut for good left the request unanswered: a false
    // quiescence violation.
    let params = ["requests=1", "partitions=1", "quiescence=30"];
    assert_eq!(verdict(0, 2, &params), Verdict::Pass);
    let with_drop = ["requests=1", "partitions=1", "drops=1", "quiescence=30"];
    assert_eq!(verdict(0, 2, &with_drop), Verdict::Pass);
    // Bug 3 never retransmits a dropped DATA: still caught.
    assert_eq!(violated(&verdict(3, 2, &with_drop)), Some(QUIESCENCE));
}

#[test]
fn quiescence_is_judged_after_crashed_nodes_restart() {
    // Before: a node crashed for good (restarts=0) could not make progress:
    // a false quiescence violation.
    for crash_nodes in ["crash_nodes=0,1", "crash_nodes=1"] {
        let params = ["requests=1", "crashes=1", crash_nodes, "quiescence=30"];
        assert_eq!(verdict(0, 2, &params), Verdict::Pass, "{params:?}");
    }
    // A receiver crash loses its unflushed store; bug 3 never retransmits
    // the DATA it needs again: still caught.
    let receiver = ["requests=1", "crashes=1", "crash_nodes=1", "quiescence=30"];
    assert_eq!(violated(&verdict(3, 2, &receiver)), Some(QUIESCENCE));
}

#[test]
fn a_fair_run_shows_the_repairs() {
    let world = world(0, 2, &["requests=1", "partitions=1", "quiescence=30"]);
    let initial = common::initial_state(&world);
    let cut = Action::Link(LinkAction::Pair {
        a: 0,
        b: 1,
        cut: true,
    });
    let state = world.next_state(&initial, &cut).expect("a cut is enabled");
    let run = world.fair_run(&state).expect("every fault budget is spent");
    assert!(run.reached, "{run}");
    assert_eq!(run.actions[0], "LINKS heal n0-n1", "{run}");
}

/// The README's World example on two nodes (three take 25 s; see the
/// crate README for its figures): the sender may crash with a request
/// open, and the correct core passes with the deadlock check on.
const CRASHES: &[&str] = &["requests=2", "drops=1", "crashes=1", "restarts=1"];

#[test]
fn a_request_lost_with_its_node_is_not_a_hang() {
    // Before: CLIENT r0, CRASH n0 before its persist was flushed, RESTART
    // n0: nothing left to do and r0 unanswered, reported as a deadlock.
    assert_eq!(verdict(0, 2, CRASHES), Verdict::Pass);
}

#[test]
fn planted_bugs_are_still_caught_with_crashes_of_the_client_node() {
    assert_eq!(violated(&verdict(1, 2, CRASHES)), Some("AtMostOneReply"));
    assert_eq!(violated(&verdict(2, 2, CRASHES)), Some("AckedIsDurable"));
}

#[test]
fn the_lost_request_is_explained() {
    let world = world(0, 2, &["requests=1", "crashes=1", "restarts=1"]);
    let initial = common::initial_state(&world);
    let steps = [
        Action::Client(ClientAction::Request {
            request: 0,
            node: 0,
            op: 0,
        }),
        Action::Crash(CrashAction::Crash { node: 0 }),
    ];
    let crashed = steps.iter().fold(initial.clone(), |state, action| {
        world.next_state(&state, action).expect("enabled")
    });
    assert_eq!(
        world.explain_unanswered(&crashed),
        "unanswered client requests:\n  r0 sent to n0: lost with n0, which crashed while it was \
         open and is still down (the client saw its connection break; no reply is owed)\n"
    );
    let restarted = world
        .next_state(&crashed, &Action::Crash(CrashAction::Restart { node: 0 }))
        .expect("enabled");
    let mut actions = Vec::new();
    world.actions(&restarted, &mut actions);
    assert!(actions.is_empty(), "{actions:?}");
    assert!(
        world.is_terminal(&restarted),
        "a legitimate end, not a hang"
    );
    assert!(world
        .explain_unanswered(&restarted)
        .contains("restarted without answering it"));
}

#[test]
fn a_hang_names_the_unanswered_request() {
    // An unanswered request at a live node with nothing left to do (here
    // the state right after CLIENT, taken as if it were final) is a hang,
    // and the deadlock report names it.
    let world = world(0, 2, &["requests=1", "partitions=1"]);
    let initial = common::initial_state(&world);
    let client = Action::Client(ClientAction::Request {
        request: 0,
        node: 0,
        op: 0,
    });
    let state = world.next_state(&initial, &client).expect("enabled");
    assert!(!world.is_terminal(&state));
    assert_eq!(
        world.explain_unanswered(&state),
        "unanswered client requests:\n  r0 sent to n0: n0 is up and has not answered it\n"
    );
    assert_eq!(
        world.explain_violation("deadlock", &state),
        Some(world.explain_unanswered(&state))
    );
}

#[test]
fn requests_that_cannot_be_issued_are_explained() {
    // Before: the client node crashed for good before any request, and the
    // World reported a deadlock it could not explain.
    let world = world(0, 2, &["requests=2", "crashes=1"]);
    let initial = common::initial_state(&world);
    assert_eq!(
        world.explain_unanswered(&initial),
        "unanswered client requests:\n  r0..r1: not issued\n"
    );
    assert!(!world.is_terminal(&initial));
    let crashed = world
        .next_state(&initial, &Action::Crash(CrashAction::Crash { node: 0 }))
        .expect("enabled");
    assert_eq!(
        world.explain_unanswered(&crashed),
        "unanswered client requests:\n  r0..r1: not issued: every client node is down (n0)\n"
    );
    assert!(world.is_terminal(&crashed), "nobody can send a request");
    assert_eq!(verdict(0, 2, &["requests=1", "crashes=1"]), Verdict::Pass);
}
