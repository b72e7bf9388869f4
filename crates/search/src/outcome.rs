//! The result of a search: verdict, statistics, counterexample.

use std::time::Duration;

use cmc_model::{Fingerprint, Model};

use crate::Counterexample;

/// What kind of property a violation broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// An `always` invariant was false in a reachable state.
    Invariant,
    /// A step property was false for a step.
    Step,
    /// A reachable, non-terminal state had no enabled action.
    Deadlock,
}

impl ViolationKind {
    /// `"invariant"`, `"step"` or `"deadlock"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ViolationKind::Invariant => "invariant",
            ViolationKind::Step => "step",
            ViolationKind::Deadlock => "deadlock",
        }
    }
}

/// The verdict of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every property held on everything explored, and every `sometimes`
    /// witness was reached.
    Pass,
    /// A property failed; the outcome's counterexample shows how.
    Violated {
        /// The property's name (`"deadlock"` for a deadlock).
        property: String,
        /// What kind of property it is.
        kind: ViolationKind,
    },
    /// The search ended without reaching these `sometimes` witnesses: the
    /// properties that depend on them were checked vacuously.
    Vacuous {
        /// Names of the witnesses never reached.
        properties: Vec<String>,
    },
    /// The search was interrupted before it ended; with a checkpoint
    /// directory, it can be resumed from there.
    Interrupted {
        /// Where the checkpoint was saved, if the search had one.
        checkpoint: Option<std::path::PathBuf>,
    },
    /// The search reached its time limit ([`crate::SearchOptions::time_limit`])
    /// before it ended, without a violation in what it explored: nothing is
    /// concluded; its statistics say how far it got.
    TimeLimit {
        /// Where the checkpoint was saved, if the search had one.
        checkpoint: Option<std::path::PathBuf>,
    },
    /// The search could not be carried out (disk full, a state that does not
    /// decode, a non-deterministic model, ...); nothing is concluded.
    Error {
        /// What went wrong and where.
        message: String,
    },
}

impl Verdict {
    /// Whether the verdict is [`Verdict::Pass`].
    pub fn is_pass(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// `"pass"`, `"violated"`, `"vacuous"`, `"interrupted"`, `"time-limit"`
    /// or `"error"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Violated { .. } => "violated",
            Verdict::Vacuous { .. } => "vacuous",
            Verdict::Interrupted { .. } => "interrupted",
            Verdict::TimeLimit { .. } => "time-limit",
            Verdict::Error { .. } => "error",
        }
    }
}

/// Counts of a search, in TLC's conventions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Distinct states found (fingerprints stored).
    pub distinct_states: u64,
    /// States generated: initial states plus every successor computed,
    /// duplicates included.
    pub states_generated: u64,
    /// States found but not expanded when the search stopped.
    pub states_left_on_queue: u64,
    /// Depth in TLC's convention: the number of BFS levels reached (initial
    /// states are depth 1); for DFS and simulation, the deepest state visited.
    pub depth: u64,
    /// Whether every reachable state was explored (no bound cut the search,
    /// no violation stopped it).
    pub complete: bool,
    /// Wall time of the search.
    pub wall: Duration,
    /// Bytes the fingerprint table occupied in memory at the end.
    pub table_bytes: u64,
    /// Bytes of fingerprints kept on disk (with `--disk-fingerprints`).
    pub fingerprint_disk_bytes: u64,
    /// Worker threads used.
    pub workers: usize,
    /// Bytes of BFS frontier written to disk because memory was bounded.
    pub frontier_spilled_bytes: u64,
    /// Random walks' statistics (simulation, and walks from a BFS frontier).
    pub walks: Option<WalkStats>,
    /// Counts per action kind, with `--coverage`.
    pub coverage: Option<crate::Coverage>,
    /// The length in states of a violation's counterexample whose trace
    /// was not kept (`--no-trace`): the counterexample itself is `None`.
    pub untraced_violation_length: Option<u64>,
    /// What partial-order reduction did, when the search was asked to
    /// reduce (`--reduction`).
    pub reduction: Option<ReductionStats>,
}

/// What partial-order reduction did in a search that asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReductionStats {
    /// On: `reduced` states were expanded through a persistent set only,
    /// `proviso` more had a persistent set that the proviso expanded
    /// fully.
    On {
        /// States expanded through a persistent set only.
        reduced: u64,
        /// States the proviso expanded fully.
        proviso: u64,
    },
    /// Sleep sets: `skipped` enabled steps were left asleep (neither
    /// computed nor followed); every state was found.
    Sleep {
        /// Steps left asleep.
        skipped: u64,
    },
    /// Asked for, but not applied: every step was explored.
    Off {
        /// Why the model could not reduce.
        why: String,
    },
}

