//! `cmc corpus DIR`: the committed corpus of the reference cores' planted
//! bugs reproduces; a stale pin, a regression and a malformed manifest are
//! reported as such; a failing walk's replay file pins its seed and walk.

mod common;

use std::path::Path;

use common::{cmc_exiting, compile_c, five_crashing_nodes, repository};

fn corpus_dir() -> std::path::PathBuf {
    repository().join("crates/protocols/corpus")
}

/// A corpus in `dir` holding the committed Paxos bug 4 trace, its core
/// parameter replaced by `buggy`, with `fixed` as its fixed build.
fn one_pin(dir: &Path, buggy: &str, fixed: &str) {
    let trace = std::fs::read_to_string(corpus_dir().join("paxos-bug4.cmc-trace")).unwrap();
    let trace = trace.replace("param core=rust:paxos-bug4", &format!("param core={buggy}"));
    std::fs::write(dir.join("pin.cmc-trace"), trace).unwrap();
    std::fs::write(
        dir.join("corpus.toml"),
        format!("[[pin]]\ntrace = \"pin.cmc-trace\"\nfixed = [\"core={fixed}\"]\n"),
    )
    .unwrap();
}

#[test]
fn the_reference_corpus_reproduces_on_its_buggy_builds_and_passes_on_the_fixed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_dir();
    let (out, _) = cmc_exiting(&["corpus", corpus.to_str().unwrap()], dir.path(), 0);
    let pins = std::fs::read_to_string(corpus.join("corpus.toml"))
        .unwrap()
        .matches("[[pin]]")
        .count();
    assert!(pins >= 13, "{pins}");
    assert_eq!(out.matches("REPRODUCES ").count(), pins, "{out}");
    assert!(
        out.contains("paxos-bug4.cmc-trace: violates AtMostOneChosen"),
        "{out}"
    );
    assert!(out.contains("walk="), "pins name their walk: {out}");
    assert!(!out.contains("note:"), "every trace is pinned: {out}");
}

#[test]
fn a_pin_that_no_longer_fails_on_its_buggy_build_is_stale() {
    // The "buggy" build is the fixed core: the trace no longer shows the bug.
    let dir = tempfile::tempdir().unwrap();
    one_pin(dir.path(), "rust:paxos", "rust:paxos");
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 4);
    assert!(out.contains("STALE pin.cmc-trace"), "{out}");
    assert!(out.contains("no longer guards anything"), "{out}");
    assert!(out.contains("1 pin(s) stale, 0 regressed"), "{out}");
}

/// `cmc replay` of a trace that no longer shows the violation it records
/// ends as the corpus counts it: STALE, exit 4, whether the trace now runs
/// to its end without the violation or cannot be followed any more.
#[test]
fn replaying_a_trace_that_no_longer_violates_its_property_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let (_, err) = cmc_exiting(
        &["check", "die-hard", "INVARIANTS=TypeOK,NotSolved"],
        dir.path(),
        1,
    );
    assert!(err.is_empty(), "{err}");
    let trace = std::fs::read_to_string(dir.path().join("die-hard.cmc-trace")).unwrap();
    // One step short of the solution, as if the puzzle had been fixed.
    let short = trace.replace("action BigToSmall\nend\n", "end\n");
    assert_ne!(short, trace);
    std::fs::write(dir.path().join("short.cmc-trace"), &short).unwrap();
    let (_, err) = cmc_exiting(&["replay", "short.cmc-trace"], dir.path(), 4);
    assert!(
        err.contains(
            "says it violates NotSolved, but the replay found no violation: the trace is stale"
        ),
        "{err}"
    );
    // The same steps with no `violates` line claim nothing: they pass; the
    // whole trace still violates its property (exit 1).
    let unclaimed = short.replace("violates NotSolved\n", "");
    std::fs::write(dir.path().join("short.cmc-trace"), unclaimed).unwrap();
    cmc_exiting(&["replay", "short.cmc-trace"], dir.path(), 0);
    cmc_exiting(&["replay", "die-hard.cmc-trace"], dir.path(), 1);
    // Paxos bug 4's trace on the fixed core leaves the trace at line 41.
    one_pin(dir.path(), "rust:paxos", "rust:paxos");
    let (_, err) = cmc_exiting(&["replay", "pin.cmc-trace"], dir.path(), 4);
    assert!(
        err.contains("says it violates AtMostOneChosen, but this build no longer follows it: the trace is stale"),
        "{err}"
    );
    assert!(err.contains("line 41: action"), "{err}");
}

/// A corpus with a stale pin and a regression fails as the regression does.
#[test]
fn a_regression_outranks_a_stale_pin() {
    let dir = tempfile::tempdir().unwrap();
    one_pin(dir.path(), "rust:paxos-bug4", "rust:paxos-bug4");
    let regressed = std::fs::read_to_string(dir.path().join("pin.cmc-trace")).unwrap();
    std::fs::write(
        dir.path().join("stale.cmc-trace"),
        regressed.replace("param core=rust:paxos-bug4", "param core=rust:paxos"),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(dir.path().join("corpus.toml")).unwrap();
    std::fs::write(
        dir.path().join("corpus.toml"),
        format!("{manifest}[[pin]]\ntrace = \"stale.cmc-trace\"\nfixed = [\"core=rust:paxos\"]\n"),
    )
    .unwrap();
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 1);
    assert!(out.contains("1 pin(s) stale, 1 regressed"), "{out}");
}

#[test]
fn a_pin_that_still_fails_on_its_fixed_build_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    one_pin(dir.path(), "rust:paxos-bug4", "rust:paxos-bug4");
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 1);
    assert!(
        out.contains("REGRESSION pin.cmc-trace: still violates AtMostOneChosen"),
        "{out}"
    );
}

