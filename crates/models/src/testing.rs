//! A deliberately naive breadth-first explorer for the models' unit tests.
//!
//! It shares no code with `cmc-search`, so a port can be checked on its own:
//! every reachable state is kept with its depth, its encoding must decode back
//! to itself, and states without successors are recorded.

use std::collections::HashSet;

use cmc_model::{Encode, Model, PropertyKind};

/// Everything reachable from a model's initial states.
pub(crate) struct Reachable<M: Model> {
    /// Every reachable state with its TLC depth (initial states are depth 1),
    /// in breadth-first order.
    pub states: Vec<(M::State, usize)>,
    /// The reachable states that have no enabled action.
    pub stuck: Vec<M::State>,
}

impl<M: Model> Reachable<M> {
    /// The number of distinct states.
    pub fn distinct(&self) -> usize {
        self.states.len()
    }

    /// The number of breadth-first levels (TLC's "depth of the state graph").
    pub fn depth(&self) -> usize {
        self.states.last().map_or(0, |(_, depth)| *depth)
    }

    /// The length (number of states) of a shortest trace ending in a state
    /// that violates the `always` property named `property`, if any does.
    pub fn shortest_violation(&self, model: &M, property: &str) -> Option<usize> {
        let properties = model.properties();
        let found = properties
            .iter()
            .find(|candidate| candidate.name == property)
            .unwrap_or_else(|| panic!("{} has no property {property}", model.name()));
        let PropertyKind::Always(holds) = &found.kind else {
            panic!("{property} is not an invariant");
        };
        self.states
            .iter()
            .find(|(state, _)| !holds(model, state))
            .map(|(_, depth)| *depth)
    }
}

/// Explores `model` completely; panics if a state does not round-trip
/// through its encoding or if more than `state_count_max` states are reachable.
pub(crate) fn explore<M: Model>(model: &M, state_count_max: usize) -> Reachable<M> {
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut states: Vec<(M::State, usize)> = Vec::new();
    let mut stuck = Vec::new();
    let mut visit = |state: M::State, depth: usize, states: &mut Vec<(M::State, usize)>| {
        let bytes = state.to_bytes();
        let decoded = M::State::decode_exact(&bytes).expect("a state's encoding decodes");
        assert_eq!(
            decoded.to_bytes(),
            bytes,
            "decode(encode(s)) == s for {state:?}"
        );
        if seen.insert(bytes) {
            assert!(
                states.len() < state_count_max,
                "more than {state_count_max} states"
            );
            states.push((state, depth));
        }
    };
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    for state in initial {
        visit(state, 1, &mut states);
    }
    let mut actions = Vec::new();
    let mut next = 0;
    while next < states.len() {
        let (state, depth) = states[next].clone();
        next += 1;
        actions.clear();
        model.actions(&state, &mut actions);
        let mut enabled = false;
        for action in &actions {
            if let Some(successor) = model.next_state(&state, action) {
                enabled = true;
                visit(successor, depth + 1, &mut states);
            }
        }
        if !enabled {
            stuck.push(state);
        }
    }
    Reachable { states, stuck }
}

/// Asserts that every `always` property of `model` holds on every state.
pub(crate) fn assert_invariants_hold<M: Model>(model: &M, reachable: &Reachable<M>) {
    for property in model.properties() {
        if let PropertyKind::Always(holds) = &property.kind {
            for (state, _) in &reachable.states {
                assert!(holds(model, state), "{} fails in {state:?}", property.name);
            }
        }
    }
}
