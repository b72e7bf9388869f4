//! Bad input to `cmc` as a careless or hostile user gives it: numbers out of
//! range, files that are not regular files, names with line breaks, a
//! replay file aimed at an input. Each is a one-line error and exit code 2,
//! never a panic, a hang or a lost file; and a run that was not exhaustive
//! never reads as one that was.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{cmc, cmc_command, cmc_exiting, cmc_within, compile_c, mkfifo, text};

/// Asserts exit code 2 with a one-line error that contains `needle`.
fn assert_refused(output: &Output, args: &[&str], needle: &str) {
    let (stdout, stderr) = text(output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn numbers_out_of_range_are_refused_before_anything_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &["check", "two-phase", "--workers", "100000000"],
        &["check", "two-phase", "--workers", "18446744073709551616"],
        &["check", "--core", "rust:reqack", "--nodes", "1000000000000"],
        &["check", "--core", "rust:reqack", "--nodes", "65"],
        &[
            "check",
            "die-hard",
            "--simulate",
            "--walk-length",
            "1000000000000",
        ],
        &["check", "die-hard", "--simulate", "--walks", "0"],
        &["check", "two-phase", "--max-depth", "99999999999999"],
        &["check", "two-phase", "--max-memory", "1K"],
        &["check", "two-phase", "--max-memory", "9999999T"],
        &["check", "two-phase", "--checkpoint-every", "0"],
        &["check", "--core", "rust:reqack", "--step-timeout", "1e300"],
        &["check", "two-phase", "RM=99999999999999999999"],
        &["gate", "--workers", "100000"],
    ];
    for args in cases {
        let output = cmc_within(args, dir.path(), Duration::from_secs(20));
        assert_refused(&output, args, "is not allowed");
    }
}

/// A two-process timely run (its first process), before its `--hostfile`.
const TIMELY_PROCESS_0: [&str; 8] = [
    "check",
    "two-phase",
    "--engine",
    "timely",
    "--processes",
    "2",
    "--process",
    "0",
];

#[test]
fn files_that_are_not_regular_files_are_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("fifo"));
    std::fs::create_dir(dir.path().join("fifo-corpus")).unwrap();
    mkfifo(&dir.path().join("fifo-corpus/corpus.toml"));
    std::fs::create_dir(dir.path().join("zero-corpus")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero-corpus/corpus.toml")).unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["replay", "fifo"], "is a FIFO"),
        (&["replay", "/dev/zero"], "is a device"),
        (&["replay", "folder"], "is a directory"),
        (&["purity", "fifo"], "is a FIFO"),
        (&["purity", "/dev/zero"], "is a device"),
        (&["check", "--core", "fifo"], "is a FIFO"),
        (&["check", "--core", "/dev/zero"], "is a device"),
        (&["check", "--core", "folder"], "is a directory"),
        (&["gate", "fifo"], "is a FIFO"),
        (&["gate", "/dev/zero"], "is a device"),
        (&["corpus", "fifo-corpus"], "is a FIFO"),
        (&["corpus", "zero-corpus"], "is a device"),
        (
            &[&TIMELY_PROCESS_0[..], &["--hostfile=fifo"]].concat(),
            "is a FIFO",
        ),
        (
            &[&TIMELY_PROCESS_0[..], &["--hostfile=/dev/zero"]].concat(),
            "is a device",
        ),
    ];
    for (args, needle) in cases {
        let output = cmc_within(args, dir.path(), Duration::from_secs(20));
        assert_refused(&output, args, needle);
    }
}

