//! Replaying a recorded trace through a model.

use std::time::Instant;

use cmc_model::Model;

use crate::properties::PropertySet;
use crate::{Counterexample, Outcome, ReplayError, ReplayFile, Stats, TraceStep, Verdict};

/// Runs the trace of `file` through `model`, checking every property at every
/// step, and stops at the first violation.
///
/// Fails (never panics) if the file is for another model or other parameters,
/// if its initial state does not exist, or if an action it names is not
/// enabled at its step. A deadlock is reported only when the file says the
/// trace violates `deadlock` and its last state has no enabled action.
pub fn replay<M: Model>(model: &M, file: &ReplayFile) -> Result<Outcome<M>, ReplayError> {
    let started = Instant::now();
    if file.model != model.name() {
        return Err(ReplayError::at(
            file.model_line,
            format!(
                "the file is a trace of model `{}`, not of `{}`",
                file.model,
                model.name()
            ),
        ));
    }
    if file.params != model.params() {
        let show = |params: &[cmc_model::ModelParam]| {
            params
                .iter()
                .map(|p| format!("{}={}", p.name, p.value))
                .collect::<Vec<_>>()
                .join(" ")
        };
        return Err(ReplayError::at(
            file.model_line,
            format!(
                "the file was recorded with parameters `{}`, but the model has `{}`",
                show(&file.params),
                show(&model.params())
            ),
        ));
    }
    let properties = PropertySet::new(model.properties());
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    let (init_line, init_index) = file.init;
    let first = initial.get(init_index).cloned().ok_or_else(|| {
        ReplayError::at(
            init_line,
            format!(
                "initial state {init_index} does not exist: the model has {} initial state(s)",
                initial.len()
            ),
        )
    })?;
    let mut failure = properties.check_state(model, &first);
    let mut steps = vec![TraceStep {
        action: None,
        state: first,
    }];
    let mut generated = 1u64;
    let mut actions = Vec::new();
    for (line, text) in &file.actions {
        if failure.is_some() {
            break;
        }
        let current = &steps.last().expect("a trace has a state").state;
        actions.clear();
        model.actions(current, &mut actions);
        let mut enabled = Vec::new();
        let mut taken = None;
        for action in &actions {
            if let Some(next) = model.next_state(current, action) {
                generated += 1;
                let name = model.format_action(action);
                if taken.is_none() && name == *text {
                    taken = Some((action.clone(), next));
                } else {
                    enabled.push(name);
                }
            }
        }
        let (action, next) = taken.ok_or_else(|| {
            let shown: Vec<_> = enabled.iter().take(12).map(|a| format!("`{a}`")).collect();
            ReplayError::at(
                *line,
                format!(
                    "action `{text}` is not enabled at step {}; enabled there: {}{}",
                    steps.len() + 1,
                    if shown.is_empty() {
                        "none".to_string()
                    } else {
                        shown.join(", ")
                    },
                    if enabled.len() > shown.len() {
                        ", ..."
                    } else {
                        ""
                    }
                ),
            )
        })?;
        failure = properties
            .check_step(model, current, &action, &next)
            .or_else(|| properties.check_state(model, &next));
        steps.push(TraceStep {
            action: Some(action),
            state: next,
        });
    }
    if failure.is_none() && file.violates.as_deref() == Some("deadlock") {
        let last = &steps.last().expect("a trace has a state").state;
        actions.clear();
        model.actions(last, &mut actions);
        let stuck = actions.iter().all(|a| model.next_state(last, a).is_none());
        if stuck && !model.is_terminal(last) {
            failure = Some(properties.deadlock());
        }
    }
    let stats = Stats {
        distinct_states: 0,
        states_generated: generated,
        depth: steps.len() as u64,
        complete: true,
        wall: started.elapsed(),
        workers: 1,
        ..Stats::default()
    };
    let verdict = match &failure {
        Some(failure) => Verdict::Violated {
            property: failure.name.clone(),
            kind: failure.kind,
        },
        None => Verdict::Pass,
    };
    Ok(Outcome {
        verdict,
        stats,
        counterexample: Some(Counterexample { init_index, steps }),
    })
}
