//! canonical/raft 0.15.0, Debian's `libraft.so.2` unchanged, checked
//! through its C heap-state adapter (targets/canonical-raft): loaded by
//! `build_world` like any `--core` library, its C properties attached, and
//! every call the library makes to libc for time answered by cmc.
//!
//! Needs `libraft-dev` and a C compiler (scripts/setup.sh installs both).

mod canonical_raft_build;

use std::path::Path;

use canonical_raft_build::{adapter, one_adapter_at_a_time, world};
use cmc_search::{Checker, Verdict};

#[test]
fn three_nodes_with_one_timeout_pass_every_raft_property_exhaustively() {
    let _alone = one_adapter_at_a_time();
    let library = adapter("pass", &[]);
    // One election timeout in all: one leader, one term change, one client
    // command replicated and committed (the witness CommandCommitted).
    let params = ["ticks=1", "requests=1", "clients=0,1,2"];
    let check = |workers| {
        let outcome = Checker::new(world(&library, &params))
            .workers(workers)
            .check_deadlock(false)
            .run();
        assert_eq!(outcome.verdict, Verdict::Pass, "{:?}", outcome.verdict);
        assert!(outcome.stats.complete, "the search is exhaustive");
        outcome.stats.distinct_states
    };
    // Each node rebuilt by replaying its journal: the counts do not depend
    // on which worker replays what.
    assert_eq!(check(1), check(2));
}

#[test]
fn figure_8_counterexample_shows_a_leader_committing_an_earlier_term_by_counting() {
    let _alone = one_adapter_at_a_time();
    let library = adapter("figure8", &[]);
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../targets/canonical-raft/figure8.cmc-trace");
    let text = std::fs::read_to_string(&trace).expect("the pinned counterexample");
    let mut file = cmc_search::ReplayFile::parse(&text).expect("a replay file");
    let params: Vec<String> = file
        .params
        .iter()
        .filter(|p| !["nodes", "core", "core_digest"].contains(&p.name.as_str()))
        .map(|p| format!("{}={}", p.name, p.value))
        .collect();
    let params: Vec<&str> = params.iter().map(|p| p.as_str()).collect();
    let world = world(&library, &params);
    // The same actions, through this build of the adapter (its path and
    // digest differ from the recorded ones).
    file.params = cmc_model::Model::params(&world);
    let outcome = cmc_search::replay(&world, &file).expect("every action of the trace is enabled");
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "LeaderCommitsOwnTerm"),
        "{:?}",
        outcome.verdict
    );
}
