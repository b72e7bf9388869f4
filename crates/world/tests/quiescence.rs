//! Bounded liveness: a retransmission that is never sent (reqack bug 3) keeps
//! the timer firing forever, so the safety search (deadlock check included)
//! passes, and only the quiescence check catches it.

use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::system::quiescence::QUIESCENCE;
use cmc_world::{World, WorldSpec};

fn world(bug: u32, extra: &[&str]) -> World {
    let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), 2).unwrap();
    spec.set_all(&["requests=1", "drops=1"]).unwrap();
    spec.set_all(extra).unwrap();
    World::new(spec).with_properties(reqack::properties())
}

#[test]
fn missed_retransmission_is_not_a_deadlock() {
    let outcome = Checker::new(world(3, &[])).workers(2).run();
    assert_eq!(outcome.verdict, Verdict::Pass);
}

#[test]
fn missed_retransmission_is_caught_by_quiescence() {
    let checker = Checker::new(world(3, &["quiescence=20"])).workers(1);
    let outcome = checker.run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == QUIESCENCE),
        "{:?}",
        outcome.verdict
    );
    let trace = outcome
        .counterexample
        .as_ref()
        .expect("a path to the state");
    let state = trace.last_state().expect("non-empty");
    let run = checker.model().fair_run(state).expect("budgets are spent");
    assert!(!run.reached && !run.stuck);
    let text = run.to_string();
    let report = cmc_search::Report::new(checker.model(), checker.search_options(), &outcome);
    let unanswered = checker.model().explain_unanswered(&run.end);
    assert_eq!(
        unanswered,
        "unanswered client requests:\n  r0 sent to n0: n0 is up and has not answered it\n"
    );
    assert_eq!(
        report.explanation,
        Some(format!("{text}{unanswered}")),
        "reports carry the fair run and the unanswered requests"
    );
    assert!(
        text.contains("did not reach (step bound hit) goal `every client replied`"),
        "{text}"
    );
    assert!(text.contains("FIRE n0 timer=0"), "{text}");
}

#[test]
fn correct_protocol_is_quiescent_under_faults() {
    let faults = ["quiescence=30", "crashes=1", "restarts=1", "crash_nodes=1"];
    let checker = Checker::new(world(0, &faults)).workers(2);
    assert_eq!(checker.run().verdict, Verdict::Pass);
    // A bound too small for the protocol's round trips is reported too.
    let tight = Checker::new(world(0, &["quiescence=2"])).workers(2);
    assert!(matches!(tight.run().verdict, Verdict::Violated { .. }));
}
