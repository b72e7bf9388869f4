//! The `cmc` command as a user meets it: exit codes, JSON, replay files and
//! one-line errors.

mod common;

use std::process::Output;

use common::{cmc, text};

fn stdout(output: &Output) -> String {
    text(output).0
}

fn stderr(output: &Output) -> String {
    text(output).1
}

/// The command of the 10^9-state run (bench/disk-set/README.md), with a
/// budget of 300,000 states instead of 10^9: fingerprints on disk within a
/// small memory budget, no traces, cut short and reported as such.
#[test]
fn the_billion_state_command_stops_at_its_budget_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let output = cmc(
        &[
            "check",
            "two-phase",
            "RM=12",
            "--workers",
            "2",
            "--disk-fingerprints",
            "--max-memory",
            "16M",
            "--no-trace",
            "--max-states",
            "300000",
            "--trace-dir",
            spill.to_str().unwrap(),
            "--json",
        ],
        dir.path(),
    );
    let (out, err) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["verdict"], "pass", "{report}");
    assert_eq!(report["complete"], false, "{report}");
    assert_eq!(report["bound"], "300000 distinct states", "{report}");
    let distinct = report["distinct_states"].as_u64().unwrap();
    assert!((300_000..320_000).contains(&distinct), "{distinct}");
    assert!(report["states_left_on_queue"].as_u64().unwrap() > 0);
    // The runs and spill files went with the search.
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0);
}

#[test]
fn list_prints_one_model_per_line_name_first() {
    let dir = tempfile::tempdir().unwrap();
    let output = cmc(&["list"], dir.path());
    assert_eq!(output.status.code(), Some(0));
    let names: Vec<String> = stdout(&output)
        .lines()
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .collect();
    for expected in ["die-hard", "tcommit", "two-phase", "paxos-commit"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
}

#[test]
fn a_passing_check_exits_0_with_tlc_style_summary() {
    let dir = tempfile::tempdir().unwrap();
    let output = cmc(
        &["check", "two-phase", "RM=3", "--workers", "2"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("Model checking completed. No error has been found."),
        "{text}"
    );
    assert!(
        text.contains("1146 states generated, 288 distinct states found, 0 states left on queue."),
        "{text}"
    );
    assert!(
        text.contains("The depth of the complete state graph search is 11."),
        "{text}"
    );
    assert!(text.contains("fingerprint collision"), "{text}");
}

#[test]
fn json_report_has_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    let output = cmc(&["check", "two-phase", "RM=4", "--json"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["distinct_states"], 1568);
    assert_eq!(report["depth"], 14);
    assert!(report["states_generated"].as_u64().unwrap() > 1568);
    assert!(report["wall_seconds"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_violation_exits_1_writes_a_replay_file_that_reproduces_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = cmc(
        &[
            "check",
            "two-phase",
            "RM=3",
            "INVARIANTS=NoRMCommitted",
            "--json",
            "--replay-out",
            "trace.cmc",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["verdict"], "violated");
    assert_eq!(report["property"], "NoRMCommitted");
    assert_eq!(report["counterexample"]["length"], 9);

    let replayed = cmc(&["replay", "trace.cmc", "--json"], dir.path());
    assert_eq!(replayed.status.code(), Some(1), "{}", stderr(&replayed));
    let report: serde_json::Value = serde_json::from_str(&stdout(&replayed)).unwrap();
    assert_eq!(report["property"], "NoRMCommitted");
    assert_eq!(report["counterexample"]["length"], 9);
}

#[test]
fn bad_input_exits_2_with_a_one_line_explanation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.cmc"),
        "cmc-replay 1\nmodel two-phase\ninit zero\nend\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("disabled.cmc"),
        "cmc-replay 1\nmodel two-phase\nparam RM=3\nparam INVARIANTS=TPTypeOK,TCConsistent\ninit 0\naction no-such-action\nend\n",
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["check", "no-such-model"], "unknown model `no-such-model`"),
        (&["check", "two-phase", "RM"], "NAME=VALUE"),
        (&["check", "two-phase", "RM=banana"], "RM"),
        (&["check", "two-phase", "--workers", "0"], "--workers"),
        (&["replay", "missing.cmc"], "cannot read the replay file"),
        (&["replay", "bad.cmc"], "bad.cmc: line 3"),
        (
            &["replay", "disabled.cmc"],
            "line 6: action `no-such-action` is not enabled",
        ),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, needle) in cases {
        let output = cmc(args, dir.path());
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(needle), "{args:?}: {message}");
        if args[0] != "frobnicate" {
            assert_eq!(message.trim().lines().count(), 1, "{args:?}: {message}");
        }
    }
}

#[test]
fn a_trace_of_another_programs_model_names_that_program() {
    let dir = tempfile::tempdir().unwrap();
    let file = "# written by mycheck: run it again with `mycheck replay FILE`\n\
                cmc-replay 2\nmodel token-ring\nparam N=3\ninit 0\naction Enter(n0)\nend\n";
    std::fs::write(dir.path().join("ring.cmc-trace"), file).unwrap();
    let output = cmc(&["replay", "ring.cmc-trace"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.starts_with("cmc: error: ring.cmc-trace: unknown model `token-ring`")
            && message
                .contains("written by `mycheck`: replay it with `mycheck replay ring.cmc-trace`"),
        "{message}"
    );
    // cmc's own traces say it wrote them, and replay in cmc.
    let output = cmc(
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--replay-out",
            "jugs.cmc-trace",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    let text = std::fs::read_to_string(dir.path().join("jugs.cmc-trace")).unwrap();
    assert!(text.starts_with("# written by cmc:"), "{text}");
    assert_eq!(
        cmc(&["replay", "jugs.cmc-trace"], dir.path()).status.code(),
        Some(1)
    );
}
