//! A model's properties, sorted by kind for the hot path, and what a search
//! has learned about them.

use std::sync::atomic::{AtomicBool, Ordering};

use cmc_model::property::{StatePredicate, StepPredicate};
use cmc_model::{Model, Property, PropertyKind};

use crate::ViolationKind;

/// The properties of one model, split by kind, with the `sometimes`
/// witnesses reached so far (shared by all workers).
pub struct PropertySet<M: Model> {
    invariants: Vec<(usize, String, StatePredicate<M>)>,
    steps: Vec<(usize, String, StepPredicate<M>)>,
    witnesses: Vec<(String, StatePredicate<M>, AtomicBool)>,
    count: usize,
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

    /// Whether there are step properties (so the caller must evaluate them).
    #[inline]
    pub fn has_step_properties(&self) -> bool {
        !self.steps.is_empty()
    }

    /// The first invariant that `state` violates, and marks the witnesses it reaches.
    #[inline]
    pub fn check_state(&self, model: &M, state: &M::State) -> Option<Failure> {
        for (_, predicate, reached) in &self.witnesses {
            if !reached.load(Ordering::Relaxed) && predicate(model, state) {
                reached.store(true, Ordering::Relaxed);
            }
        }
        self.invariants
            .iter()
            .find(|(_, _, holds)| !holds(model, state))
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
            .find(|(_, _, holds)| !holds(model, pre, action, post))
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
