//! The interface between the exploration loop and a search strategy, and the prefix replay
//! check shared by the systematic strategies (which detects non-determinism).

use crate::report::describe_event;
use crate::rt::{Event, ExecState, Scheduler, Stop, ThreadId};

/// A search strategy: a scheduler that also decides which execution comes next.
pub trait Strategy: Scheduler {
    /// Prepares the next execution; `false` when the strategy has nothing left to explore.
    fn next_execution(&mut self) -> bool;
    /// Called after an execution that completed; may report a divergence.
    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop>;
    /// The seed of the current execution, for randomized strategies.
    fn seed(&self) -> Option<u64> {
        None
    }
}

/// Whether switching away from `current` at this point is a preemption: it is enabled and its
/// announced operation is not a yield point (`yield_now`, `sleep`).
pub fn is_preemption(st: &ExecState, enabled: u64, current: ThreadId, chosen: ThreadId) -> bool {
    chosen != current
        && enabled & (1 << current) != 0
        && !st.threads[current]
            .pending
            .is_some_and(|(op, _)| op.is_yield())
}

/// The read choice at a node of a systematic strategy: which store, counted back from the
/// latest, the chosen thread's weak-memory load reads, and how many it could read.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadChoice {
    /// Stores back from the latest (0: the latest).
    pub stale: u32,
    /// Stores the load could read (0: not known yet, the node's step has not run).
    pub options: u32,
}

impl ReadChoice {
    /// The choice for the node's step at `step`, which may read one of `options` stores:
    /// the first time, records `options` and reads the latest; when the node is replayed,
    /// its recorded choice, after checking that the options did not change.
    pub fn choose(&mut self, step: usize, options: u32) -> Result<u32, Stop> {
        if self.options == 0 {
            self.options = options;
        } else if self.options != options {
            return Err(Stop::NonDeterminism {
                step,
                first: format!("the load could read {} stores", self.options),
                second: format!("the load could read {options} stores"),
            });
        }
        Ok(self.stale)
    }

    /// Moves to the next older store, if there is one not tried yet.
    pub fn advance(&mut self) -> bool {
        let more = self.stale + 1 < self.options;
        if more {
            self.stale += 1;
        }
        more
    }
}

/// What a systematic strategy remembers of a step, to check that a replay takes the same path.
#[derive(Clone, Copy, Debug)]
pub struct Recorded {
    /// Threads enabled before the step.
    pub enabled: u64,
    /// The event the step produced.
    pub event: Option<Event>,
}

/// Compares the replayed step `step - 1` (just executed) and the enabled set at `step` with
/// what the first run recorded.
pub fn check_replay(st: &ExecState, enabled: u64, recorded: &[Recorded]) -> Result<(), Stop> {
    let step = st.trace.len();
    if step > 0 {
        if let (Some(first), Some(second)) = (
            recorded.get(step - 1).and_then(|r| r.event),
            st.trace.last(),
        ) {
            if !first.same_as(second) {
                return Err(Stop::NonDeterminism {
                    step: step - 1,
                    first: describe_event(st, &first),
                    second: describe_event(st, second),
                });
            }
        }
    }
    if let Some(r) = recorded.get(step) {
        if r.enabled != enabled {
            return Err(Stop::NonDeterminism {
                step,
                first: format!("enabled threads {}", mask_list(r.enabled)),
                second: format!("enabled threads {}", mask_list(enabled)),
            });
        }
    }
    Ok(())
}

/// Checks that a replay did not end before the recorded prefix.
pub fn check_replay_end(st: &ExecState, recorded_len: usize) -> Option<Stop> {
    (st.trace.len() < recorded_len).then(|| Stop::NonDeterminism {
        step: st.trace.len(),
        first: format!("the execution continued to step {recorded_len}"),
        second: "the execution ended".to_string(),
    })
}

/// `[0, 2]` for mask `0b101`.
pub fn mask_list(mask: u64) -> String {
    let ids: Vec<String> = (0..64)
        .filter(|t| mask & (1 << t) != 0)
        .map(|t| t.to_string())
        .collect();
    format!("[{}]", ids.join(", "))
}
