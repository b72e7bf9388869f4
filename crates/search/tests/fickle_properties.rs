//! A property that is not a function of its state (it changes its mind)
//! never gives a verdict: a violation is confirmed on its counterexample
//! before it is reported, and with `check-determinism` every property is
//! evaluated twice. Either way the outcome is an error naming the property.

use cmc_search::test_support::{Counter, Fickle};
use cmc_search::{Checker, Verdict};

/// The counter from 0 to 9 whose property `Fickle` is of kind `fickle`,
/// answering differently on its `fails_on`-th call.
fn counter(fickle: Fickle, fails_on: u64) -> Counter {
    Counter::to(9).fickle(fickle, fails_on)
}

fn assert_property_error(outcome_verdict: &Verdict, what: &str) {
    match outcome_verdict {
        Verdict::Error { message } => assert!(
            message.contains("PROPERTY ERROR") && message.contains("Fickle"),
            "{what}: {message}"
        ),
        other => panic!("{what}: expected a property error, got {other:?}"),
    }
}

/// An invariant or a step property failing only on its 7th call: the
/// violation is not confirmed on the counterexample, so every search
/// reports a property error instead of a false violation, with or without
/// `check-determinism`.
#[test]
fn a_violation_the_property_does_not_repeat_is_a_property_error() {
    for fickle in [Fickle::Invariant, Fickle::Step] {
        for determinism in [false, true] {
            let searches = [
                ("bfs", Checker::new(counter(fickle, 7)).bfs()),
                ("dfs", Checker::new(counter(fickle, 7)).dfs()),
                ("walks", Checker::new(counter(fickle, 7)).simulate(3, 20, 1)),
            ];
            for (name, checker) in searches {
                let outcome = checker.workers(1).check_determinism(determinism).run();
                let what = format!("{fickle:?} {name} check-determinism={determinism}");
                assert_property_error(&outcome.verdict, &what);
            }
        }
    }
}

/// A property that is violated whenever it is asked stays a violation:
/// the confirmation does not excuse a real one.
#[test]
fn a_steady_violation_is_still_reported() {
    for determinism in [false, true] {
        let outcome = Checker::new(counter(Fickle::Steady, 0))
            .workers(1)
            .check_determinism(determinism)
            .run();
        assert!(
            matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "Fickle"),
            "{:?}",
            outcome.verdict
        );
    }
}

/// A witness that answers "reached" once only: without
/// `check-determinism` it counts as reached (a witness's one answer is all
/// a plain run asks); with it, the second evaluation disagrees and the run
/// is a property error, not a pass.
#[test]
fn a_witness_that_changes_its_mind_is_a_property_error_under_check_determinism() {
    let outcome = Checker::new(counter(Fickle::Witness, 3)).workers(1).run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    let outcome = Checker::new(counter(Fickle::Witness, 3))
        .workers(1)
        .check_determinism(true)
        .run();
    assert_property_error(&outcome.verdict, "witness");
}
