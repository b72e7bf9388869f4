//! A panic inside a model is a failing verdict that names the action and the
//! state it happened on, with the panic's message; never a pass, never a
//! bare `Any { .. }`.

use cmc_search::test_support::{Counter, Panic};
use cmc_search::{Checker, Verdict};

/// The counter to 5 that panics in `place` at `at`.
fn fragile(place: Panic, at: u8) -> Counter {
    Counter::to(5).panicking(place, at)
}

fn error_of(model: Counter, workers: usize) -> String {
    match Checker::new(model).workers(workers).run().verdict {
        Verdict::Error { message } => message,
        other => panic!("a panicking model must not give {other:?}"),
    }
}

#[test]
fn a_panicking_step_is_reported_with_its_action_and_state() {
    for workers in [1, 2] {
        let message = error_of(fragile(Panic::Step, 2), workers);
        assert_eq!(
            message,
            "the model panicked taking action 1 from state [state = Count { value: 2 }]: cannot count past 2"
        );
    }
}

#[test]
fn a_panicking_invariant_is_reported_with_its_state() {
    let message = error_of(fragile(Panic::Invariant, 3), 2);
    assert_eq!(
        message,
        "the model panicked checking the invariants of state [state = Count { value: 3 }]: the invariant cannot read 3"
    );
}

#[test]
#[should_panic(expected = "cannot count past 1")]
fn assert_properties_fails_on_a_panicking_model() {
    let _ = Checker::new(fragile(Panic::Step, 1)).assert_properties();
}

#[test]
fn a_panic_in_a_random_walk_keeps_its_message() {
    let outcome = Checker::new(fragile(Panic::Step, 2))
        .simulate(4, 10, 7)
        .workers(2)
        .run();
    let Verdict::Error { message } = outcome.verdict else {
        panic!("a panicking model must not give {:?}", outcome.verdict)
    };
    assert_eq!(message, "the model panicked: cannot count past 2");
}
