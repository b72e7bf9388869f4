//! A path through a model that shows a violation.

use cmc_model::Model;

/// One state of a counterexample and the action that led to it.
pub struct TraceStep<M: Model> {
    /// The action taken from the previous state; `None` for the initial state.
    pub action: Option<M::Action>,
    /// The state reached.
    pub state: M::State,
}

impl<M: Model> Clone for TraceStep<M> {
    fn clone(&self) -> Self {
        TraceStep {
            action: self.action.clone(),
            state: self.state.clone(),
        }
    }
}

/// A path from an initial state: the evidence of a violation.
///
/// Its length is its number of states (TLC's convention), so a violation in
/// an initial state has length 1.
pub struct Counterexample<M: Model> {
    /// Index of the first state among the model's initial states.
    pub init_index: usize,
    /// The states in order, the first being initial.
    pub steps: Vec<TraceStep<M>>,
}

impl<M: Model> Clone for Counterexample<M> {
    fn clone(&self) -> Self {
        Counterexample {
            init_index: self.init_index,
            steps: self.steps.clone(),
        }
    }
}

impl<M: Model> Counterexample<M> {
    /// Number of states.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether there is no state (never the case for a search's counterexample).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The last state: the one that shows the violation.
    pub fn last_state(&self) -> Option<&M::State> {
        self.steps.last().map(|step| &step.state)
    }
}

/// Re-executes the path that `log` recorded up to `site`, checking every
/// state's fingerprint against the record, so a non-deterministic model is
/// caught here instead of producing a wrong trace.
pub(crate) fn rebuild<M: Model>(
    model: &M,
    log: &cmc_store::TraceLog,
    site: &crate::expand::ViolationSite,
) -> Result<Counterexample<M>, crate::expand::SearchError> {
    let path = recorded_path(log, site.trace_id)?;
    let counterexample = Counterexample::from_path(model, &path, site.step_action)
        .map_err(crate::expand::SearchError::NonDeterminism)?;
    debug_assert_eq!(
        counterexample.len() as u64,
        site.length,
        "trace length matches the search depth"
    );
    Ok(counterexample)
}

/// The path `log` recorded to the state stored as `trace_id`, re-executed
/// (see [`Counterexample::from_path`]).
pub(crate) fn path_to<M: Model>(
    model: &M,
    log: &cmc_store::TraceLog,
    trace_id: cmc_store::TraceId,
) -> Result<Counterexample<M>, String> {
    let path = recorded_path(log, trace_id).map_err(|e| e.to_string())?;
    Counterexample::from_path(model, &path, None)
}

/// The steps `log` recorded on the path to the state stored as `trace_id`.
fn recorded_path(
    log: &cmc_store::TraceLog,
    trace_id: cmc_store::TraceId,
) -> std::io::Result<Vec<PathStep>> {
    Ok(log
        .path_to(trace_id)?
        .iter()
        .map(|record| PathStep {
            fingerprint: record.fingerprint,
            step: record.step,
        })
        .collect())
}

/// One state of a recorded path: its fingerprint and how it was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathStep {
    /// The state's fingerprint (checked when the path is re-executed).
    pub fingerprint: cmc_model::Fingerprint,
    /// For the first state: its index among the initial states; otherwise
    /// the index of the action, among the previous state's candidate
    /// actions, that produced it.
    pub step: u32,
}

impl<M: Model> Counterexample<M> {
    /// Re-executes `path` (initial state first) on `model`, checking every
    /// state's fingerprint against the path, then takes the action numbered
    /// `last_action` from its last state if given (a step violation). The
    /// error says where a non-deterministic model diverged from the path.
    pub fn from_path(
        model: &M,
        path: &[PathStep],
        last_action: Option<u32>,
    ) -> Result<Counterexample<M>, String> {
        use cmc_model::{Encode, Fingerprint};

        let first = path.first().ok_or("the recorded path is empty")?;
        let mut initial = Vec::new();
        model.init_states(&mut initial);
        let init_index = first.step as usize;
        let mut state = initial.get(init_index).cloned().ok_or_else(|| {
            format!(
                "initial state {init_index} was recorded but the model now has {} initial states",
                initial.len()
            )
        })?;
        let check = |state: &M::State, expected: Fingerprint, step: usize| {
            let actual = Fingerprint::of_bytes(&state.to_bytes());
            if actual == expected {
                Ok(())
            } else {
                Err(format!(
                    "re-executing step {step} of the trace gave a different state than the search saw \
                     (fingerprint {actual}, recorded {expected})"
                ))
            }
        };
        check(&state, first.fingerprint, 0)?;
        let mut steps = vec![TraceStep {
            action: None,
            state: state.clone(),
        }];
        let mut actions = Vec::new();
        let follow = |state: &M::State, index: u32, step: usize, actions: &mut Vec<M::Action>| {
            actions.clear();
            model.actions(state, actions);
            let action = actions.get(index as usize).cloned();
            let next = action
                .as_ref()
                .and_then(|action| model.next_state(state, action));
            match (action, next) {
                (Some(action), Some(next)) => Ok((action, next)),
                _ => Err(format!(
                    "action {index} recorded at step {step} is no longer enabled on re-execution"
                )),
            }
        };
        for (step, record) in path.iter().enumerate().skip(1) {
            let (action, next) = follow(&state, record.step, step, &mut actions)?;
            check(&next, record.fingerprint, step)?;
            state = next.clone();
            steps.push(TraceStep {
                action: Some(action),
                state: next,
            });
        }
        if let Some(index) = last_action {
            let (action, next) = follow(&state, index, path.len(), &mut actions)?;
            steps.push(TraceStep {
                action: Some(action),
                state: next,
            });
        }
        Ok(Counterexample { init_index, steps })
    }
}
