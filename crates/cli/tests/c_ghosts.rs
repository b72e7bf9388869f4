//! Ghost variables written in C (`CMC_GHOSTS` in include/cmc.h), through
//! `cmc check --core`: `cores/test/ballot.c` plants a vote sent before it
//! is durable (a crash forgets it and the node votes again), which only a
//! property over the ghost variable `Granted` sees; a selection that leaves
//! out the ghost's readers drops it; symmetry renames it through its hook;
//! bad declarations are refused with the reason.

mod common;

use std::path::{Path, PathBuf};

use common::{cmc, cmc_exiting, compile_c, text};

/// The ballot library built with `flags` (e.g. `-DCMC_BUG=1`) into `dir`.
fn ballot(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let library = dir.join(format!("libballot_{name}.so"));
    let mut all = vec!["-O2", "-shared", "-fPIC"];
    all.extend_from_slice(flags);
    compile_c(&["cores/test/ballot.c"], &all, &library);
    library
}

/// `cmc check` of three ballot nodes from `library` with one crash and
/// restart, and `extra`: exit code, standard output and error.
fn check(library: &Path, extra: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let mut args = vec![
        "check",
        "--core",
        library.to_str().unwrap(),
        "--nodes",
        "3",
        "requests=0",
        "crashes=1",
        "restarts=1",
    ];
    args.extend_from_slice(extra);
    let output = cmc(&args, dir);
    let (stdout, stderr) = text(&output);
    (output.status.code(), stdout, stderr)
}

