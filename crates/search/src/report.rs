//! A model-independent report of a search: what `--json` prints and what
//! the text rendering reads.

use cmc_model::{Explainer, Model};
use serde::Serialize;

use std::collections::BTreeMap;

use crate::{Counterexample, Coverage, Outcome, ReplayFile, SearchOptions, Verdict, WalkStats};

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

/// What the random walks of a search did (simulation, frontier walks).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WalksReport {
    /// Walks run.
    pub walks: u64,
    /// Steps taken over every walk.
    pub steps: u64,
    /// Steps of the longest walk.
    pub deepest: u64,
    /// Distinct states the walks visited.
    pub distinct_states: u64,
    /// Whether `distinct_states` is a lower bound (the counting table filled).
    pub distinct_capped: bool,
    /// Faults injected, by kind.
    pub faults: BTreeMap<String, u64>,
    /// Steps taken, by action kind.
    pub steps_by_kind: BTreeMap<String, u64>,
    /// Walks that stopped because only faults their swarm mix leaves out
    /// were enabled.
    pub stopped_by_fault_mix: u64,
    /// The number of the failing walk reported (rerun it with the same seed).
    pub failing_walk: Option<u64>,
    /// Whether each walk drew its own fault densities.
    pub swarm: bool,
    /// Wall time of the walks, in seconds.
    pub wall_seconds: f64,
    /// Walks per second of wall time.
    pub walks_per_second: f64,
    /// Steps per second of wall time.
    pub steps_per_second: f64,
}

impl WalksReport {
    fn new(stats: &WalkStats) -> WalksReport {
        let seconds = stats.wall_seconds.max(1e-9);
        WalksReport {
            walks: stats.walks,
            steps: stats.steps,
            deepest: stats.deepest,
            distinct_states: stats.distinct_states,
            distinct_capped: stats.distinct_capped,
            faults: stats.faults().into_iter().collect(),
            steps_by_kind: stats
                .kinds
                .iter()
                .filter(|(_, count)| count.taken > 0)
                .map(|(name, count)| (name.clone(), count.taken))
                .collect(),
            stopped_by_fault_mix: stats.stopped_by_fault_mix,
            failing_walk: stats.failing_walk,
            swarm: stats.swarm,
            wall_seconds: stats.wall_seconds,
            walks_per_second: stats.walks as f64 / seconds,
            steps_per_second: stats.steps as f64 / seconds,
        }
    }
}

/// One action kind's coverage.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KindCoverageReport {
    /// The kind's name.
    pub kind: String,
    /// Whether it is an injected fault.
    pub fault: bool,
    /// Times enabled in a state explored.
    pub enabled: u64,
    /// Times taken (a walk's step; in an exhaustive search, a step to a new state).
    pub taken: u64,
}

/// Coverage per action kind (`--coverage`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CoverageReport {
    /// Every kind seen or declared, in name order.
    pub kinds: Vec<KindCoverageReport>,
    /// Kinds never enabled.
    pub never_enabled: Vec<String>,
    /// Kinds never taken.
    pub never_taken: Vec<String>,
    /// Fault kinds with a budget that never occurred.
    pub budgeted_faults_never_taken: Vec<String>,
}

