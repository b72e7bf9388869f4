//! A model's properties, sorted by kind for the hot path, and what a search
//! has learned about them.
//!
//! A property must be a function of the state (or of the step) it is given.
//! One that is not would give a false violation, so a violation is
//! confirmed before it is reported ([`PropertySet::confirm`]: the property
//! is evaluated again on the counterexample), and with `check-determinism`
//! every property is evaluated twice wherever it is evaluated
//! ([`PropertySet::evaluating_twice`]). A property that changes its mind is
//! a property error, which names it: never a verdict.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cmc_model::property::{StatePredicate, StepPredicate};
use cmc_model::{Model, Property, PropertyKind};

use crate::{Counterexample, ViolationKind};

/// The properties of one model, split by kind, with the `sometimes`
/// witnesses reached so far (shared by all workers).
pub struct PropertySet<M: Model> {
    invariants: Vec<(usize, String, StatePredicate<M>)>,
    steps: Vec<(usize, String, StepPredicate<M>)>,
    witnesses: Vec<(String, StatePredicate<M>, AtomicBool)>,
    count: usize,
    /// Whether every evaluation is made twice (see the module text).
    twice: bool,
    /// The first property seen to change its mind, as the error's text.
    changed_mind: Mutex<Option<String>>,
}

/// A property that failed, with its rank in the model's declaration order
/// (deadlock ranks after every declared property).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Position in the model's declaration order (deadlock: after all).
    pub rank: usize,
    /// The property's name (`"deadlock"` for a deadlock).
    pub name: String,
    /// What kind of property failed.
    pub kind: ViolationKind,
}

impl<M: Model> PropertySet<M> {
    /// Sorts `properties` by kind, keeping declaration order as rank.
    pub fn new(properties: Vec<Property<M>>) -> PropertySet<M> {
        let count = properties.len();
        let mut set = PropertySet {
            invariants: Vec::new(),
            steps: Vec::new(),
            witnesses: Vec::new(),
            count,
            twice: false,
            changed_mind: Mutex::new(None),
        };
        for (rank, property) in properties.into_iter().enumerate() {
            match property.kind {
                PropertyKind::Always(f) => set.invariants.push((rank, property.name, f)),
                PropertyKind::Step(f) => set.steps.push((rank, property.name, f)),
                PropertyKind::Sometimes(f) => {
                    set.witnesses
                        .push((property.name, f, AtomicBool::new(false)))
                }
            }
        }
        set
    }

    /// Evaluates every property twice when `twice` (builder style; the
    /// searches do under `check-determinism`): a property that gives two
    /// answers on the same state stops the search, and
    /// [`confirm`](Self::confirm) then reports it as a property error.
    pub fn evaluating_twice(mut self, twice: bool) -> PropertySet<M> {
        self.twice = twice;
        self
    }

    /// `holds` evaluated on one state or step (twice when
    /// [`evaluating_twice`](Self::evaluating_twice), recording a property
    /// that changes its mind, which then counts as failed so that the
    /// search stops).
    #[inline]
    fn evaluate(&self, name: &str, holds: impl Fn() -> bool) -> bool {
        let first = holds();
        if self.twice && holds() != first {
            self.changed(name, first, "the same state or step");
            return false;
        }
        first
    }

