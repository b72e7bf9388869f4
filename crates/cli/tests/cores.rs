//! `cmc` on cores: a World of shared libraries, with the gates that keep a
//! misbehaving core from taking the verdict with it.

mod common;

use std::path::{Path, PathBuf};

use common::{
    check_args, check_reqack_bug2, cmc, cmc_exiting, compile_c, core_check_args,
    five_crashing_nodes, text,
};

/// Compiles `cores/test/misbehave.c` with `-D<flag>` into `dir`, as a shared
/// library (or an object file when `object` is set).
fn misbehaving_core(dir: &Path, flag: &str, object: bool) -> PathBuf {
    let (out, kind): (_, &[&str]) = if object {
        (dir.join(format!("{flag}.o")), &["-c"])
    } else {
        (dir.join(format!("lib{flag}.so")), &["-shared", "-fPIC"])
    };
    let define = format!("-D{flag}");
    let flags: Vec<&str> = [define.as_str(), "-O0"]
        .into_iter()
        .chain(kind.iter().copied())
        .collect();
    compile_c(&["cores/test/misbehave.c"], &flags, &out);
    out
}

#[test]
fn a_planted_bug_is_caught_and_replays_through_the_same_core() {
    let dir = tempfile::tempdir().unwrap();
    check_reqack_bug2(dir.path(), "bug2.cmc");

    let (stdout, _) = cmc_exiting(&["replay", "bug2.cmc"], dir.path(), 1);
    assert!(stdout.contains("step 1: CLIENT r0 -> n0"), "{stdout}");
    assert!(
        stdout.contains("output  PERSIST"),
        "the core's outputs are shown: {stdout}"
    );
    assert!(stdout.contains("AckedIsDurable"), "{stdout}");
}

/// Checks a World of the core built with `-D<flag>` and returns its stderr,
/// after asserting exit code 2 (a faulty core is bad input, never a verdict).
fn check_faulty_core(flag: &str, extra: &[&str], dir: &Path) -> String {
    let core = misbehaving_core(dir, flag, false);
    let (_, stderr) = cmc_exiting(&core_check_args(&core, extra), dir, 2);
    stderr
}

#[test]
fn a_crashing_core_is_reported_with_a_replay_file_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = check_faulty_core("SEGV", &["--replay-out", "segv.cmc"], dir.path());
    assert!(stderr.contains("CORE CRASHED"), "{stderr}");
    assert!(stderr.contains("SIGSEGV"), "{stderr}");
    let trace = std::fs::read_to_string(dir.path().join("segv.cmc")).expect("a replay file");
    assert!(trace.contains("action CLIENT"), "{trace}");
}

#[test]
fn a_core_that_never_returns_is_reported_as_hung() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = check_faulty_core("HANG", &["--step-timeout", "0.5"], dir.path());
    assert!(stderr.contains("CORE HUNG"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_core_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("libnotacore.so"), "hello").unwrap();
    let (_, stderr) = cmc_exiting(
        &["check", "--core", "./libnotacore.so", "--nodes", "2"],
        dir.path(),
        2,
    );
    assert!(stderr.contains("libnotacore.so"), "{stderr}");
}

#[test]
fn the_purity_gate_names_the_offending_symbol() {
    let dir = tempfile::tempdir().unwrap();
    let impure = misbehaving_core(dir.path(), "CALLS_TIME", true);
    let (stdout, _) = cmc_exiting(&["purity", impure.to_str().unwrap()], dir.path(), 1);
    assert!(stdout.contains("time"), "{stdout}");

    let pure = misbehaving_core(dir.path(), "ERROR_CODE", true);
    let output = cmc(&["purity", pure.to_str().unwrap()], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output).0);
}

#[test]
fn reference_protocol_cores_are_checked_with_their_properties() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = cmc_exiting(
        &[
            &["check"][..],
            &five_crashing_nodes(
                "rust:paxos-bug1",
                &["--max-depth", "6", "--no-deadlock", "--replay-out", "p.cmc"],
            ),
        ]
        .concat(),
        dir.path(),
        1,
    );
    assert!(
        stdout.contains("Invariant PromiseDurable is violated"),
        "{stdout}"
    );
    let (stdout, _) = cmc_exiting(&["replay", "p.cmc"], dir.path(), 1);
    assert!(stdout.contains("PromiseDurable"), "{stdout}");
    assert!(stdout.contains("Replayed a trace of"), "{stdout}");
}

/// A reference protocol checked through the command explores the states of
/// its World built in Rust: ABD's `Linearizable` reads a summary of the
/// client history, with the order between requests out of the states'
/// identity, and the command attaches the summary too (it once checked the
/// whole history, 56,145 states here instead of 56,127).
#[test]
fn abd_through_the_command_explores_the_states_of_its_rust_world() {
    // `abd::world` sends the requests to nodes 3 and 4; the command is told.
    let params = [
        "requests=2",
        "crash_nodes=0,1,2",
        "crashes=1",
        "restarts=1",
        "symmetry=0,1,2",
    ];
    let dir = tempfile::tempdir().unwrap();
    let command = ["check", "--core", "rust:abd", "--nodes", "5", "clients=3,4"];
    let command = [&command[..], &params].concat();
    let options = ["--max-depth", "17", "--no-deadlock", "--json"];
    let (stdout, _) = cmc_exiting(&[&command[..], &options].concat(), dir.path(), 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON report");
    let distinct = |world| {
        let outcome = cmc_search::Checker::new(world)
            .workers(1)
            .max_depth(17)
            .check_deadlock(false)
            .run();
        outcome.stats.distinct_states
    };
    let world = || cmc_protocols::abd::world(0, 5, &params).unwrap();
    let summarised = distinct(world());
    assert_eq!(report["distinct_states"].as_u64(), Some(summarised));
    assert!(summarised < distinct(world().with_full_history()));
}

/// The header of a supervised World check reaches the reader once: the
/// child prints it as the run starts, and the report leaves it out when
/// both go to the same place; a report read alone still starts with it.
#[test]
fn a_supervised_check_prints_its_header_once() {
    let dir = tempfile::tempdir().unwrap();
    let args = check_args("rust:reqack", &[]);
    let header = "model world(reqack)";

    let both = std::fs::File::create(dir.path().join("both.txt")).unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(&args)
        .current_dir(dir.path())
        .stdout(both.try_clone().unwrap())
        .stderr(both)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let shown = std::fs::read_to_string(dir.path().join("both.txt")).unwrap();
    assert_eq!(shown.matches(header).count(), 1, "{shown}");

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(&args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.starts_with(header), "{report}");
    assert_eq!(report.matches(header).count(), 1, "{report}");
}
