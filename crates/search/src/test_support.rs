//! Toy models for tests of the search and of the layers above it (the
//! `test-support` feature; this crate's own tests enable it).
//!
//! [`Counter`] counts from 0 to a last value, one step at a time; each
//! setting gives it one thing a test is about: a panic in a chosen place
//! ([`Counter::panicking`]), a property that is not a function of its
//! state ([`Counter::fickle`]), a step property it violates
//! ([`Counter::forbidding_step_from`]), a deadlock at its end
//! ([`Counter::deadlocking`]), or steps of one or two, so that its
//! shortest paths are not its only ones ([`Counter::by_one_or_two`]). A
//! test that needs a model of another shape
//! keeps it next to itself. [`fingerprints_on_disk`] are the options of a
//! search that keeps most of its fingerprints on disk; [`print_outcome`]
//! shows what a long test's run found and how long it took.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cmc_model::{Encode, Model, Property, StateView};

use crate::{Outcome, SearchOptions};

/// Prints `outcome`'s verdict and figures, and the time since `start`, to
/// standard error (shown with `--nocapture`, or when the test fails).
pub fn print_outcome<M: Model>(outcome: &Outcome<M>, start: Instant) {
    eprintln!(
        "{:?} {:?} {:?}",
        outcome.verdict,
        outcome.stats,
        start.elapsed()
    );
}

/// The options of a search with `workers` workers that keeps its
/// fingerprints on disk in `dir`, behind a table of 4,096 slots: a search
/// of more states than that flushes the table to disk.
pub fn fingerprints_on_disk(workers: usize, dir: &Path) -> SearchOptions {
    SearchOptions {
        workers,
        table_capacity: 4096,
        fingerprints_on_disk: true,
        trace_dir: Some(dir.to_path_buf()),
        ..SearchOptions::default()
    }
}

/// The state of a counting model: one number.
#[derive(Clone, Debug, PartialEq, Encode)]
pub struct Count {
    /// How far the count has come.
    pub value: u8,
}

/// Where a [`Counter`] panics, and with which message (`N` is the value
/// it panics at).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Panic {
    /// Its step from `N`: "cannot count past N".
    Step,
    /// Its invariant `Small`, on `N`: "the invariant cannot read N".
    Invariant,
    /// The description of `N`: "cannot describe N".
    Description,
}

/// A property named `Fickle` that a [`Counter`] checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fickle {
    /// An invariant that fails on its `fails_on`-th call only.
    Invariant,
    /// A step property that fails on its `fails_on`-th call only.
    Step,
    /// A witness reached on its `fails_on`-th call only.
    Witness,
    /// Not fickle: an invariant false at 3 on every call.
    Steady,
}

/// A counter from 0 to `last`, one step (the action `1`) at a time;
/// `last` is a legitimate end, so `last + 1` states and no deadlock.
/// Without a setting it checks no property.
pub struct Counter {
    last: u8,
    steps: &'static [u8],
    deadlock: bool,
    panic: Option<(Panic, u8)>,
    fickle: Option<(Fickle, u64)>,
    forbidden_step: Option<u8>,
    /// Calls of the fickle property so far.
    calls: AtomicU64,
}

impl Counter {
    /// The counter from 0 to `last`, flawless.
    pub fn to(last: u8) -> Counter {
        Counter {
            last,
            steps: &[1],
            deadlock: false,
            panic: None,
            fickle: None,
            forbidden_step: None,
            calls: AtomicU64::new(0),
        }
    }

    /// This counter, stepping by one or by two (the actions `1` and `2`),
    /// never past `last`.
    pub fn by_one_or_two(self) -> Counter {
        Counter {
            steps: &[1, 2],
            ..self
        }
    }

    /// This counter, with `last` not a legitimate end: a deadlock.
    pub fn deadlocking(self) -> Counter {
        Counter {
            deadlock: true,
            ..self
        }
    }

    /// This counter, checking the step property `NoStepFrom`, which
    /// every step from `value` violates.
    pub fn forbidding_step_from(self, value: u8) -> Counter {
        Counter {
            forbidden_step: Some(value),
            ..self
        }
    }

    /// This counter, panicking in `place` at the value `at`.
    pub fn panicking(self, place: Panic, at: u8) -> Counter {
        Counter {
            panic: Some((place, at)),
            ..self
        }
    }

    /// This counter, checking the property `Fickle` of kind `fickle`,
    /// whose `fails_on`-th call (counted from 1) answers differently.
    pub fn fickle(self, fickle: Fickle, fails_on: u64) -> Counter {
        Counter {
            fickle: Some((fickle, fails_on)),
            ..self
        }
    }

    /// Panics with `place`'s message if this counter panics there at `value`.
    fn panic_at(&self, place: Panic, value: u8) {
        if self.panic == Some((place, value)) {
            match place {
                Panic::Step => panic!("cannot count past {value}"),
                Panic::Invariant => panic!("the invariant cannot read {value}"),
                Panic::Description => panic!("cannot describe {value}"),
            }
        }
    }

    /// Whether this call of the fickle property is the one that answers
    /// differently.
    fn odd_call(&self) -> bool {
        let fails_on = self.fickle.map_or(0, |(_, fails_on)| fails_on);
        self.calls.fetch_add(1, Ordering::SeqCst) + 1 == fails_on
    }
}

impl Model for Counter {
    type State = Count;
    type Action = u8;

    fn name(&self) -> String {
        "counter".into()
    }

    fn init_states(&self, out: &mut Vec<Count>) {
        out.push(Count { value: 0 })
    }

    fn actions(&self, _: &Count, out: &mut Vec<u8>) {
        out.extend_from_slice(self.steps)
    }

    fn next_state(&self, state: &Count, step: &u8) -> Option<Count> {
        self.panic_at(Panic::Step, state.value);
        let value = state.value.checked_add(*step)?;
        (value <= self.last).then_some(Count { value })
    }

    fn is_terminal(&self, state: &Count) -> bool {
        state.value == self.last && !self.deadlock
    }

    fn describe_state(&self, state: &Count) -> StateView {
        self.panic_at(Panic::Description, state.value);
        StateView::from_debug(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = Vec::new();
        if matches!(self.panic, Some((Panic::Invariant, _))) {
            properties.push(Property::always("Small", |model: &Counter, state| {
                model.panic_at(Panic::Invariant, state.value);
                true
            }));
        }
        properties.extend(self.forbidden_step.map(|from| {
            Property::step("NoStepFrom", move |_, pre: &Count, _, _| pre.value != from)
        }));
        properties.extend(self.fickle.map(|(fickle, _)| match fickle {
            Fickle::Invariant => Property::always("Fickle", |model: &Counter, _| !model.odd_call()),
            Fickle::Step => Property::step("Fickle", |model: &Counter, _, _, _| !model.odd_call()),
            Fickle::Witness => Property::sometimes("Fickle", |model: &Counter, _| model.odd_call()),
            Fickle::Steady => Property::always("Fickle", |_, state: &Count| state.value != 3),
        }));
        properties
    }
}
