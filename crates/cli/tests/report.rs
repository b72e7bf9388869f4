//! `--report FILE.html` and `--dump-dot FILE`: what a person looks at
//! instead of reading, checked against the same run's JSON report.

mod common;

use std::path::Path;

use common::{cmc, cmc_exiting, text};
use serde_json::Value;

/// Runs `cmc args --json` in `dir`, expecting exit code `code`; the JSON report.
fn json_run(args: &[&str], dir: &Path, code: i32) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (stdout, _) = cmc_exiting(&all, dir, code);
    serde_json::from_str(&stdout).expect("the JSON report parses")
}

/// Asserts that `page` fetches nothing: no address on the network, no
/// external style sheet, script or image.
fn assert_self_contained(page: &str) {
    for needle in [
        "http://", "https://", "src=", "href=", "<link", "@import", "//cdn",
    ] {
        assert!(
            !page.contains(needle),
            "the page must not fetch anything ({needle})"
        );
    }
    assert_eq!(
        page.matches("url(").count(),
        page.matches("url(#").count(),
        "only in-page references"
    );
}

/// `text` as the HTML report escapes it.
fn escaped(text: &str) -> String {
    cmc_search::escape_html(text)
}

#[test]
fn a_passing_run_reports_its_verdict_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(
        &["check", "die-hard", "--report", "pass.html"],
        dir.path(),
        0,
    );
    let page = std::fs::read_to_string(dir.path().join("pass.html")).unwrap();
    assert_self_contained(&page);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("data-verdict=\"pass\""));
    assert!(page.contains("Model checking completed. No error has been found."));
    assert!(page.contains("complete: every reachable state"));
    for count in ["distinct_states", "states_generated", "depth"] {
        let row = format!("<td class=\"mono\">{}</td>", json[count]);
        assert!(page.contains(&row), "{count}: {row}");
    }
    assert!(!page.contains("id=\"counterexample\""));
}

/// A passing run names every property it checked, in its text, JSON and
/// HTML reports: a property set that failed to attach cannot look like a pass.
#[test]
fn a_passing_run_lists_the_properties_it_checked() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["check", "two-phase", "RM=3", "--report", "pass.html"];
    let json = json_run(&args, dir.path(), 0);
    let checked = ["always TCConsistent", "always TPTypeOK"];
    for property in checked {
        assert!(
            json["properties"]
                .as_array()
                .unwrap()
                .contains(&property.into()),
            "{json}"
        );
    }
    let page = std::fs::read_to_string(dir.path().join("pass.html")).unwrap();
    for property in checked {
        let row =
            format!("<td class=\"mono\">{property}</td><td>held in every reachable state</td>");
        assert!(page.contains(&row), "{row}");
    }
    let (stdout, _) = cmc_exiting(&["check", "two-phase", "RM=3"], dir.path(), 0);
    assert!(
        stdout.contains("Properties checked: always TPTypeOK, always TCConsistent."),
        "{stdout}"
    );
}

/// A replayed trace is a trace, not a search: its reports never claim
/// every reachable state, even for a trace of one state.
#[test]
fn a_replayed_trace_never_reads_as_a_complete_search() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("one.cmc-trace"),
        "cmc-replay 2\nmodel die-hard\nparam INVARIANTS=TypeOK\ninit 0\nend\n",
    )
    .unwrap();
    let (stdout, _) = cmc_exiting(
        &["replay", "one.cmc-trace", "--report", "one.html"],
        dir.path(),
        0,
    );
    assert!(!stdout.contains("Model checking completed"), "{stdout}");
    assert!(stdout.contains("Replay completed"), "{stdout}");
    let page = std::fs::read_to_string(dir.path().join("one.html")).unwrap();
    assert!(!page.contains("every reachable state"), "{page}");
    assert!(page.contains("a replayed trace"), "{page}");
}

#[test]
fn a_violation_shows_every_step_and_its_changes() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--report",
            "violation.html",
        ],
        dir.path(),
        1,
    );
    let page = std::fs::read_to_string(dir.path().join("violation.html")).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("data-verdict=\"violated\""));
    assert!(page.contains("Error: Invariant NotSolved is violated."));
    assert!(
        page.contains("bounded: "),
        "a run stopped at a violation is not complete"
    );
    let steps = json["counterexample"]["steps"].as_array().unwrap();
    assert!(steps.len() > 1);
    // The steps in order, each with its action and every change before -> after.
    let mut at = 0;
    for step in steps {
        let anchor = format!("id=\"step-{}\"", step["number"]);
        at += page[at..]
            .find(&anchor)
            .unwrap_or_else(|| panic!("{anchor}"));
        let end = page[at..].find("</div>").unwrap() + at;
        let block = &page[at..end];
        if let Some(action) = step["action"].as_str() {
            assert!(block.contains(&escaped(action)), "{block}");
        }
        for change in step["changes"].as_array().unwrap() {
            let row = format!(
                "<td class=\"mono\">{}</td><td class=\"mono before\">{}</td><td class=\"mono after\">{}</td>",
                escaped(change["name"].as_str().unwrap()),
                escaped(change["before"].as_str().unwrap_or("(absent)")),
                escaped(change["after"].as_str().unwrap_or("(absent)"))
            );
            assert!(block.contains(&row), "{row} in {block}");
        }
    }
}

