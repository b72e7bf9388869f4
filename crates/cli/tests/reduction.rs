//! `--reduction` and `--sleep-sets` on the command line: the report says
//! whether the search reduced, or why not, and options they do not go with
//! are refused.

mod common;

use common::{check_args, cmc_exiting};

/// The core of the World these tests check ([`check_args`]: two nodes, one
/// request).
const WORLD: &str = "rust:reqack";

/// reqack's own property `AckedIsDurable` reads node state: the run
/// explores every step and says so, in text and JSON.
#[test]
fn a_refused_reduction_is_reported_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let args = check_args(WORLD, &["--reduction", "--json"]);
    let (out, _) = cmc_exiting(&args, dir.path(), 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reduction = report["reduction"].as_str().unwrap();
    assert!(
        reduction.starts_with("asked for but off") && reduction.contains("AckedIsDurable"),
        "{reduction}"
    );
    let args = check_args(WORLD, &["--reduction"]);
    let (text, _) = cmc_exiting(&args, dir.path(), 0);
    assert!(
        text.contains("Partial-order reduction: asked for but off"),
        "{text}"
    );
    let (plain, _) = cmc_exiting(&check_args(WORLD, &[]), dir.path(), 0);
    assert!(!plain.contains("Partial-order reduction"), "{plain}");
}

#[test]
fn reduction_is_for_breadth_first_search_only() {
    let dir = tempfile::tempdir().unwrap();
    for other in [&["--dfs"][..], &["--simulate", "--seed", "1"]] {
        let args = [check_args(WORLD, &["--reduction"]), other.to_vec()].concat();
        let (_, err) = cmc_exiting(&args, dir.path(), 2);
        assert!(err.contains("--reduction"), "{err}");
    }
}

/// The count a line of `text` gives before `what` ("87 distinct states").
fn count_before(text: &str, what: &str) -> u64 {
    let at = text
        .find(what)
        .unwrap_or_else(|| panic!("no {what}: {text}"));
    let number = text[..at]
        .trim_end()
        .rsplit(|c: char| c.is_whitespace() || c == ',')
        .next()
        .unwrap();
    number
        .parse()
        .unwrap_or_else(|_| panic!("{number}: {text}"))
}

/// reqack's property reads node state, which sleep sets do not mind: every
/// state is found, with steps left asleep, and the report says so. The
/// runs check deadlocks: a state whose steps all sleep is not stuck.
#[test]
fn sleep_sets_find_every_state_and_say_how_many_steps_slept() {
    let dir = tempfile::tempdir().unwrap();
    let world = check_args(WORLD, &["crashes=1", "restarts=1"]);
    let (full, _) = cmc_exiting(&world, dir.path(), 0);
    let args = [&world[..], &["--sleep-sets"]].concat();
    let (asleep, _) = cmc_exiting(&args, dir.path(), 0);
    assert_eq!(
        count_before(&full, " distinct states"),
        count_before(&asleep, " distinct states")
    );
    assert!(
        count_before(&asleep, " states generated") < count_before(&full, " states generated"),
        "{asleep}"
    );
    let slept = count_before(&asleep, " enabled steps left asleep");
    assert!(slept > 0, "{asleep}");
    assert!(
        asleep.contains("Partial-order reduction: on (sleep sets)"),
        "{asleep}"
    );
}

#[test]
fn sleep_sets_are_for_breadth_first_search_and_not_combined_with_persistent_sets() {
    let dir = tempfile::tempdir().unwrap();
    for other in [&["--dfs"][..], &["--reduction"]] {
        let args = [check_args(WORLD, &["--sleep-sets"]), other.to_vec()].concat();
        let (_, err) = cmc_exiting(&args, dir.path(), 2);
        assert!(err.contains("--sleep-sets"), "{err}");
    }
}