/// The distinct states a report counts.
fn distinct_states(stdout: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|line| line.contains("distinct states found"))
        .unwrap_or_else(|| panic!("no state count in {stdout}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "distinct").unwrap();
    words[at - 1].parse().unwrap()
}

#[test]
fn a_vote_forgotten_in_a_crash_is_caught_through_the_ghost_variable() {
    let dir = tempfile::tempdir().unwrap();
    let buggy = ballot(dir.path(), "bug", &["-DCMC_BUG=1"]);
    let (described, _) = cmc_exiting(&["describe", buggy.to_str().unwrap()], dir.path(), 0);
    assert!(
        described.contains("Granted          8 bytes, read by VoteOnce, renamed under symmetry"),
        "{described}"
    );
    let (code, stdout, stderr) = check(&buggy, &["--replay-out", "vote.cmc"], dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Invariant VoteOnce is violated"),
        "{stdout}"
    );
    assert!(
        stdout.contains("sent its vote to the candidates"),
        "{stdout}"
    );
    assert!(stdout.contains("ghost.Granted"), "{stdout}");
    assert!(stdout.contains("CRASH n"), "{stdout}");
    // The replay recomputes the ghost variable step by step.
    let (replayed, _) = cmc_exiting(&["replay", "vote.cmc"], dir.path(), 1);
    assert!(replayed.contains("VoteOnce"), "{replayed}");
    assert!(replayed.contains("ghost.Granted"), "{replayed}");
    // The property of one state cannot see it: the node forgot its vote.
    let (code, stdout, stderr) = check(&buggy, &["INVARIANTS=GrantIsRecorded"], dir.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    // The control: a vote sent only once durable is never given twice.
    let correct = ballot(dir.path(), "correct", &[]);
    let (code, stdout, stderr) = check(&correct, &[], dir.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("always VoteOnce"), "{stdout}");
}

/// A ghost variable turns sleep sets off (its update reads every step);
/// a selection that keeps none of its readers drops it, and sleep sets
/// are on again; one that keeps a reader keeps it.
#[test]
fn a_selection_without_the_ghosts_readers_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let correct = ballot(dir.path(), "correct", &[]);
    let selected = |property: &str| {
        let selection = format!("INVARIANTS={property}");
        let (code, stdout, stderr) = check(&correct, &[&selection, "--sleep-sets"], dir.path());
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        stdout
    };
    let without_reader = selected("GrantIsRecorded");
    assert!(
        without_reader.contains("Partial-order reduction: on (sleep sets)"),
        "{without_reader}"
    );
    let with_reader = selected("VoteOnce");
    assert!(
        with_reader.contains("asked for but off")
            && with_reader.contains("the ghost variable `Granted`"),
        "{with_reader}"
    );
    // A variable that names no readers may be read by any property: kept.
    let any = ballot(dir.path(), "any", &["-DREAD_BY_ANY"]);
    let selection = "INVARIANTS=GrantIsRecorded";
    let (code, stdout, stderr) = check(&any, &[selection, "--sleep-sets"], dir.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("the ghost variable `Granted`"), "{stdout}");
}

/// Symmetry renames the ghost's node ids through its rename hook: the same
/// verdicts as without symmetry, in fewer states, and every step's renaming
/// checked under --check-determinism.
#[test]
fn symmetry_renames_the_ghost_variable_through_its_hook() {
    let dir = tempfile::tempdir().unwrap();
    let correct = ballot(dir.path(), "correct", &[]);
    let (code, full, stderr) = check(&correct, &[], dir.path());
    assert_eq!(code, Some(0), "{full}{stderr}");
    let symmetric = ["symmetry=1,2", "--check-determinism"];
    let (code, reduced, stderr) = check(&correct, &symmetric, dir.path());
    assert_eq!(code, Some(0), "{reduced}{stderr}");
    let (full, reduced) = (distinct_states(&full), distinct_states(&reduced));
    assert!(
        reduced < full,
        "{reduced} states with symmetry, {full} without"
    );
    let buggy = ballot(dir.path(), "bug", &["-DCMC_BUG=1"]);
    for extra in [&[][..], &symmetric[..]] {
        let (code, stdout, stderr) = check(&buggy, extra, dir.path());
        assert_eq!(code, Some(1), "{extra:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("Invariant VoteOnce is violated"),
            "{stdout}"
        );
    }
}

/// A crash inside the update is a fault of that update, naming the
/// variable, with the step it follows and its replay file; no verdict.
#[test]
fn a_crash_in_the_update_is_a_fault_naming_the_ghost_variable() {
    let dir = tempfile::tempdir().unwrap();
    let crashing = ballot(dir.path(), "crashing", &["-DUPDATE_CRASHES"]);
    let (code, stdout, stderr) = check(&crashing, &["--replay-out", "fault.cmc"], dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "", "a fault gives no verdict");
    assert!(
        stderr.contains("CORE CRASHED") && stderr.contains("inside a step"),
        "{stderr}"
    );
    assert!(
        stderr.contains("event:  in the update of ghost variable Granted"),
        "{stderr}"
    );
    assert!(stderr.contains("fault.cmc"), "{stderr}");
}

/// Each bad declaration, and the error that names it (exit 2, no verdict).
#[test]
fn bad_ghost_declarations_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 5] = [
        ("-DGHOST_TOO_LARGE", &[], "of 4097 bytes"),
        ("-DGHOST_TWICE", &[], "repeated name `Granted`"),
        (
            "-DGHOST_UNKNOWN_READER",
            &[],
            "is read by `VoteTwice`, which is no property of this World",
        ),
        (
            "-DNO_RENAME",
            &["symmetry=1,2"],
            "symmetry reduction cannot rename the node ids a ghost variable may hold",
        ),
        (
            "-DUPDATE_FAILS",
            &[],
            "the update of ghost variable Granted returned error code 7",
        ),
    ];
    for (flag, extra, reason) in cases {
        let library = ballot(dir.path(), flag.trim_start_matches("-D"), &[flag]);
        let (code, stdout, stderr) = check(&library, extra, dir.path());
        assert_eq!(code, Some(2), "{flag}: {stdout}{stderr}");
        assert!(
            stderr.contains(reason) || stdout.contains(reason),
            "{flag}: {stdout}{stderr}"
        );
        assert!(!stdout.contains("No error has been found"), "{stdout}");
    }
}