#[test]
fn a_replayed_trace_has_a_report_too() {
    let dir = tempfile::tempdir().unwrap();
    json_run(
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--replay-out",
            "dh.cmc-trace",
        ],
        dir.path(),
        1,
    );
    // One comment says which program replays the file.
    let file = std::fs::read_to_string(dir.path().join("dh.cmc-trace")).unwrap();
    let comments: Vec<&str> = file.lines().filter(|line| line.starts_with('#')).collect();
    assert_eq!(
        comments,
        ["# written by cmc: run it again with `cmc replay FILE`"]
    );
    let replay = cmc(
        &["replay", "dh.cmc-trace", "--report", "replay.html"],
        dir.path(),
    );
    assert_eq!(replay.status.code(), Some(1), "{:?}", text(&replay));
    let page = std::fs::read_to_string(dir.path().join("replay.html")).unwrap();
    assert_self_contained(&page);
    assert!(page.contains("Error: Invariant NotSolved is violated."));
    assert!(page.contains("<td class=\"mono\">replay</td>"));
}

/// Number of lifelines in the page's sequence chart.
fn lifelines(page: &str) -> usize {
    page.matches("class=\"lifeline\"").count()
}

#[test]
fn a_world_violation_has_a_sequence_chart_with_one_lifeline_per_node() {
    let dir = tempfile::tempdir().unwrap();
    for nodes in ["2", "3"] {
        // Through the supervised child, as every check of cores runs.
        let json = json_run(
            &[
                "check",
                "--core",
                "rust:reqack-bug2",
                "--nodes",
                nodes,
                "requests=2",
                "--replay-out",
                "bug2.cmc",
                "--report",
                "world.html",
            ],
            dir.path(),
            1,
        );
        let page = std::fs::read_to_string(dir.path().join("world.html")).unwrap();
        assert_self_contained(&page);
        assert!(page.contains("<svg"), "the chart is inline SVG");
        assert_eq!(lifelines(&page), nodes.parse::<usize>().unwrap());
        let deliveries = json["counterexample"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|step| {
                step["action"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("DELIVER"))
            })
            .count();
        assert!(deliveries > 0);
        assert_eq!(page.matches("class=\"delivery\"").count(), deliveries);
        let replay = cmc(
            &["replay", "bug2.cmc", "--report", "replay.html"],
            dir.path(),
        );
        assert_eq!(replay.status.code(), Some(1), "{:?}", text(&replay));
        let replayed = std::fs::read_to_string(dir.path().join("replay.html")).unwrap();
        assert_eq!(lifelines(&replayed), nodes.parse::<usize>().unwrap());
    }
}

/// The `sN -> sM [label="..."...]` lines of a DOT file.
fn edges(dot: &str) -> Vec<&str> {
    dot.lines().filter(|line| line.contains(" -> ")).collect()
}

#[test]
fn the_dot_graph_has_a_node_per_state_and_an_edge_per_successor() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(
        &["check", "die-hard", "--dump-dot", "die-hard.dot"],
        dir.path(),
        0,
    );
    let dot = std::fs::read_to_string(dir.path().join("die-hard.dot")).unwrap();
    assert!(dot.starts_with("digraph \"die-hard\" {") && dot.trim_end().ends_with('}'));
    let nodes = dot
        .lines()
        .filter(|line| line.trim_start().starts_with('s') && line.contains("[label="))
        .filter(|line| !line.contains(" -> "))
        .count();
    let initial = dot.matches("peripheries=2").count();
    assert_eq!(nodes as u64, json["distinct_states"].as_u64().unwrap());
    assert_eq!(initial, 1, "DieHard has one initial state");
    assert_eq!(
        (edges(&dot).len() + initial) as u64,
        json["states_generated"].as_u64().unwrap(),
        "every successor is an edge; states generated also counts the initial state"
    );
    assert!(
        !dot.contains("color=red"),
        "no counterexample, nothing highlighted"
    );
}

