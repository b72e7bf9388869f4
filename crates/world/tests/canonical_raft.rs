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
    // The same library as the recorded one (its digest), at another path.
    file.params =
        cmc_world::world_args::relocate_cores(&file.params, &cmc_model::Model::params(&world))
            .expect("the adapter built as the gate builds it is the recorded one");
    let outcome = cmc_search::replay(&world, &file).expect("every action of the trace is enabled");
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "LeaderCommitsOwnTerm"),
        "{:?}",
        outcome.verdict
    );
}

#[test]
fn describe_names_what_the_heap_adapter_declares() {
    let _alone = one_adapter_at_a_time();
    let describe = |library: &Path| {
        cmc_world::properties::c_properties::describe_library(library)
            .expect("a heap-state adapter is described")
    };
    let library = adapter("describe", &[]);
    let text = describe(&library);
    for line in [
        "heap-state core canonical-raft",
        "checked library: libraft.so.2",
        "libc calls declared (answered by cmc): clock_gettime\n",
        "clock: the node's, 1000000000 ns per TICK",
        "describes: states, messages",
        "action           LeaderCommitsOwnTerm",
        "witness          CommandCommitted",
    ] {
        assert!(text.contains(line), "`{line}` in:\n{text}");
    }
    // The sizes are the World's: the view is the node's volatile part.
    let world = world(&library, &[]);
    let core = &world.spec().cores[0];
    for (what, size) in [
        ("durable part", core.durable_size()),
        ("view", core.volatile_size()),
    ] {
        assert!(text.contains(&format!("{what}: {size} bytes")), "{text}");
    }
    // libraft.so.2 imports rand, srand, gettimeofday and getrandom for its
    // libuv I/O: undeclared, each call would be a fault, and the description
    // says so. Without clock_gettime declared, it joins them.
    let imported = "libc calls it imports undeclared (a call is a fault): rand, srand, gettimeofday, getrandom";
    assert!(text.contains(imported), "{text}");
    let text = describe(&adapter("describe-undeclared", &["-DCR_LIBC_CALLS=0"]));
    for line in [
        "libc calls declared (answered by cmc): none",
        "rand, srand, clock_gettime, gettimeofday, getrandom",
    ] {
        assert!(text.contains(line), "`{line}` in:\n{text}");
    }
    assert!(!text.contains("clock: "), "{text}");
}