#[test]
fn a_replay_file_is_never_written_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "my notes").unwrap();
    std::fs::write(dir.path().join("libcore.so"), "not really a library").unwrap();
    let violation = ["check", "two-phase", "RM=2", "INVARIANTS=NoRMCommitted"];
    let cases: &[(&[&str], &str)] = &[
        (&["--replay-out", "notes.txt"], "not a cmc replay file"),
        (
            &["--checkpoint", "ckpt", "--replay-out", "ckpt/trace"],
            "overwrite the input ckpt",
        ),
        (
            &["--trace-dir", "spill", "--replay-out", "spill"],
            "it exists and is not a regular file",
        ),
    ];
    std::fs::create_dir(dir.path().join("spill")).unwrap();
    for (extra, needle) in cases {
        let args: Vec<&str> = violation.iter().chain(extra.iter()).copied().collect();
        let output = cmc_within(&args, dir.path(), Duration::from_secs(60));
        assert_refused(&output, &args, needle);
    }
    let args = [
        "check",
        "--core",
        "libcore.so",
        "--replay-out",
        "./libcore.so",
    ];
    assert_refused(
        &cmc_within(&args, dir.path(), Duration::from_secs(20)),
        &args,
        "overwrite the input libcore.so",
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "my notes"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("libcore.so")).unwrap(),
        "not really a library"
    );
    // An earlier replay file may be replaced.
    let args: Vec<&str> = violation
        .iter()
        .chain(["--replay-out", "t.cmc"].iter())
        .copied()
        .collect();
    assert_eq!(cmc(&args, dir.path()).status.code(), Some(1));
    assert_eq!(cmc(&args, dir.path()).status.code(), Some(1));
}

/// The trace directory holds only files the run names uniquely: a run from a
/// folder inside the system's temporary folder may spill there.
#[test]
fn a_trace_dir_that_holds_the_working_folder_is_not_an_input_to_protect() {
    let dir = tempfile::tempdir().unwrap();
    let temp = std::env::temp_dir();
    assert!(dir.path().starts_with(&temp), "{}", dir.path().display());
    let args = [
        "check",
        "two-phase",
        "RM=2",
        "INVARIANTS=NoRMCommitted",
        "--trace-dir",
        temp.to_str().unwrap(),
    ];
    let output = cmc_within(&args, dir.path(), Duration::from_secs(60));
    assert_eq!(output.status.code(), Some(1), "{:?}", text(&output));
    assert!(dir.path().join("two-phase.cmc-trace").exists());
}

#[test]
fn verdict_settings_are_in_the_header_and_the_replay_file() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "check",
        "two-phase",
        "RM=3",
        "INVARIANTS=NoRMCommitted",
        "--no-deadlock",
        "--max-depth",
        "20",
        "--check-determinism",
        "--replay-out",
        "t.cmc",
    ];
    let (stdout, _) = cmc_exiting(&args, dir.path(), 1);
    let header = stdout.lines().next().unwrap();
    assert!(
        header.starts_with("model two-phase RM=3")
            && header.ends_with("; max-depth=20, no-deadlock, check-determinism)"),
        "{header}"
    );
    assert_eq!(stdout.matches("model two-phase").count(), 1, "{stdout}");
    let file = std::fs::read_to_string(dir.path().join("t.cmc")).unwrap();
    for line in [
        "setting max-depth=20",
        "setting no-deadlock",
        "setting check-determinism",
    ] {
        assert!(file.lines().any(|l| l == line), "{line}: {file}");
    }
    let (stdout, _) = cmc_exiting(&["replay", "t.cmc"], dir.path(), 1);
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .contains("max-depth=20, no-deadlock"),
        "{stdout}"
    );
}

#[test]
fn the_header_is_printed_when_the_search_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = cmc_command(
        &[
            "check",
            "two-phase",
            "RM=10",
            "--workers",
            "1",
            "--progress",
            "off",
        ],
        dir.path(),
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    // RM=10 takes minutes: the header must come long before the search ends.
    let line = receiver.recv_timeout(Duration::from_secs(20));
    let _ = child.kill();
    let _ = child.wait();
    let line = line.expect("no header line within 20 s of the start");
    assert!(
        line.starts_with("model two-phase RM=10 ") && line.contains("(bfs, 1 worker)"),
        "{line}"
    );
}

#[test]
fn a_bounded_run_never_reads_as_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], Option<&str>)] = &[
        (
            &["check", "two-phase", "RM=3", "--max-depth", "4"],
            Some("No violation found within the bound (depth 4)"),
        ),
        (
            &["check", "two-phase", "RM=3", "--dfs", "--max-depth", "4"],
            Some("No violation found within the bound (depth 4)"),
        ),
        (
            &["check", "two-phase", "RM=3", "--simulate", "--walks", "7"],
            Some("No violation found within the bound (7 random walks of at most 100 steps)"),
        ),
        (
            &["check", "two-phase", "RM=5", "--max-states", "1000"],
            Some("No violation found within the bound (1000 distinct states)"),
        ),
        (&["check", "two-phase", "RM=3"], None),
    ];
    for (args, bounded) in cases {
        let output = cmc(args, dir.path());
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
        match bounded {
            Some(says) => {
                assert!(stdout.contains(says), "{args:?}: {stdout}");
                assert!(!stdout.contains("Model checking completed"), "{stdout}");
            }
            None => assert!(stdout.contains("Model checking completed"), "{stdout}"),
        }
        let mut json_args = args.to_vec();
        json_args.push("--json");
        let output = cmc(&json_args, dir.path());
        let report: serde_json::Value =
            serde_json::from_str(&text(&output).0).expect("JSON report");
        assert_eq!(report["complete"], bounded.is_none(), "{args:?}: {report}");
        assert_eq!(report["verdict"], "pass");
    }
}

