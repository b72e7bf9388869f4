//! `cmc check --time-limit SECS`: a search that does not end in time stops
//! by itself with a "bounded by time" report (exit code 2, `complete:
//! false`, how far it got), on every strategy and engine, and for a World
//! of cores checked in a supervised child; so nobody needs to wrap cmc in
//! `timeout`.

mod common;

use common::{cmc, five_crashing_nodes, text};

/// Runs `cmc check ARGS --time-limit 1 --json` and returns its JSON report,
/// after checking it ended with exit code 2 and the `time-limit` verdict.
fn bounded_by_time(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend(["--time-limit", "1", "--json", "--workers", "2"]);
    let started = std::time::Instant::now();
    let output = cmc(&all, dir.path());
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(started.elapsed().as_secs() < 30, "{args:?} took too long");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stdout);
    assert_eq!(report["verdict"], "time-limit", "{stdout}");
    assert_eq!(report["complete"], false);
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("time limit of 1 s"),
        "{stdout}"
    );
    report
}

#[test]
fn a_breadth_first_search_says_how_far_it_got() {
    let report = bounded_by_time(&["two-phase", "RM=12"]);
    assert!(report["distinct_states"].as_u64().unwrap() > 1000);
    assert!(report["depth"].as_u64().unwrap() > 1);
    assert!(report["states_left_on_queue"].as_u64().unwrap() > 0);
}

#[test]
fn depth_first_search_and_random_walks_stop_too() {
    bounded_by_time(&["two-phase", "RM=12", "--dfs"]);
    let report = bounded_by_time(&["two-phase", "RM=12", "--simulate", "--walks", "1000000000"]);
    assert!(report["walks"]["walks"].as_u64().unwrap() > 0);
}

#[test]
fn the_timely_engine_stops_too() {
    bounded_by_time(&["two-phase", "RM=12", "--engine", "timely"]);
}

#[test]
fn a_world_of_cores_in_a_supervised_child_stops_too() {
    let report = bounded_by_time(&five_crashing_nodes("rust:paxos", &["--no-deadlock"]));
    assert!(report["distinct_states"].as_u64().unwrap() > 0);
}
