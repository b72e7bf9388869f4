//! Preemption-bounded exploration with iterative deepening (CHESS / Lincheck style): all
//! schedules with 0 preemptions, then exactly 1, then exactly 2, ... up to the bound.
//!
//! The search is a depth-first walk of the decision tree by re-execution. Within round `r`
//! only non-preemptive alternatives are explored; a preemptive alternative is saved as a
//! prefix for round `r + 1`. So every schedule runs exactly once, in the round equal to its
//! number of preemptions. Switching away from a thread that is blocked, finished, spinning
//! or at `yield_now` is not a preemption.

use super::strategy::{check_replay, check_replay_end, is_preemption, Recorded, Strategy};
use crate::rt::{ExecState, Scheduler, Stop, ThreadId};
use std::collections::VecDeque;

struct Node {
    chosen: ThreadId,
    /// Non-preemptive alternatives not yet tried.
    alternatives: u64,
    /// Preemptions in the schedule up to and including this choice.
    preemptions: u32,
    recorded: Recorded,
}

/// The preemption-bounded strategy.
pub struct Bounded {
    bound: u32,
    round: u32,
    stack: Vec<Node>,
    /// Nodes `..fixed` come from a saved prefix and have no alternatives here.
    fixed: usize,
    /// Nodes that existed before the current execution (replayed, checked for divergence).
    replayed: usize,
    queue: VecDeque<Vec<ThreadId>>,
    next_queue: VecDeque<Vec<ThreadId>>,
    queue_cap: usize,
    started: bool,
    recorded: Vec<Recorded>,
}

impl Bounded {
    /// Explores schedules with at most `bound` preemptions; at most `queue_cap` saved prefixes
    /// are kept per round (the execution budget makes more unreachable).
    pub fn new(bound: u32, queue_cap: usize) -> Self {
        Bounded {
            bound,
            round: 0,
            stack: Vec::new(),
            fixed: 0,
            replayed: 0,
            queue: VecDeque::new(),
            next_queue: VecDeque::new(),
            queue_cap,
            started: false,
            recorded: Vec::new(),
        }
    }

    fn load_prefix(&mut self, prefix: Vec<ThreadId>) {
        self.stack.clear();
        self.recorded.clear();
        let preemptions = self.round;
        for chosen in prefix {
            self.stack.push(Node {
                chosen,
                alternatives: 0,
                preemptions,
                recorded: Recorded {
                    enabled: 0,
                    event: None,
                },
            });
        }
        self.fixed = self.stack.len();
        self.replayed = 0;
    }
}

impl Strategy for Bounded {
    fn next_execution(&mut self) -> bool {
        if !self.started {
            self.started = true;
            return true;
        }
        // Backtrack within the current subtree.
        while self.stack.len() > self.fixed {
            let node = self.stack.last_mut().expect("non-empty");
            if node.alternatives != 0 {
                let t = node.alternatives.trailing_zeros() as usize;
                node.alternatives &= !(1 << t);
                node.chosen = t;
                node.recorded.event = None;
                self.replayed = self.stack.len() - 1;
                self.recorded.truncate(self.replayed);
                return true;
            }
            self.stack.pop();
        }
        loop {
            if let Some(prefix) = self.queue.pop_front() {
                self.load_prefix(prefix);
                return true;
            }
            if self.round >= self.bound || self.next_queue.is_empty() {
                return false;
            }
            self.round += 1;
            std::mem::swap(&mut self.queue, &mut self.next_queue);
        }
    }

    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop> {
        for (node, e) in self.stack.iter_mut().zip(st.trace.iter()) {
            node.recorded.event = Some(*e);
        }
        let recorded_len = self.replayed.max(self.fixed);
        self.recorded = self.stack.iter().map(|n| n.recorded).collect();
        check_replay_end(st, recorded_len.min(self.stack.len()))
    }
}

impl Scheduler for Bounded {
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop> {
        let depth = st.trace.len();
        if depth <= self.replayed {
            check_replay(st, enabled, &self.recorded)?;
        }
        let current = st.active;
        if let Some(node) = self.stack.get_mut(depth) {
            if depth < self.fixed {
                node.recorded.enabled = enabled;
            }
            if enabled & (1 << node.chosen) == 0 {
                return Err(Stop::NonDeterminism {
                    step: depth,
                    first: format!("thread {} could run", node.chosen),
                    second: format!("thread {} is not enabled", node.chosen),
                });
            }
            return Ok(node.chosen);
        }
        let before = self.stack.last().map_or(self.round, |n| n.preemptions);
        let default = if enabled & (1 << current) != 0 {
            current
        } else {
            enabled.trailing_zeros() as usize
        };
        let mut alternatives = 0u64;
        let mut rest = enabled & !(1 << default);
        while rest != 0 {
            let t = rest.trailing_zeros() as usize;
            rest &= !(1 << t);
            if is_preemption(st, enabled, current, t) {
                if before < self.bound && self.next_queue.len() < self.queue_cap {
                    let mut prefix: Vec<ThreadId> = self.stack.iter().map(|n| n.chosen).collect();
                    prefix.push(t);
                    self.next_queue.push_back(prefix);
                }
            } else {
                alternatives |= 1 << t;
            }
        }
        self.stack.push(Node {
            chosen: default,
            alternatives,
            preemptions: before,
            recorded: Recorded {
                enabled,
                event: None,
            },
        });
        Ok(default)
    }
}
