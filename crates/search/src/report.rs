//! A model-independent report of a search: what `--json` prints and what
//! the text rendering reads.

use cmc_model::Model;
use serde::Serialize;

use crate::{Counterexample, Outcome, ReplayFile, SearchOptions, Verdict};

/// One field whose value a step changed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FieldChangeReport {
    /// The field's name.
    pub name: String,
    /// Its value before the step (`None`: it did not exist).
    pub before: Option<String>,
    /// Its value after the step (`None`: it no longer exists).
    pub after: Option<String>,
}

/// One state of a counterexample.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepReport {
    /// Position in the trace, from 1 (the initial state).
    pub number: usize,
    /// The action that led here; `None` for the initial state.
    pub action: Option<String>,
    /// The whole state, as `(field, value)` pairs.
    pub state: Vec<(String, String)>,
    /// What changed since the previous state (empty for the initial state).
    pub changes: Vec<FieldChangeReport>,
}

/// A counterexample with every state described.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CounterexampleReport {
    /// Number of states (TLC's convention).
    pub length: usize,
    /// The states in order.
    pub steps: Vec<StepReport>,
}

impl CounterexampleReport {
    /// Describes every state of `counterexample` with the model's own views.
    pub fn new<M: Model>(model: &M, counterexample: &Counterexample<M>) -> CounterexampleReport {
        let mut previous: Option<cmc_model::StateView> = None;
        let steps = counterexample
            .steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let view = model.describe_state(&step.state);
                let changes = previous
                    .as_ref()
                    .map(|before| {
                        view.changes_since(before)
                            .into_iter()
                            .map(|change| FieldChangeReport {
                                name: change.name,
                                before: change.before,
                                after: change.after,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let report = StepReport {
                    number: index + 1,
                    action: step.action.as_ref().map(|a| model.format_action(a)),
                    state: view.fields.clone(),
                    changes,
                };
                previous = Some(view);
                report
            })
            .collect();
        CounterexampleReport {
            length: counterexample.len(),
            steps,
        }
    }
}

/// Everything a search found, without the model's types.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The model's name.
    pub model: String,
    /// The model's parameters, as `NAME=VALUE` pairs.
    pub params: Vec<(String, String)>,
    /// `bfs`, `dfs`, `simulate` or `replay`.
    pub strategy: String,
    /// Worker threads used.
    pub workers: usize,
    /// The settings that can change a verdict (see
    /// [`SearchOptions::verdict_settings`]), e.g. `no-deadlock`, `max-depth=12`.
    pub settings: Vec<String>,
    /// What kept the search short of every reachable state (random walks, a
    /// depth bound), if anything did.
    pub bound: Option<String>,
    /// `pass`, `violated`, `vacuous`, `interrupted` or `error`.
    pub verdict: String,
    /// The violated property, if any.
    pub property: Option<String>,
    /// `invariant`, `step` or `deadlock`, for a violation.
    pub violation_kind: Option<String>,
    /// For `vacuous`: the witnesses never reached.
    pub unreached_witnesses: Vec<String>,
    /// For `error`: what went wrong; for `interrupted`: how to resume.
    pub message: Option<String>,
    /// Distinct states found.
    pub distinct_states: u64,
    /// States generated (initial states plus successors computed).
    pub states_generated: u64,
    /// States found but not expanded.
    pub states_left_on_queue: u64,
    /// Depth in TLC's convention.
    pub depth: u64,
    /// Whether every reachable state was explored: `false` for random walks,
    /// a search cut by a depth bound, and a search that stopped early. A
    /// `pass` with `complete: false` means "no violation within the bound".
    pub complete: bool,
    /// Wall time in seconds.
    pub wall_seconds: f64,
    /// Distinct states per second.
    pub distinct_states_per_second: f64,
    /// Generated states per second.
    pub states_generated_per_second: f64,
    /// Estimated probability of a fingerprint collision.
    pub collision_probability: f64,
    /// Bytes of the fingerprint table.
    pub table_bytes: u64,
    /// The counterexample of a violation.
    pub counterexample: Option<CounterexampleReport>,
    /// The model's own explanation of the violation in the last state.
    pub explanation: Option<String>,
    /// The replay file of the counterexample, as text.
    #[serde(skip)]
    pub replay_file: Option<ReplayFile>,
}

impl Report {
    /// The report of `outcome`, a search of `model` run with `options`.
    pub fn new<M: Model>(model: &M, options: &SearchOptions, outcome: &Outcome<M>) -> Report {
        let stats = &outcome.stats;
        let (property, violation_kind) = match &outcome.verdict {
            Verdict::Violated { property, kind } => {
                (Some(property.clone()), Some(kind.as_str().to_string()))
            }
            _ => (None, None),
        };
        Report {
            model: model.name(),
            params: model
                .params()
                .into_iter()
                .map(|p| (p.name, p.value))
                .collect(),
            strategy: options.strategy_name().into(),
            workers: stats.workers,
            settings: options.verdict_settings(),
            bound: options.bound(),
            verdict: outcome.verdict.as_str().into(),
            property: property.clone(),
            violation_kind,
            unreached_witnesses: match &outcome.verdict {
                Verdict::Vacuous { properties } => properties.clone(),
                _ => Vec::new(),
            },
            message: match &outcome.verdict {
                Verdict::Error { message } => Some(message.clone()),
                Verdict::Interrupted {
                    checkpoint: Some(dir),
                } => Some(format!(
                    "checkpoint saved in {}; resume with: cmc check --resume {}",
                    dir.display(),
                    dir.display()
                )),
                Verdict::Interrupted { checkpoint: None } => {
                    Some("no checkpoint was saved (use --checkpoint DIR)".into())
                }
                _ => None,
            },
            distinct_states: stats.distinct_states,
            states_generated: stats.states_generated,
            states_left_on_queue: stats.states_left_on_queue,
            depth: stats.depth,
            complete: stats.complete,
            wall_seconds: stats.wall.as_secs_f64(),
            distinct_states_per_second: stats.distinct_states_per_second(),
            states_generated_per_second: stats.generated_states_per_second(),
            collision_probability: stats.collision_probability(),
            table_bytes: stats.table_bytes,
            counterexample: outcome
                .counterexample
                .as_ref()
                .map(|c| CounterexampleReport::new(model, c)),
            explanation: match (&property, &outcome.counterexample) {
                (Some(property), Some(trace)) => trace
                    .last_state()
                    .and_then(|state| model.explain_violation(property, state)),
                _ => None,
            },
            replay_file: outcome.counterexample.as_ref().map(|c| ReplayFile {
                settings: options.verdict_settings(),
                ..ReplayFile::from_counterexample(model, c, property.as_deref())
            }),
        }
    }

    /// Whether every property held.
    pub fn passed(&self) -> bool {
        self.verdict == "pass"
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }
}