/// What a campaign of random walks did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalkStats {
    /// Walks run (a campaign stops early after a failing walk: walks with a
    /// higher number are not started).
    pub walks: u64,
    /// Steps taken, over every walk.
    pub steps: u64,
    /// Steps of the longest walk.
    pub deepest: u64,
    /// Distinct states the walks visited (their fingerprints).
    pub distinct_states: u64,
    /// Whether the table counting distinct states filled up, so that
    /// `distinct_states` is a lower bound.
    pub distinct_capped: bool,
    /// Steps taken per action kind (`enabled` counts only with `--coverage`).
    pub kinds: std::collections::BTreeMap<String, crate::KindCount>,
    /// Walks that stopped because only faults their swarm mix leaves out
    /// were enabled (not a deadlock).
    pub stopped_by_fault_mix: u64,
    /// The number of the failing walk reported, if any.
    pub failing_walk: Option<u64>,
    /// Whether each walk drew its own fault densities (`--swarm`).
    pub swarm: bool,
    /// Wall time of the walks alone, in seconds.
    pub wall_seconds: f64,
}

impl WalkStats {
    /// Faults injected, by kind (kinds never injected are left out).
    pub fn faults(&self) -> Vec<(String, u64)> {
        self.kinds
            .iter()
            .filter(|(_, count)| count.fault && count.taken > 0)
            .map(|(name, count)| (name.clone(), count.taken))
            .collect()
    }
}

impl Stats {
    /// The estimated probability that two of the distinct states shared a
    /// fingerprint (so that one was wrongly taken as seen).
    pub fn collision_probability(&self) -> f64 {
        Fingerprint::collision_probability(self.distinct_states)
    }

    /// Distinct states per second of wall time.
    pub fn distinct_states_per_second(&self) -> f64 {
        self.distinct_states as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Generated states per second of wall time.
    pub fn generated_states_per_second(&self) -> f64 {
        self.states_generated as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Everything a search concluded.
pub struct Outcome<M: Model> {
    /// Pass, violated, vacuous or error.
    pub verdict: Verdict,
    /// Counts and timing.
    pub stats: Stats,
    /// For a violation: a path from an initial state to it (shortest for BFS).
    pub counterexample: Option<Counterexample<M>>,
}

impl<M: Model> Outcome<M> {
    /// The outcome of a search that ended without a violation: a pass, or
    /// vacuous when `unreached` names `sometimes` witnesses never reached.
    pub fn without_violation(unreached: Vec<String>, stats: Stats) -> Self {
        Outcome {
            verdict: if unreached.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Vacuous {
                    properties: unreached,
                }
            },
            stats,
            counterexample: None,
        }
    }
}

impl<M: Model> std::fmt::Debug for Outcome<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outcome")
            .field("verdict", &self.verdict)
            .field("stats", &self.stats)
            .field(
                "counterexample_len",
                &self.counterexample.as_ref().map(Counterexample::len),
            )
            .finish()
    }
}

/// Turns what an exhaustive search ended with into an [`Outcome`]: rebuilds
/// the counterexample of a violation from the trace log, and fails a search
/// that ended without reaching its `sometimes` witnesses as vacuous.
pub(crate) fn conclude<M: Model>(
    model: &M,
    properties: &crate::properties::PropertySet<M>,
    log: &cmc_store::TraceLog,
    stats: Stats,
    ended: Result<Option<crate::expand::ViolationSite>, crate::expand::SearchError>,
) -> Outcome<M> {
    let error = |message: String| Outcome {
        verdict: Verdict::Error { message },
        stats: stats.clone(),
        counterexample: None,
    };
    match ended {
        Err(problem) => error(problem.to_string()),
        Ok(Some(site)) if !log.keeps_records() => {
            match properties.confirm(model, &site.failure, None) {
                Err(message) => error(message),
                Ok(()) => Outcome {
                    verdict: Verdict::Violated {
                        property: site.failure.name.clone(),
                        kind: site.failure.kind,
                    },
                    stats: Stats {
                        untraced_violation_length: Some(site.length),
                        ..stats
                    },
                    counterexample: None,
                },
            }
        }
        Ok(Some(site)) => match crate::counterexample::rebuild(model, log, &site) {
            Ok(counterexample) => {
                match properties.confirm(model, &site.failure, Some(&counterexample)) {
                    Err(message) => error(message),
                    Ok(()) => Outcome {
                        verdict: Verdict::Violated {
                            property: site.failure.name.clone(),
                            kind: site.failure.kind,
                        },
                        stats,
                        counterexample: Some(counterexample),
                    },
                }
            }
            Err(problem) => error(format!(
                "property {} failed, but its counterexample could not be rebuilt: {problem}",
                site.failure.name
            )),
        },
        Ok(None) => match properties.changed_mind() {
            Some(message) => error(message),
            None => Outcome::without_violation(properties.unreached_witnesses(), stats),
        },
    }
}
