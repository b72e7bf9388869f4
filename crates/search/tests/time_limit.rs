//! `time_limit`: every strategy ends a search that would not end by itself
//! with a "bounded by time" verdict that says how far it got, and a
//! violation found in time is still reported as such.

use std::time::{Duration, Instant};

use cmc_model::{Encode, Model, Property};
use cmc_search::{Checker, Verdict};

/// Two counters that grow without end: a search of it never finishes.
struct Endless {
    /// An invariant "the first counter stays below this", when set.
    below: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Pair {
    a: u32,
    b: u32,
}

impl Model for Endless {
    type State = Pair;
    type Action = bool;
    fn name(&self) -> String {
        "endless".into()
    }
    fn init_states(&self, out: &mut Vec<Pair>) {
        out.push(Pair { a: 0, b: 0 });
    }
    fn actions(&self, _: &Pair, out: &mut Vec<bool>) {
        out.extend([true, false]);
    }
    fn next_state(&self, s: &Pair, first: &bool) -> Option<Pair> {
        Some(match first {
            true => Pair { a: s.a + 1, b: s.b },
            false => Pair { a: s.a, b: s.b + 1 },
        })
    }
    fn properties(&self) -> Vec<Property<Self>> {
        match self.below {
            Some(limit) => vec![Property::always("a below limit", move |_, s: &Pair| {
                s.a < limit
            })],
            None => Vec::new(),
        }
    }
}

const LIMIT: Duration = Duration::from_millis(300);

/// Runs `checker` and checks that it stopped at its time limit, in about
/// that time, with some progress to show.
fn assert_bounded_by_time(checker: Checker<Endless>) {
    let started = Instant::now();
    let outcome = checker.time_limit(LIMIT).run();
    let took = started.elapsed();
    assert_eq!(
        outcome.verdict,
        Verdict::TimeLimit { checkpoint: None },
        "{outcome:?}"
    );
    assert!(!outcome.stats.complete);
    assert!(outcome.stats.states_generated > 0 && outcome.stats.depth > 1);
    assert!(took >= LIMIT && took < LIMIT * 20, "took {took:?}");
}

#[test]
fn breadth_first_search_stops_at_its_time_limit() {
    assert_bounded_by_time(Checker::new(Endless { below: None }).workers(2));
}

#[test]
fn depth_first_search_stops_at_its_time_limit() {
    assert_bounded_by_time(Checker::new(Endless { below: None }).dfs());
}

#[test]
fn random_walks_stop_at_their_time_limit() {
    let checker = Checker::new(Endless { below: None }).simulate(u64::MAX, 50, 1);
    assert_bounded_by_time(checker.workers(2));
}

#[test]
fn a_violation_found_within_the_limit_is_reported() {
    let outcome = Checker::new(Endless { below: Some(5) })
        .time_limit(Duration::from_secs(60))
        .run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "a below limit"),
        "{outcome:?}"
    );
    assert_eq!(outcome.counterexample.unwrap().len(), 6);
}

#[test]
fn a_checkpointed_search_saves_one_at_its_time_limit_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("ck");
    let outcome = Checker::new(Endless { below: Some(1_500) })
        .workers(2)
        .checkpoint(&checkpoint, Duration::from_secs(3600))
        .time_limit(Duration::from_millis(50))
        .run();
    assert_eq!(
        outcome.verdict,
        Verdict::TimeLimit {
            checkpoint: Some(checkpoint.clone())
        }
    );
    let resumed = Checker::new(Endless { below: Some(1_500) })
        .workers(2)
        .resume(&checkpoint, Duration::from_secs(3600))
        .run();
    assert!(
        matches!(resumed.verdict, Verdict::Violated { .. }),
        "{resumed:?}"
    );
    assert_eq!(resumed.counterexample.unwrap().len(), 1_501);
}
