//! A property that is not a function of its state (it changes its mind)
//! never gives a verdict: a violation is confirmed on its counterexample
//! before it is reported, and with `check-determinism` every property is
//! evaluated twice. Either way the outcome is an error naming the property.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cmc_model::{Model, Property};
use cmc_search::{Checker, Verdict};

/// A counter from 0 to 9 whose properties hold everywhere, except on the
/// `fails_on`-th call of the fickle one (counted from 1).
struct Counter {
    /// Which property is fickle.
    fickle: Fickle,
    /// The call that answers "violated".
    fails_on: u64,
    calls: Arc<AtomicU64>,
}

#[derive(Clone, Copy, Debug)]
enum Fickle {
    Invariant,
    Step,
    /// A witness reached only on its `fails_on`-th call.
    Witness,
    /// Not fickle: an invariant false at 3 on every call.
    Steady,
}

impl Counter {
    fn new(fickle: Fickle, fails_on: u64) -> Counter {
        Counter {
            fickle,
            fails_on,
            calls: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Whether this call is the one that answers differently.
    fn odd_call(&self) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.fails_on
    }
}

impl Model for Counter {
    type State = u8;
    type Action = ();

    fn name(&self) -> String {
        "counter".into()
    }

    fn init_states(&self, out: &mut Vec<u8>) {
        out.push(0);
    }

    fn actions(&self, _: &u8, out: &mut Vec<()>) {
        out.push(());
    }

    fn next_state(&self, state: &u8, _: &()) -> Option<u8> {
        (*state < 9).then_some(state + 1)
    }

    fn is_terminal(&self, state: &u8) -> bool {
        *state == 9
    }

    fn properties(&self) -> Vec<Property<Self>> {
        match self.fickle {
            Fickle::Invariant => vec![Property::always("Fickle", |model: &Counter, _| {
                !model.odd_call()
            })],
            Fickle::Step => vec![Property::step("Fickle", |model: &Counter, _, _, _| {
                !model.odd_call()
            })],
            Fickle::Steady => vec![Property::always("Fickle", |_, state: &u8| *state != 3)],
            Fickle::Witness => vec![Property::sometimes("Fickle", |model: &Counter, _| {
                model.odd_call()
            })],
        }
    }
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
                ("bfs", Checker::new(Counter::new(fickle, 7)).bfs()),
                ("dfs", Checker::new(Counter::new(fickle, 7)).dfs()),
                (
                    "walks",
                    Checker::new(Counter::new(fickle, 7)).simulate(3, 20, 1),
                ),
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
        let outcome = Checker::new(Counter::new(Fickle::Steady, 0))
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
    let outcome = Checker::new(Counter::new(Fickle::Witness, 3))
        .workers(1)
        .run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    let outcome = Checker::new(Counter::new(Fickle::Witness, 3))
        .workers(1)
        .check_determinism(true)
        .run();
    assert_property_error(&outcome.verdict, "witness");
}
