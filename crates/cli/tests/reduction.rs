//! `--reduction` on the command line: the report says whether the search
//! reduced, or why not, and options it does not go with are refused.

mod common;

use common::cmc_exiting;

const WORLD: [&str; 6] = [
    "check",
    "--core",
    "rust:reqack",
    "--nodes",
    "2",
    "requests=1",
];

/// reqack's own property `AckedIsDurable` reads node state: the run
/// explores every step and says so, in text and JSON.
#[test]
fn a_refused_reduction_is_reported_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let args = [&WORLD[..], &["--reduction", "--json"]].concat();
    let (out, _) = cmc_exiting(&args, dir.path(), 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reduction = report["reduction"].as_str().unwrap();
    assert!(
        reduction.starts_with("asked for but off") && reduction.contains("AckedIsDurable"),
        "{reduction}"
    );
    let args = [&WORLD[..], &["--reduction"]].concat();
    let (text, _) = cmc_exiting(&args, dir.path(), 0);
    assert!(
        text.contains("Partial-order reduction: asked for but off"),
        "{text}"
    );
    let (plain, _) = cmc_exiting(&WORLD, dir.path(), 0);
    assert!(!plain.contains("Partial-order reduction"), "{plain}");
}

#[test]
fn reduction_is_for_breadth_first_search_only() {
    let dir = tempfile::tempdir().unwrap();
    for other in [&["--dfs"][..], &["--simulate", "--seed", "1"]] {
        let args = [&WORLD[..], &["--reduction"], other].concat();
        let (_, err) = cmc_exiting(&args, dir.path(), 2);
        assert!(err.contains("--reduction"), "{err}");
    }
}