#[test]
fn the_dot_graph_highlights_the_counterexample_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--dump-dot",
            "solved.dot",
        ],
        dir.path(),
        1,
    );
    let dot = std::fs::read_to_string(dir.path().join("solved.dot")).unwrap();
    let highlighted: Vec<&str> = edges(&dot)
        .into_iter()
        .filter(|line| line.contains("penwidth=3"))
        .collect();
    let actions: Vec<&str> = json["counterexample"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|step| step["action"].as_str())
        .collect();
    assert_eq!(highlighted.len(), actions.len());
    // Follow the highlighted edges from the initial state: the same actions.
    let mut at = "s0".to_string();
    for action in actions {
        let edge = highlighted
            .iter()
            .find(|line| {
                line.trim_start().starts_with(&format!("{at} -> "))
                    && line.contains(&format!("label=\"{action}\""))
            })
            .unwrap_or_else(|| panic!("no highlighted {action} from {at}"));
        at = edge
            .split(" -> ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .into();
    }
}

#[test]
fn past_the_cap_no_dot_file_and_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(&["check", "die-hard"], dir.path(), 0);
    let states = json["distinct_states"].as_u64().unwrap();
    let below = (states - 1).to_string();
    let output = cmc(
        &[
            "check",
            "die-hard",
            "--dump-dot",
            "capped.dot",
            "--dump-dot-max",
            &below,
        ],
        dir.path(),
    );
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("more than {below} states")) && stderr.contains("no DOT file"),
        "{stderr}"
    );
    assert!(!dir.path().join("capped.dot").exists());
    let exact = states.to_string();
    let output = cmc(
        &[
            "check",
            "die-hard",
            "--dump-dot",
            "exact.dot",
            "--dump-dot-max",
            &exact,
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{:?}", text(&output));
    assert!(dir.path().join("exact.dot").exists());
    let refused = cmc(
        &["check", "die-hard", "--simulate", "--dump-dot", "x.dot"],
        dir.path(),
    );
    assert_eq!(refused.status.code(), Some(2), "only a breadth-first check");
}

#[test]
fn an_output_that_would_destroy_an_input_or_cannot_be_written_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.cmc-trace"), "cmc-replay 2\n").unwrap();
    for args in [
        vec!["check", "die-hard", "--report", "."],
        vec![
            "check",
            "die-hard",
            "--replay-out",
            "keep.cmc-trace",
            "--report",
            "keep.cmc-trace",
        ],
        vec![
            "check",
            "die-hard",
            "--report",
            "same",
            "--dump-dot",
            "same",
        ],
        vec!["replay", "keep.cmc-trace", "--report", "keep.cmc-trace"],
    ] {
        let output = cmc(&args, dir.path());
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("refusing"), "{stderr}");
        assert!(stdout.is_empty(), "refused before any work: {stdout}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.cmc-trace")).unwrap(),
        "cmc-replay 2\n"
    );
    // A report that cannot be written: the violation is still shown in full.
    let (stdout, stderr) = cmc_exiting(
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--report",
            "missing/r.html",
        ],
        dir.path(),
        2,
    );
    assert!(stdout.contains("Error: Invariant NotSolved is violated."));
    assert!(
        stderr.contains("cannot write the HTML report missing/r.html"),
        "{stderr}"
    );
}

#[test]
fn a_world_check_writes_its_graph_from_the_supervised_child() {
    let dir = tempfile::tempdir().unwrap();
    let json = json_run(
        &[
            "check",
            "--core",
            "rust:reqack-bug2",
            "--nodes",
            "2",
            "requests=1",
            "--replay-out",
            "bug2.cmc",
            "--dump-dot",
            "world.dot",
        ],
        dir.path(),
        1,
    );
    let dot = std::fs::read_to_string(dir.path().join("world.dot")).unwrap();
    let steps = json["counterexample"]["steps"].as_array().unwrap().len();
    let highlighted = edges(&dot)
        .into_iter()
        .filter(|line| line.contains("penwidth=3"))
        .count();
    assert_eq!(highlighted, steps - 1);
    // The check stopped at the violation; the graph holds every reachable state.
    let nodes = dot.matches("[label=").count() - edges(&dot).len();
    assert!(nodes as u64 >= json["distinct_states"].as_u64().unwrap());
}

/// With `--json`, a run that ends in error still prints a JSON report: the
/// error object, with the exit code of an error.
#[test]
fn a_run_error_is_a_json_object_under_json() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["check", "two-phase", "RM=7", "--max-memory", "1M"];
    let json = json_run(&args, dir.path(), 2);
    assert_eq!(json["verdict"], "error", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("memory budget"), "{message}");
}
