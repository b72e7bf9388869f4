//! Symmetry reduction over reqack's interchangeable receivers: the same
//! verdicts and shortest counterexample lengths with it on and off, on fewer
//! states; the reduction factor is printed (`--nocapture`).

use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::cores::reqack::{self, ReqAck};
use cmc_world::{World, WorldSpec};

fn run(bug: u32, params: &[&str], symmetry: bool) -> (Verdict, u64, usize) {
    let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), 3).unwrap();
    spec.set_all(params).unwrap();
    spec.set("symmetry", if symmetry { "1,2" } else { "off" })
        .unwrap();
    let world = World::new(spec).with_properties(reqack::properties());
    // The planted bugs are safety violations; a crashed sender with three
    // nodes also hangs, found first, which would hide them.
    let checker = Checker::new(world).workers(1).check_deadlock(bug == 0);
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    let length = outcome
        .counterexample
        .as_ref()
        .map_or(0, |trace| trace.len());
    (outcome.verdict, outcome.stats.distinct_states, length)
}

const CRASH_RECEIVERS: &[&str] = &["requests=1", "crashes=1", "restarts=1", "crash_nodes=1,2"];

#[test]
fn same_verdicts_with_and_without_symmetry() {
    let cases: [(u32, &[&str], Option<&str>); 4] = [
        (
            0,
            &[
                "requests=2",
                "dups=1",
                "crashes=1",
                "restarts=1",
                "crash_nodes=1,2",
            ],
            None,
        ),
        (0, &["requests=2", "drops=1", "net=fifo"], None),
        (
            1,
            &["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"],
            Some("AtMostOneReply"),
        ),
        (2, CRASH_RECEIVERS, Some("AckedIsDurable")),
    ];
    for (bug, params, expected) in cases {
        let (off, off_states, off_length) = run(bug, params, false);
        let (on, on_states, on_length) = run(bug, params, true);
        match expected {
            None => assert_eq!(off, Verdict::Pass, "bug {bug} {params:?}"),
            Some(name) => assert!(
                matches!(&off, Verdict::Violated { property, .. } if property == name),
                "bug {bug}: {off:?}"
            ),
        }
        assert_eq!(off, on, "bug {bug} {params:?}");
        assert_eq!(off_length, on_length, "shortest counterexamples, bug {bug}");
        println!(
            "bug {bug} {params:?}: {off_states} distinct states off, {on_states} on, reduction {:.2}x",
            off_states as f64 / on_states as f64
        );
        if expected.is_none() {
            assert!(
                on_states * 3 < off_states * 2,
                "symmetry must reduce a passing run"
            );
        }
    }
}

#[test]
fn symmetry_refuses_nodes_that_differ() {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    let why = spec
        .set_all(&["crash_nodes=1", "symmetry=1,2"])
        .unwrap_err()
        .to_string();
    assert!(why.contains("not interchangeable"), "{why}");
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    assert!(spec
        .set("symmetry", "1,7")
        .unwrap_err()
        .to_string()
        .contains("node 7"));
}