    /// Records that property `name` answered `first`, then the opposite,
    /// on `what`.
    #[cold]
    fn changed(&self, name: &str, first: bool, what: &str) {
        let mut slot = self.changed_mind.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| {
            format!(
                "PROPERTY ERROR: property {name} changed its mind: it was {first} on {what}, \
                 then {} when evaluated again; a property must be a function of the state \
                 (or step) it is given, so no verdict is given",
                !first
            )
        });
    }

    /// Confirms the violation of `failure` before it is reported: the
    /// property is evaluated again on `counterexample`'s last state (and,
    /// for a step property, its last step), and must fail again. `Err`
    /// holds the property error to report instead, also when any property
    /// changed its mind during the search (see
    /// [`evaluating_twice`](Self::evaluating_twice)).
    pub fn confirm(
        &self,
        model: &M,
        failure: &Failure,
        counterexample: Option<&Counterexample<M>>,
    ) -> Result<(), String> {
        if let Some(error) = self.changed_mind() {
            return Err(error);
        }
        let Some(trace) = counterexample else {
            return Ok(());
        };
        let still_fails = match (failure.kind, trace.steps.as_slice()) {
            (ViolationKind::Invariant, [.., last]) => self
                .invariants
                .iter()
                .filter(|(_, name, _)| *name == failure.name)
                .any(|(_, _, holds)| !holds(model, &last.state)),
            (ViolationKind::Step, [.., pre, post]) => {
                let action = post
                    .action
                    .as_ref()
                    .expect("a step after the first has an action");
                self.steps
                    .iter()
                    .filter(|(_, name, _)| *name == failure.name)
                    .any(|(_, _, holds)| !holds(model, &pre.state, action, &post.state))
            }
            _ => true,
        };
        if !still_fails {
            let what = match failure.kind {
                ViolationKind::Step => "a step of the search",
                _ => "a state of the search",
            };
            self.changed(&failure.name, false, what);
            return Err(self.changed_mind().expect("just recorded"));
        }
        Ok(())
    }

    /// The error of the first property seen to change its mind, if any.
    pub fn changed_mind(&self) -> Option<String> {
        self.changed_mind
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether there are step properties (so the caller must evaluate them).
    #[inline]
    pub fn has_step_properties(&self) -> bool {
        !self.steps.is_empty()
    }

    /// The first invariant that `state` violates, and marks the witnesses it reaches.
    #[inline]
    pub fn check_state(&self, model: &M, state: &M::State) -> Option<Failure> {
        for (name, predicate, reached) in &self.witnesses {
            if !reached.load(Ordering::Relaxed) && self.evaluate(name, || predicate(model, state)) {
                reached.store(true, Ordering::Relaxed);
            }
        }
        self.invariants
            .iter()
            .find(|(_, name, holds)| !self.evaluate(name, || holds(model, state)))
            .map(|(rank, name, _)| Failure {
                rank: *rank,
                name: name.clone(),
                kind: ViolationKind::Invariant,
            })
    }

    /// The first step property that the step `pre --action--> post` violates.
    #[inline]
    pub fn check_step(
        &self,
        model: &M,
        pre: &M::State,
        action: &M::Action,
        post: &M::State,
    ) -> Option<Failure> {
        self.steps
            .iter()
            .find(|(_, name, holds)| !self.evaluate(name, || holds(model, pre, action, post)))
            .map(|(rank, name, _)| Failure {
                rank: *rank,
                name: name.clone(),
                kind: ViolationKind::Step,
            })
    }

    /// The failure that a deadlock counts as.
    pub fn deadlock(&self) -> Failure {
        Failure {
            rank: self.count,
            name: "deadlock".into(),
            kind: ViolationKind::Deadlock,
        }
    }

    /// Marks the witnesses named in `names` as reached (when resuming).
    pub fn mark_reached(&self, names: &[String]) {
        for (name, _, reached) in &self.witnesses {
            if names.contains(name) {
                reached.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Names of the witnesses reached so far, in declaration order.
    pub fn reached_witnesses(&self) -> Vec<String> {
        self.witnesses
            .iter()
            .filter(|(_, _, reached)| reached.load(Ordering::Relaxed))
            .map(|(name, _, _)| name.clone())
            .collect()
    }

    /// Names of the witnesses not reached so far, in declaration order.
    pub fn unreached_witnesses(&self) -> Vec<String> {
        self.witnesses
            .iter()
            .filter(|(_, _, reached)| !reached.load(Ordering::Relaxed))
            .map(|(name, _, _)| name.clone())
            .collect()
    }
}
