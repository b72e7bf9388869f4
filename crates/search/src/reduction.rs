//! Partial-order reduction in breadth-first search: persistent sets named
//! by the model, and the cycle proviso that keeps them sound.
//!
//! The model names, per state, a persistent set of invisible steps
//! ([`Model::persistent_set`]); the search explores only those successors,
//! unless the cycle proviso asks for all: a state is expanded fully when a
//! step of its persistent set leads to a state already stored (or to the
//! state itself). Every cycle of the explored graph then holds a fully
//! expanded state (take the state of the cycle expanded last: its
//! successor on the cycle was stored before), so no step is postponed
//! forever ("ignoring").

use std::sync::atomic::{AtomicU64, Ordering};

use cmc_model::Model;

use crate::options::{SearchOptions, Strategy};
use crate::outcome::ReductionStats;

/// The reduction of one breadth-first search, when it is on: counts what
/// it did, shared by the workers.
#[derive(Debug, Default)]
pub(crate) struct Reduction {
    /// States expanded through a persistent set only.
    reduced: AtomicU64,
    /// States whose persistent set the cycle proviso expanded fully.
    proviso: AtomicU64,
}

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
        if !options.reduction || options.strategy != Strategy::Bfs {
            return Plan::Off;
        }
        match model.reduction_support() {
            Ok(()) => Plan::On(Reduction::default()),
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
            Plan::On(reduction) => Some(ReductionStats::On {
                reduced: reduction.reduced.load(Ordering::Relaxed),
                proviso: reduction.proviso.load(Ordering::Relaxed),
            }),
        }
    }
}

impl Reduction {
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

    /// Counts a state expanded through its persistent set only, or, when
    /// `proviso`, one that the cycle proviso expanded fully.
    pub fn count(&self, proviso: bool) {
        let counter = if proviso {
            &self.proviso
        } else {
            &self.reduced
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
