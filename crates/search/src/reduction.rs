//! Partial-order reduction in breadth-first search: persistent sets named
//! by the model, and the proviso that keeps them sound.
//!
//! The model names, per state, a persistent set of invisible steps
//! ([`Model::persistent_set`]); the search explores only those successors,
//! unless the proviso asks for all: a state of level d is expanded fully
//! when no step of its persistent set leads one level deeper, to a state
//! first found in level d+1 (each step stutters or leads to a state of
//! level d or less).
//!
//! Why every violation is still found. Say a path w leads from a stored
//! state s to a bad state (an invariant false, or a step property false on
//! w's last step). If an action of w is in s's persistent set P, the first
//! such one commutes with those before it (persistence): taken first, it
//! leaves a path one step shorter from a stored successor. If none is,
//! every action of w commutes with every step of P: from the successor s'
//! by the step of P that leads one level deeper, w leads to a state that
//! differs from w's end only by that step, which no property sees
//! (invisibility), so it is bad too. If s was expanded fully, w's first
//! step was taken. In each case a stored state has a path to a bad state
//! that is shorter, or as long from one level deeper; levels are bounded,
//! so a bad state is stored in the end. Deadlocks are kept by persistence
//! alone (a persistent set is not empty when a step is enabled). The
//! counterexample found may be longer than the shortest.
//!
//! Which states level d+1 holds is kept in a set of their fingerprints,
//! noted after each is stored. A worker that finds a state stored by
//! another one a moment before it was noted takes it for an older state
//! and expands fully: sound, but with more than one worker the counts of
//! a reduced search may vary from run to run.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use cmc_model::{Fingerprint, Model, PropertyKind};

use crate::options::{SearchOptions, Strategy};
use crate::outcome::ReductionStats;
use crate::sleep::SleepSets;

/// The reduction of one breadth-first search, when it is on.
#[derive(Debug)]
pub(crate) enum Reduction {
    /// Persistent sets with the proviso (`--reduction`).
    Persistent(Persistent),
    /// Sleep sets (`--sleep-sets`, see [`crate::sleep`]).
    Sleep(SleepSets),
}

impl Reduction {
    /// A new level is being found: the states noted so far are of the
    /// levels before it.
    pub fn begin_level(&self) {
        match self {
            Reduction::Persistent(persistent) => persistent.begin_level(),
            Reduction::Sleep(sleep) => sleep.begin_level(),
        }
    }
}

/// Persistent sets in one breadth-first search: counts what they did,
/// shared by the workers.
#[derive(Debug)]
pub(crate) struct Persistent {
    /// States expanded through a persistent set only.
    reduced: AtomicU64,
    /// States whose persistent set the proviso expanded fully.
    proviso: AtomicU64,
    /// The fingerprints of the states of the level being found, in shards
    /// chosen by their low bits.
    next_level: Vec<Mutex<HashSet<Fingerprint>>>,
}

/// Shards of [`Reduction::next_level`].
const SHARDS: usize = 64;

/// Whether a search reduces, and if not, why (when it was asked to).
pub(crate) enum Plan {
    /// Not asked for.
    Off,
    /// Asked for, not possible for this model: why.
    Refused(String),
    /// On.
    On(Reduction),
}

impl Plan {
    /// The plan of a search of `model` with `options`.
    pub fn of<M: Model>(model: &M, options: &SearchOptions) -> Plan {
        if options.strategy != Strategy::Bfs {
            return Plan::Off;
        }
        if options.sleep_sets {
            let step_property = model
                .properties()
                .into_iter()
                .find(|property| matches!(property.kind, PropertyKind::Step(_)));
            if let Some(property) = step_property {
                return Plan::Refused(format!(
                    "the step property {} is checked on every step taken, and a step left \
                     asleep is not taken",
                    property.name
                ));
            }
            return match model.sleep_support() {
                Ok(()) => Plan::On(Reduction::Sleep(SleepSets::new())),
                Err(why) => Plan::Refused(why),
            };
        }
        if !options.reduction {
            return Plan::Off;
        }
        match model.reduction_support() {
            Ok(()) => Plan::On(Reduction::Persistent(Persistent {
                reduced: AtomicU64::new(0),
                proviso: AtomicU64::new(0),
                next_level: (0..SHARDS).map(|_| Mutex::default()).collect(),
            })),
            Err(why) => Plan::Refused(why),
        }
    }

    /// The reduction to apply, if on.
    pub fn reduction(&self) -> Option<&Reduction> {
        match self {
            Plan::On(reduction) => Some(reduction),
            _ => None,
        }
    }

    /// What a report says of it (`None` when not asked for).
    pub fn stats(&self) -> Option<ReductionStats> {
        match self {
            Plan::Off => None,
            Plan::Refused(why) => Some(ReductionStats::Off { why: why.clone() }),
            Plan::On(Reduction::Persistent(reduction)) => Some(ReductionStats::On {
                reduced: reduction.reduced.load(Ordering::Relaxed),
                proviso: reduction.proviso.load(Ordering::Relaxed),
            }),
            Plan::On(Reduction::Sleep(sleep)) => Some(ReductionStats::Sleep {
                skipped: sleep.skipped(),
            }),
        }
    }
}

impl Persistent {
    /// Writes to `out` the positions in `steps` (enabled actions of `state`
    /// with their successors) of the model's persistent set, sorted; `false`
    /// (and `out` empty) to expand every step.
    pub fn persistent_set<M: Model>(
        &self,
        model: &M,
        state: &M::State,
        steps: &[(&M::Action, &M::State)],
        out: &mut Vec<usize>,
    ) -> bool {
        out.clear();
        if steps.len() < 2 || !model.persistent_set(state, steps, out) {
            out.clear();
            return false;
        }
        out.sort_unstable();
        out.dedup();
        let proper = !out.is_empty() && out.len() < steps.len() && out[out.len() - 1] < steps.len();
        assert!(
            proper,
            "Model::persistent_set named {out:?} of {} steps: not a non-empty proper subset",
            steps.len()
        );
        true
    }

    /// A new level is being found: the states noted so far are of the
    /// levels before it.
    pub fn begin_level(&self) {
        for shard in &self.next_level {
            shard.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }

    fn shard(&self, fingerprint: Fingerprint) -> std::sync::MutexGuard<'_, HashSet<Fingerprint>> {
        let at = fingerprint.low() as usize % SHARDS;
        self.next_level[at]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a state just stored, of the level being found.
    pub fn note_new(&self, fingerprint: Fingerprint) {
        self.shard(fingerprint).insert(fingerprint);
    }

    /// Whether a state found stored already belongs to the level being
    /// found (else it is of an earlier level, as far as the proviso knows).
    pub fn of_level_being_found(&self, fingerprint: Fingerprint) -> bool {
        self.shard(fingerprint).contains(&fingerprint)
    }

    /// Counts a state expanded through its persistent set only, or, when
    /// `proviso`, one that the proviso expanded fully.
    pub fn count(&self, proviso: bool) {
        let counter = if proviso {
            &self.proviso
        } else {
            &self.reduced
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
