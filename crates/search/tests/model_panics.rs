//! A panic inside a model is a failing verdict that names the action and the
//! state it happened on, with the panic's message; never a pass, never a
//! bare `Any { .. }`.

use cmc_model::{Encode, Model, Property};
use cmc_search::{Checker, Verdict};

/// A counter whose step panics at `panic_at`, or whose invariant panics there.
struct Fragile {
    panic_at: u8,
    in_invariant: bool,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Count {
    value: u8,
}

impl Model for Fragile {
    type State = Count;
    type Action = u8;

    fn name(&self) -> String {
        "fragile".into()
    }
    fn init_states(&self, out: &mut Vec<Count>) {
        out.push(Count { value: 0 })
    }
    fn actions(&self, _: &Count, out: &mut Vec<u8>) {
        out.push(1)
    }
    fn next_state(&self, state: &Count, step: &u8) -> Option<Count> {
        if !self.in_invariant && state.value == self.panic_at {
            panic!("cannot count past {}", state.value);
        }
        (state.value < 5).then(|| Count {
            value: state.value + step,
        })
    }
    fn is_terminal(&self, state: &Count) -> bool {
        state.value == 5
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(
            "Small",
            |model: &Fragile, state: &Count| {
                assert!(
                    !model.in_invariant || state.value != model.panic_at,
                    "the invariant cannot read {}",
                    state.value
                );
                true
            },
        )]
    }
}

fn error_of(model: Fragile, workers: usize) -> String {
    match Checker::new(model).workers(workers).run().verdict {
        Verdict::Error { message } => message,
        other => panic!("a panicking model must not give {other:?}"),
    }
}

#[test]
fn a_panicking_step_is_reported_with_its_action_and_state() {
    for workers in [1, 2] {
        let message = error_of(
            Fragile {
                panic_at: 2,
                in_invariant: false,
            },
            workers,
        );
        assert_eq!(
            message,
            "the model panicked taking action 1 from state [state = Count { value: 2 }]: cannot count past 2"
        );
    }
}

#[test]
fn a_panicking_invariant_is_reported_with_its_state() {
    let message = error_of(
        Fragile {
            panic_at: 3,
            in_invariant: true,
        },
        2,
    );
    assert_eq!(
        message,
        "the model panicked checking the invariants of state [state = Count { value: 3 }]: the invariant cannot read 3"
    );
}

#[test]
#[should_panic(expected = "cannot count past 1")]
fn assert_properties_fails_on_a_panicking_model() {
    let _ = Checker::new(Fragile {
        panic_at: 1,
        in_invariant: false,
    })
    .assert_properties();
}

#[test]
fn a_panic_in_a_random_walk_keeps_its_message() {
    let outcome = Checker::new(Fragile {
        panic_at: 2,
        in_invariant: false,
    })
    .simulate(4, 10, 7)
    .workers(2)
    .run();
    let Verdict::Error { message } = outcome.verdict else {
        panic!("a panicking model must not give {:?}", outcome.verdict)
    };
    assert_eq!(message, "the model panicked: cannot count past 2");
}