impl CoverageReport {
    fn new(coverage: &Coverage) -> CoverageReport {
        CoverageReport {
            kinds: coverage
                .kinds
                .iter()
                .map(|(kind, count)| KindCoverageReport {
                    kind: kind.clone(),
                    fault: count.fault,
                    enabled: count.enabled,
                    taken: count.taken,
                })
                .collect(),
            never_enabled: coverage
                .kinds
                .iter()
                .filter(|(_, count)| count.enabled == 0)
                .map(|(kind, _)| kind.clone())
                .collect(),
            never_taken: coverage.never_taken(),
            budgeted_faults_never_taken: coverage.budgeted_faults_never_taken(),
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
    /// `pass`, `violated`, `vacuous`, `interrupted`, `time-limit` or `error`.
    pub verdict: String,
    /// The violated property, if any.
    pub property: Option<String>,
    /// `invariant`, `step` or `deadlock`, for a violation.
    pub violation_kind: Option<String>,
    /// For `vacuous`: the witnesses never reached.
    pub unreached_witnesses: Vec<String>,
    /// Every property the run checked, as `KIND NAME` (e.g. `always
    /// TypeOK`), so that a property set that failed to attach shows.
    pub properties: Vec<String>,
    /// For `error`: what went wrong; for `interrupted` and `time-limit`: how
    /// to resume.
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
    /// For a violation whose trace was not kept (`--no-trace`): the length
    /// of its counterexample in states (`counterexample` is then absent).
    pub untraced_violation_length: Option<u64>,
    /// The model's own explanation of the violation in the last state.
    pub explanation: Option<String>,
    /// What the random walks did (simulation, frontier walks).
    pub walks: Option<WalksReport>,
    /// Coverage per action kind (`--coverage`).
    pub coverage: Option<CoverageReport>,
    /// What partial-order reduction did, when it was asked for
    /// (`--reduction`): on, with its counts, or off and why.
    pub reduction: Option<String>,
    /// The replay file of the counterexample, as text.
    #[serde(skip)]
    pub replay_file: Option<ReplayFile>,
    /// For `interrupted`: the checkpoint saved, if any.
    #[serde(skip)]
    pub checkpoint: Option<std::path::PathBuf>,
}

/// Why `trace` violates `property`: the property's own explanation (of
/// the last state, or of the last step), else the model's.
fn explain<M: Model>(model: &M, property: &str, trace: &Counterexample<M>) -> Option<String> {
    let last = trace.steps.last()?;
    let own = model
        .properties()
        .into_iter()
        .find(|candidate| candidate.name == property)
        .and_then(|found| found.explain)
        .and_then(|explain| match explain {
            Explainer::State(explain) => explain(model, &last.state),
            Explainer::Step(explain) => {
                let pre = &trace.steps.get(trace.steps.len().checked_sub(2)?)?.state;
                explain(model, pre, last.action.as_ref()?, &last.state)
            }
        });
    own.or_else(|| model.explain_violation(property, &last.state))
}

/// How to resume an interrupted run from its checkpoint `dir`, in the
/// front end `program`.
fn resume_message(program: &str, dir: &std::path::Path) -> String {
    format!(
        "checkpoint saved in {}; resume with: {program} check --resume {}",
        dir.display(),
        dir.display()
    )
}

impl Report {
    /// What of the counterexample violates its property: its last `step`
    /// for an action property, else its last `state`.
    pub(crate) fn violated_by(&self) -> &'static str {
        match self.violation_kind.as_deref() {
            Some("step") => "step",
            _ => "state",
        }
    }

    /// Names `program` (the front end running, e.g. a user's own) in the
    /// advice the report gives, such as how to resume.
    pub fn name_program(&mut self, program: &str) {
        if let Some(dir) = &self.checkpoint {
            self.message = Some(resume_message(program, dir));
        }
    }

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
            params: cmc_model::param_pairs(model.params()),
            strategy: options.strategy_name().into(),
            workers: stats.workers,
            settings: options.verdict_settings(),
            bound: options.bound(),
            verdict: outcome.verdict.as_str().into(),
            property: property.clone(),
            violation_kind,
            properties: model
                .properties()
                .iter()
                .map(|property| format!("{} {}", property.kind_name(), property.name))
                .collect(),
            unreached_witnesses: match &outcome.verdict {
                Verdict::Vacuous { properties } => properties.clone(),
                _ => Vec::new(),
            },
            message: match &outcome.verdict {
                Verdict::Error { message } => Some(message.clone()),
                Verdict::Interrupted {
                    checkpoint: Some(dir),
                } => Some(resume_message("cmc", dir)),
                Verdict::Interrupted { checkpoint: None } => Some(
                    if options.strategy == crate::Strategy::Bfs {
                        "no checkpoint was saved (use --checkpoint DIR)"
                    } else {
                        "no checkpoint was saved (checkpoints are for breadth-first search)"
                    }
                    .into(),
                ),
                Verdict::TimeLimit { checkpoint } => Some(crate::time_limit::message(
                    options.time_limit,
                    checkpoint.as_deref(),
                )),
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
            untraced_violation_length: stats.untraced_violation_length,
            counterexample: outcome
                .counterexample
                .as_ref()
                .map(|c| CounterexampleReport::new(model, c)),
            explanation: match (&property, &outcome.counterexample) {
                (Some(property), Some(trace)) => explain(model, property, trace),
                _ => None,
            },
            walks: stats.walks.as_ref().map(WalksReport::new),
            coverage: stats.coverage.as_ref().map(CoverageReport::new),
            reduction: stats.reduction.as_ref().map(reduction_text),
            checkpoint: match &outcome.verdict {
                Verdict::Interrupted { checkpoint } => checkpoint.clone(),
                _ => None,
            },
            replay_file: outcome.counterexample.as_ref().map(|c| ReplayFile {
                settings: replay_settings(options, stats.walks.as_ref()),
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

/// One line on what partial-order reduction did.
fn reduction_text(stats: &crate::ReductionStats) -> String {
    match stats {
        crate::ReductionStats::On { reduced, proviso } => format!(
            "on (persistent sets): {reduced} states expanded through a persistent set, \
             {proviso} expanded fully by the proviso; a violation is still found by a \
             complete search, its counterexample may be longer than the shortest"
        ),
        crate::ReductionStats::Sleep { skipped } => format!(
            "on (sleep sets): {skipped} enabled steps left asleep; every state and every \
             shortest counterexample is found as without them"
        ),
        crate::ReductionStats::Off { why } => {
            format!("asked for but off, every step was explored: {why}")
        }
    }
}

/// The settings a replay file records: the search's verdict settings and,
/// for a failing random walk, its number (`walk=N`), so that the walk can be
/// rerun from its seed.
fn replay_settings(options: &SearchOptions, walks: Option<&WalkStats>) -> Vec<String> {
    let mut settings = options.verdict_settings();
    if let Some(walk) = walks.and_then(|w| w.failing_walk) {
        settings.push(format!("walk={walk}"));
    }
    settings
}