#[test]
fn a_bad_manifest_or_an_unpinned_trace_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    one_pin(dir.path(), "rust:paxos-bug4", "rust:paxos");
    std::fs::write(dir.path().join("extra.cmc-trace"), "cmc-replay 2\n").unwrap();
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 0);
    assert!(out.contains("REPRODUCES pin.cmc-trace"), "{out}");
    assert!(out.contains("extra.cmc-trace is in the corpus directory but no [[pin]] names it"));

    for (manifest, needle) in [
        ("", "no [[pin]]"),
        (
            "[[pin]]\ntrace = \"pin.cmc-trace\"\n",
            "missing field `fixed`",
        ),
        (
            "[[pin]]\ntrace = \"pin.cmc-trace\"\nfixed = [\"cores=x\"]\n",
            "no parameter `cores`",
        ),
        (
            "[[pin]]\ntrace = \"gone.cmc-trace\"\nfixed = []\n",
            "gone.cmc-trace",
        ),
    ] {
        std::fs::write(dir.path().join("corpus.toml"), manifest).unwrap();
        let (_, err) = cmc_exiting(&["corpus", "."], dir.path(), 2);
        assert!(err.contains(needle), "{manifest}: {err}");
    }
}

#[test]
fn a_failing_swarm_walk_writes_its_seed_and_walk_number_and_pins_it() {
    let dir = tempfile::tempdir().unwrap();
    let simulate = [
        "--no-deadlock",
        "--simulate",
        "--swarm",
        "--walks",
        "2000",
        "--walk-length",
        "40",
        "--seed",
        "9",
        "--replay-out",
        "found.cmc-trace",
        "--json",
    ];
    let args = [
        &["check"][..],
        &five_crashing_nodes("rust:paxos-bug3", &simulate),
    ]
    .concat();
    let (out, _) = cmc_exiting(&args, dir.path(), 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let walk = report["walks"]["failing_walk"].as_u64().unwrap();
    assert!(report["walks"]["swarm"].as_bool().unwrap());
    let trace = std::fs::read_to_string(dir.path().join("found.cmc-trace")).unwrap();
    assert!(trace.contains("setting seed=9\n"), "{trace}");
    assert!(trace.contains(&format!("setting walk={walk}\n")), "{trace}");
    std::fs::write(
        dir.path().join("corpus.toml"),
        "[[pin]]\ntrace = \"found.cmc-trace\"\nfixed = [\"core=rust:paxos\"]\n",
    )
    .unwrap();
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 0);
    assert!(out.contains(&format!("seed=9 walk={walk}")), "{out}");
}

#[test]
fn a_c_core_pin_loads_its_fixed_library_without_the_buggy_ones_digest() {
    // The trace records the buggy library's path and digest; the fixed
    // build names another library, whose digest the corpus need not know.
    let dir = tempfile::tempdir().unwrap();
    let (buggy, fixed) = (
        dir.path().join("libbug2.so"),
        dir.path().join("libfixed.so"),
    );
    compile_c(
        &["cores/reqack/reqack.c"],
        &["-O1", "-shared", "-fPIC", "-DCMC_BUG=2"],
        &buggy,
    );
    compile_c(
        &["cores/reqack/reqack.c"],
        &["-O1", "-shared", "-fPIC"],
        &fixed,
    );
    let buggy_arg = buggy.to_str().unwrap();
    let check = [
        "check",
        "--core",
        buggy_arg,
        "requests=2",
        "--replay-out",
        "bug2.cmc-trace",
    ];
    cmc_exiting(&check, dir.path(), 1);
    let trace = std::fs::read_to_string(dir.path().join("bug2.cmc-trace")).unwrap();
    assert!(trace.contains("param core_digest=xxh3-128:"), "{trace}");
    std::fs::write(
        dir.path().join("corpus.toml"),
        format!(
            "[[pin]]\ntrace = \"bug2.cmc-trace\"\nfixed = [\"core={}\"]\n",
            fixed.display()
        ),
    )
    .unwrap();
    let (out, _) = cmc_exiting(&["corpus", "."], dir.path(), 0);
    assert!(out.contains("REPRODUCES bug2.cmc-trace"), "{out}");

    // The buggy build is still held to its digest: rebuilt, it is refused.
    compile_c(
        &["cores/reqack/reqack.c"],
        &["-O0", "-shared", "-fPIC", "-DCMC_BUG=2"],
        &buggy,
    );
    let (_, err) = cmc_exiting(&["corpus", "."], dir.path(), 2);
    assert!(err.contains("has changed since it was recorded"), "{err}");
}

/// The trace of a core's fault (an error code) replays to that fault,
/// named as the check named it: neither STALE nor "not enabled".
#[test]
fn replaying_the_trace_of_a_core_fault_shows_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("liberror.so");
    compile_c(
        &["cores/test/misbehave.c"],
        &["-DERROR_CODE", "-O2", "-shared", "-fPIC"],
        &core,
    );
    let core = core.to_str().unwrap();
    let check = [
        "check",
        "--core",
        core,
        "--nodes",
        "2",
        "requests=1",
        "--replay-out",
        "fault.cmc",
    ];
    let (_, err) = cmc_exiting(&check, dir.path(), 2);
    assert!(err.contains("CORE ERROR"), "{err}");
    let (_, err) = cmc_exiting(&["replay", "fault.cmc"], dir.path(), 2);
    assert!(
        err.contains("the trace ends in a core fault:\nCORE ERROR: the step returned error code 7"),
        "{err}"
    );
}
