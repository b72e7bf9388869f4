//! Replays one schedule exactly; a step that does not fit is a clear error.

use super::strategy::{mask_list, Strategy};
use crate::rt::{ExecState, Scheduler, Stop, ThreadId};
use crate::schedule::Choice;

/// Runs one execution following `schedule`.
pub struct Replay {
    schedule: Vec<Choice>,
    ran: bool,
}

impl Replay {
    /// A replay of `schedule`.
    pub fn new(schedule: Vec<Choice>) -> Self {
        Replay {
            schedule,
            ran: false,
        }
    }
}

impl Strategy for Replay {
    fn next_execution(&mut self) -> bool {
        !std::mem::replace(&mut self.ran, true)
    }

    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop> {
        (st.trace.len() != self.schedule.len()).then(|| {
            Stop::Schedule(format!(
                "the schedule has {} steps but the execution finished after {}",
                self.schedule.len(),
                st.trace.len()
            ))
        })
    }
}

impl Scheduler for Replay {
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop> {
        let step = st.trace.len();
        match self.schedule.get(step) {
            Some(&Choice { thread: t, .. }) if t < 64 && enabled & (1 << t) != 0 => Ok(t),
            Some(&Choice { thread: t, .. }) => Err(Stop::Schedule(format!(
                "step {step} of the schedule picks thread {t}, but only threads {} can run there",
                mask_list(enabled)
            ))),
            None => Err(Stop::Schedule(format!(
                "the schedule ends after {step} steps but threads {} can still run",
                mask_list(enabled)
            ))),
        }
    }

    fn choose_stale(&mut self, st: &ExecState, _options: u32) -> Result<u32, Stop> {
        Ok(self.schedule.get(st.trace.len()).map_or(0, |c| c.stale))
    }
}
