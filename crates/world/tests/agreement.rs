//! The Rust and C versions of `reqack` are the same protocol: under the same
//! environment they reach exactly the same states, and the planted bugs are
//! caught in both.

mod common;

use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::{reqack, reqack_c};
use cmc_world::{CCore, Core, World, WorldSpec};

fn spec(core: Arc<dyn Core>, nodes: usize, params: &[&str]) -> WorldSpec {
    let mut spec = WorldSpec::new(core, nodes).unwrap();
    spec.set_all(params).unwrap();
    spec
}

fn world(core: Arc<dyn Core>, nodes: usize, params: &[&str]) -> World {
    let world = World::new(spec(core, nodes, params));
    reqack::properties()
        .into_iter()
        .fold(world, World::with_property)
}

fn so(name: &str) -> Arc<dyn Core> {
    Arc::new(CCore::load(&common::fixture(name)).unwrap())
}

const FAULTY: &[&str] = &[
    "requests=2",
    "drops=1",
    "crashes=1",
    "restarts=1",
    "crash_nodes=1",
];

#[test]
fn rust_and_c_agree_on_counts() {
    let configurations: [(usize, &[&str]); 3] = [
        (2, FAULTY),
        (
            3,
            &[
                "requests=2",
                "dups=1",
                "crashes=1",
                "restarts=1",
                "crash_nodes=1",
            ],
        ),
        (
            2,
            &[
                "requests=2",
                "net=fifo",
                "drops=1",
                "partitions=2",
                "ticks=1",
            ],
        ),
    ];
    for (nodes, params) in configurations {
        let cores: [Arc<dyn Core>; 3] = [
            Arc::new(reqack::ReqAck::default()),
            Arc::new(reqack_c()),
            so("libreqack.so"),
        ];
        let counts: Vec<(u64, u64)> = cores
            .into_iter()
            .map(|core| {
                let world = world(core, nodes, params);
                let checker = Checker::new(world).workers(2);
                let outcome = checker.run();
                assert_eq!(checker.model().fault(), None, "{nodes} nodes {params:?}");
                assert_eq!(outcome.verdict, Verdict::Pass, "{nodes} nodes {params:?}");
                (outcome.stats.distinct_states, outcome.stats.depth)
            })
            .collect();
        println!("{nodes} nodes {params:?}: rust, c linked, c .so = {counts:?}");
        assert!(counts[0].0 > 100, "the configuration explores something");
        assert_eq!(counts[0], counts[1]);
        assert_eq!(counts[0], counts[2]);
    }
}

#[test]
fn planted_bugs_are_caught_in_both_languages() {
    const CRASH_SENDER: &[&str] = &["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"];
    const CRASH_RECEIVER: &[&str] = &["requests=1", "crashes=1", "restarts=1", "crash_nodes=1"];
    type Case = (
        Arc<dyn Core>,
        Arc<dyn Core>,
        &'static [&'static str],
        &'static str,
    );
    let cases: [Case; 2] = [
        (
            Arc::new(reqack::ReqAck { bug: 1 }),
            so("libreqack_bug1.so"),
            CRASH_SENDER,
            "AtMostOneReply",
        ),
        (
            Arc::new(reqack::ReqAck { bug: 2 }),
            so("libreqack_bug2.so"),
            CRASH_RECEIVER,
            "AckedIsDurable",
        ),
    ];
    for (rust, c, params, property) in cases {
        let lengths: Vec<usize> = [rust, c]
            .into_iter()
            .map(|core| {
                // A sender crash before its persist is flushed loses the request
                // with the node: a legitimate end, so the deadlock check stays on.
                let outcome = Checker::new(world(core, 2, params)).workers(1).run();
                match &outcome.verdict {
                    Verdict::Violated {
                        property: found, ..
                    } => assert_eq!(found, property),
                    other => panic!("expected {property} to fail, got {other:?}"),
                }
                outcome.counterexample.unwrap().len()
            })
            .collect();
        assert_eq!(
            lengths[0], lengths[1],
            "same shortest counterexample for {property}"
        );
    }
}
