//! canonical/raft 0.15.0, Debian's `libraft.so.2` unchanged, checked
//! through its C heap-state adapter (targets/canonical-raft): loaded by
//! `build_world` like any `--core` library, its C properties attached, and
//! every call the library makes to libc for time answered by cmc.
//!
//! Needs `libraft-dev` and a C compiler (scripts/setup.sh installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

use cmc_search::{Checker, Verdict};
use cmc_world::{build_world, WorldArgs};

/// Builds the adapter with `flags` into a fresh folder; its library's path.
fn adapter(name: &str, flags: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = root.join("targets/canonical-raft");
    let out = std::env::temp_dir().join(format!("cmc-canonical-raft-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temporary folder");
    let library = out.join("libcanonical_raft.so");
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC", "-shared"])
        .arg(format!("-I{}", root.join("include").display()))
        .args(flags)
        .arg(target.join("raft_core.c"))
        .arg(target.join("raft_props.c"))
        .arg("-lraft")
        .arg("-o")
        .arg(&library)
        .status()
        .expect("cc runs (scripts/setup.sh installs it)");
    assert!(status.success(), "the adapter builds against libraft-dev (scripts/setup.sh installs it)");
    library
}

fn world(library: &Path, params: &[&str]) -> cmc_world::World {
    build_world(&WorldArgs {
        cores: vec![library.display().to_string()],
        nodes: 3,
        params: params.iter().map(|p| p.to_string()).collect(),
        ..WorldArgs::default()
    })
    .expect("the adapter loads as a heap-state core")
}

#[test]
fn three_nodes_with_one_timeout_pass_every_raft_property_exhaustively() {
    let library = adapter("pass", &[]);
    // One election timeout in all: one leader, one term change, one client
    // command replicated and committed (the witness CommandCommitted).
    let world = world(&library, &["ticks=1", "requests=1", "clients=0,1,2"]);
    let outcome = Checker::new(world).workers(2).check_deadlock(false).run();
    assert_eq!(outcome.verdict, Verdict::Pass, "{:?}", outcome.verdict);
    assert!(outcome.stats.complete, "the search is exhaustive");
    assert!(outcome.stats.distinct > 1000, "{} states", outcome.stats.distinct);
}

#[test]
fn figure_8_counterexample_violates_leader_completeness_on_replay() {
    let library = adapter("figure8", &[]);
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets/canonical-raft/figure8.cmc-trace");
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
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "LeaderCompleteness"),
        "{:?}",
        outcome.verdict
    );
}
