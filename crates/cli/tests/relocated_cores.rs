//! A replay file names each C core by its library's path and digest. The
//! same library (the same bytes) built at another path is the same core: a
//! trace replays with it (`cmc replay --core`) and random walks start from a
//! prefix recorded with it (`--walks-from`, in a check and in a gate). Other
//! bytes are never run in its place: they are refused, naming both.

mod common;

use std::path::Path;

use common::{cmc_exiting, compile_c};

/// Builds the reqack C core (planted bug 2 with `bug`) at `dir/path`.
fn reqack(dir: &Path, path: &str, bug: bool) {
    let out = dir.join(path);
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut flags = vec!["-O1", "-shared", "-fPIC"];
    if bug {
        flags.push("-DCMC_BUG=2");
    }
    compile_c(&["cores/reqack/reqack.c"], &flags, &out);
}

/// Records the planted bug's counterexample with the library at
/// `built/libreqack.so` in `trace`, then moves the library to
/// `moved/libreqack.so`: the recorded path is gone, the same bytes are
/// elsewhere. A library without the bug is built at `other/libreqack.so`.
fn trace_of_a_moved_library(dir: &Path, trace: &str) {
    reqack(dir, "built/libreqack.so", true);
    let check = [
        "check",
        "--core",
        "built/libreqack.so",
        "requests=2",
        "--replay-out",
        trace,
    ];
    cmc_exiting(&check, dir, 1);
    std::fs::create_dir_all(dir.join("moved")).unwrap();
    std::fs::rename(
        dir.join("built/libreqack.so"),
        dir.join("moved/libreqack.so"),
    )
    .unwrap();
    reqack(dir, "other/libreqack.so", false);
}

/// The first `actions` steps of the replay file `trace`, as a prefix to walk
/// from (without the violation it ends in).
fn prefix_of(dir: &Path, trace: &str, actions: usize, prefix: &str) {
    let text = std::fs::read_to_string(dir.join(trace)).unwrap();
    let mut kept: Vec<&str> = Vec::new();
    let mut taken = 0;
    for line in text.lines() {
        if line.starts_with("violates ") {
            continue;
        }
        if line.starts_with("action ") {
            if taken == actions {
                continue;
            }
            taken += 1;
        }
        kept.push(line);
    }
    assert_eq!(taken, actions, "{text}");
    std::fs::write(dir.join(prefix), kept.join("\n") + "\n").unwrap();
}

#[test]
fn a_trace_replays_with_the_same_library_at_another_path_and_never_with_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    trace_of_a_moved_library(dir, "bug2.cmc-trace");

    // The recorded library is gone: the error says how to name it.
    let (_, err) = cmc_exiting(&["replay", "bug2.cmc-trace"], dir, 2);
    assert!(
        err.contains("built/libreqack.so")
            && err.contains("is not there")
            && err.contains("--core"),
        "{err}"
    );

    // The same bytes at their new path: the violation again.
    let replay = ["replay", "bug2.cmc-trace", "--core", "moved/libreqack.so"];
    let (out, _) = cmc_exiting(&replay, dir, 1);
    assert!(out.contains("AckedIsDurable is violated"), "{out}");

    // Other bytes: refused, naming both libraries, before any step.
    let replay = ["replay", "bug2.cmc-trace", "--core", "other/libreqack.so"];
    let (out, err) = cmc_exiting(&replay, dir, 2);
    assert!(
        err.contains("built/libreqack.so")
            && err.contains("other/libreqack.so")
            && err.contains("not the same library"),
        "{err}"
    );
    assert!(!out.contains("AckedIsDurable"), "{out}");

    // One --core per recorded core.
    let twice = [
        "replay",
        "bug2.cmc-trace",
        "--core",
        "moved/libreqack.so",
        "--core",
        "moved/libreqack.so",
    ];
    let (_, err) = cmc_exiting(&twice, dir, 2);
    assert!(err.contains("one --core per recorded core"), "{err}");
}

#[test]
fn walks_start_from_a_prefix_recorded_with_the_same_library_at_another_path() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    trace_of_a_moved_library(dir, "bug2.cmc-trace");
    prefix_of(dir, "bug2.cmc-trace", 2, "prefix.cmc-trace");
    let walks = |core: &str| {
        vec![
            "check",
            "--core",
            core,
            "requests=2",
            "--simulate",
            "--walks",
            "200",
            "--walk-length",
            "10",
            "--seed",
            "1",
            "--walks-from",
            "prefix.cmc-trace",
            "--replay-out",
            "found.cmc-trace",
        ]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>()
    };
    let args = walks("moved/libreqack.so");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = cmc_exiting(&args, dir, 1);
    assert!(out.contains("AckedIsDurable is violated"), "{out}");
    // The walk's trace names the library it ran.
    let found = std::fs::read_to_string(dir.join("found.cmc-trace")).unwrap();
    assert!(found.contains("moved/libreqack.so"), "{found}");

    let args = walks("other/libreqack.so");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, err) = cmc_exiting(&args, dir, 2);
    assert!(
        err.contains("prefix.cmc-trace") && err.contains("not the same library"),
        "{err}"
    );
}

#[test]
fn a_gate_catches_a_bug_of_an_unchanged_library_by_walks_from_a_prefix_recorded_elsewhere() {
    // A library with its bug in every build: the configuration has no
    // control, and its bug is found from a prefix recorded with the same
    // library at a path the gate does not use.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    trace_of_a_moved_library(dir, "bug2.cmc-trace");
    prefix_of(dir, "bug2.cmc-trace", 2, "prefix.cmc-trace");
    std::fs::write(
        dir.join("gate.toml"),
        r#"
        [[core]]
        name = "unchanged"
        library = "moved/libreqack.so"
        nodes = 2
        params = ["requests=2"]
        control = false
        [[core.bug]]
        bug = 1
        expect = "AckedIsDurable"
        max_depth = 20
        max_states = 10000
        search = { strategy = "walks-from", trace = "prefix.cmc-trace", walks = 200, walk_length = 10, seed = 1 }
        "#,
    )
    .unwrap();
    let (out, _) = cmc_exiting(&["gate", "gate.toml", "--evidence", "evidence"], dir, 0);
    let lines: Vec<&str> = out
        .lines()
        .filter(|line| line.starts_with("unchanged"))
        .collect();
    assert_eq!(lines.len(), 1, "no control line: {out}");
    assert!(
        lines[0].contains("bug1") && lines[0].contains("CAUGHT"),
        "{out}"
    );
    // The gate replayed the evidence to the same violation, and so does a user.
    let replayed =
        std::fs::read_to_string(dir.join("evidence/unchanged-bug1.replay.json")).unwrap();
    let replayed: serde_json::Value = serde_json::from_str(&replayed).unwrap();
    assert_eq!(
        (replayed["verdict"].as_str(), replayed["property"].as_str()),
        (Some("violated"), Some("AckedIsDurable")),
        "{replayed}"
    );
    let (out, _) = cmc_exiting(&["replay", "evidence/unchanged-bug1.cmc-trace"], dir, 1);
    assert!(out.contains("AckedIsDurable is violated"), "{out}");
}