#[test]
fn a_state_budget_or_a_run_without_traces_is_refused_where_it_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["check", "two-phase", "--max-states", "0"],
            "invalid value '0'",
        ),
        (
            &["check", "two-phase", "--dfs", "--max-states", "9"],
            "bounds breadth-first search only",
        ),
        (
            &["check", "two-phase", "--simulate", "--no-trace"],
            "for breadth-first search only",
        ),
        (
            &["check", "two-phase", "--no-trace", "--checkpoint", "cp"],
            "--no-trace and --checkpoint do not go together",
        ),
        (
            &[
                "check",
                "two-phase",
                "--no-trace",
                "--max-depth",
                "3",
                "--frontier-walks",
                "5",
            ],
            "--no-trace and --frontier-walks do not go together",
        ),
    ];
    for (args, needle) in cases {
        let output = cmc_within(args, dir.path(), Duration::from_secs(20));
        assert_refused(&output, args, needle);
    }
    assert!(!dir.path().join("cp").exists(), "nothing was written");
}

#[test]
fn an_empty_property_list_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        ["check", "two-phase", "INVARIANTS="],
        ["check", "die-hard", "INVARIANTS=,"],
    ] {
        assert_refused(&cmc(&args, dir.path()), &args, "INVARIANTS= lists nothing");
    }
}

/// Compiles the reqack example core with its planted bug 2 into `dir`.
fn buggy_core(dir: &Path) -> PathBuf {
    let out = dir.join("libcore.so");
    compile_c(
        &["cores/reqack/reqack.c"],
        &["-O1", "-shared", "-fPIC", "-DCMC_BUG=2"],
        &out,
    );
    out
}

#[test]
fn a_core_path_with_a_line_break_cannot_inject_lines_and_replays_from_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let evil = dir.path().join("x\nend\nparam nodes=7 ");
    std::fs::create_dir(&evil).unwrap();
    let core = buggy_core(&evil);
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let core_arg = core.to_str().unwrap();
    let args = [
        "check",
        "--core",
        core_arg,
        "requests=2",
        "--replay-out",
        "bug.cmc",
    ];
    cmc_exiting(&args, &run, 1);
    let file = std::fs::read_to_string(run.join("bug.cmc")).unwrap();
    assert_eq!(
        file.lines().filter(|l| l.starts_with("end")).count(),
        1,
        "{file}"
    );
    assert!(
        !file.lines().any(|l| l.starts_with("param nodes=7")),
        "{file}"
    );
    // Replayed from another directory, through the same library.
    let (stdout, _) = cmc_exiting(&["replay", "run/bug.cmc"], dir.path(), 1);
    assert!(stdout.contains("AckedIsDurable"), "{stdout}");
}

/// Interchangeable nodes are checked against every other parameter once all
/// are read, in any order: a later `clients=` that makes them differ is
/// refused with the reason (it once ended the supervised child in a panic,
/// reported as a core fault), and `clients=` may follow `symmetry=`.
#[test]
fn symmetry_is_judged_on_all_the_parameters_whatever_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "check",
        "--core",
        "rust:reqack",
        "--nodes",
        "3",
        "requests=1",
    ];
    let refused = [&base[..], &["symmetry=1,2", "clients=1"]].concat();
    let output = cmc_within(&refused, dir.path(), Duration::from_secs(20));
    assert_refused(
        &output,
        &refused,
        "symmetry=1,2: nodes 1 and 2 differ in core, clients or crash_nodes",
    );
    let accepted = [&base[..], &["symmetry=1,2", "clients=1,2"]].concat();
    let output = cmc_within(&accepted, dir.path(), Duration::from_secs(60));
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
}
