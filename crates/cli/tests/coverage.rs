//! `--coverage` on the command reference's World example (`docs/cli.md`),
//! in text and JSON, for BFS and random walks: every environment action
//! kind with its counts, the kinds never taken, and a warning for a budgeted
//! fault that never occurred.

mod common;

use common::cmc_exiting;

const WORLD: [&str; 7] = [
    "check",
    "--core",
    "rust:reqack",
    "--nodes",
    "2",
    "requests=2",
    "drops=1",
];

#[test]
fn bfs_coverage_of_the_readme_world_example() {
    let dir = tempfile::tempdir().unwrap();
    let args = [&WORLD[..], &["--coverage", "--json"]].concat();
    let (out, _) = cmc_exiting(&args, dir.path(), 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kinds = report["coverage"]["kinds"].as_array().unwrap();
    let kind = |name: &str| kinds.iter().find(|k| k["kind"] == name).unwrap().clone();
    for name in ["CLIENT", "DELIVER", "DROP", "FLUSH"] {
        assert!(kind(name)["taken"].as_u64().unwrap() > 0, "{name}: {out}");
    }
    assert!(kind("DROP")["fault"].as_bool().unwrap());
    // No crash budget: CRASH is not a kind this World can take. reqack never
    // asks for a random choice nor schedules a wake-up.
    assert!(kinds.iter().all(|k| k["kind"] != "CRASH"), "{out}");
    let taken: u64 = kinds.iter().map(|k| k["taken"].as_u64().unwrap()).sum();
    assert_eq!(taken, report["distinct_states"].as_u64().unwrap() - 1);
    assert_eq!(
        report["coverage"]["never_taken"],
        serde_json::json!(["CHOOSE", "WAKE"]),
        "{out}"
    );

    let args = [&WORLD[..], &["--coverage"]].concat();
    let (text, _) = cmc_exiting(&args, dir.path(), 0);
    assert!(text.contains("Coverage:"), "{text}");
    assert!(text.contains("to new state"), "{text}");
    assert!(text.contains("Never taken: CHOOSE, WAKE."), "{text}");
}

#[test]
fn a_budgeted_fault_that_never_occurred_is_a_warning() {
    // One walk of one step: the only step is the first client request, so
    // the drop budget is never used.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        &WORLD[..],
        &[
            "--coverage",
            "--simulate",
            "--walks",
            "1",
            "--walk-length",
            "1",
        ],
    ]
    .concat();
    let (text, _) = cmc_exiting(&args, dir.path(), 0);
    assert!(
        text.contains("Warning: fault DROP has a budget but never occurred"),
        "{text}"
    );
    assert!(text.contains("Walks: 1 walk, 1 step,"), "{text}");
    assert!(text.contains("Faults injected: none."), "{text}");
}

#[test]
fn walk_options_without_their_search_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, err) = cmc_exiting(&["check", "die-hard", "--swarm"], dir.path(), 2);
    assert!(err.contains("--swarm"), "{err}");
    let (_, err) = cmc_exiting(
        &["check", "die-hard", "--frontier-walks", "10"],
        dir.path(),
        2,
    );
    assert!(err.contains("--max-depth"), "{err}");
    let (_, err) = cmc_exiting(
        &["check", "die-hard", "--walks-from", "x.cmc-trace"],
        dir.path(),
        2,
    );
    assert!(err.contains("--simulate"), "{err}");
    let (_, err) = cmc_exiting(
        &[
            "check",
            "die-hard",
            "--simulate",
            "--walks-from",
            "missing.cmc-trace",
        ],
        dir.path(),
        2,
    );
    assert!(err.contains("missing.cmc-trace"), "{err}");
}

#[test]
fn the_html_report_shows_coverage_and_walks() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        &WORLD[..],
        &[
            "--coverage",
            "--simulate",
            "--swarm",
            "--walks",
            "50",
            "--report",
            "walks.html",
        ],
    ]
    .concat();
    cmc_exiting(&args, dir.path(), 0);
    let page = std::fs::read_to_string(dir.path().join("walks.html")).unwrap();
    assert!(page.contains("<table id=\"coverage\">"), "{page}");
    assert!(page.contains("<td class=\"mono\">DELIVER</td>"), "{page}");
    assert!(page.contains("<table id=\"walks\">"), "{page}");
    assert!(
        page.contains("<tr><td>walks</td><td>50</td></tr>"),
        "{page}"
    );
    assert!(page.contains("drawn per walk (swarm)"), "{page}");
}
