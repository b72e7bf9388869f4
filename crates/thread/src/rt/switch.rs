//! Why a thread stopped running at a switch: the interleaving table prints it next to the
//! switch marker (Lincheck's `switch (reason: waiting for Thread 1 to finish)`).

use super::execution::ExecState;
use super::op::{ObjId, Op, ThreadId};

/// Why the thread that ran last did not run the next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchReason {
    /// It could run, and the scheduler picked another thread.
    Preempted,
    /// It announced a yield point (`yield_now`, `sleep`) and another thread ran.
    Yielded(Op),
    /// Its announced operation cannot run yet; `holder` is the thread it waits for, if known.
    Blocked {
        /// The announced operation.
        op: Op,
        /// The thread holding what it waits for (lock owner, initialiser, joined thread).
        holder: Option<ThreadId>,
    },
    /// It re-read `location` unchanged too often and waits until another thread writes it.
    Spinning(ObjId),
}

/// A switch away from `thread` before step `step` of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// Index in the trace of the first step run by another thread.
    pub step: usize,
    /// The thread switched away from.
    pub thread: ThreadId,
    /// Why.
    pub reason: SwitchReason,
}

impl ExecState {
    /// Records the switch, if any, made when the scheduler picked `chosen` among `enabled`
    /// after the active thread's step: none at the first step, when the active thread
    /// continues, or when it finished.
    pub fn note_switch(&mut self, chosen: ThreadId, enabled: u64) {
        let from = self.active;
        if self.trace.is_empty() || chosen == from || self.threads[from].finished {
            return;
        }
        let th = &self.threads[from];
        let reason = if let Some((op, _)) = th.pending.filter(|(op, _)| op.is_yield()) {
            SwitchReason::Yielded(op)
        } else if enabled & (1 << from) != 0 {
            SwitchReason::Preempted
        } else if let (true, Some(o)) = (th.spin.blocked(), th.spin.locations().next()) {
            SwitchReason::Spinning(o)
        } else {
            match th.pending {
                Some((op, _)) => SwitchReason::Blocked {
                    op,
                    holder: self.waits_for(from),
                },
                None => return,
            }
        };
        self.switches.push(Switch {
            step: self.trace.len(),
            thread: from,
            reason,
        });
    }
}
