//! Preemption-bounded exploration with iterative deepening (CHESS / Lincheck style): all
//! schedules with 0 preemptions, then exactly 1, then exactly 2, ... up to the bound.
//!
//! The search is a depth-first walk of the decision tree by re-execution. Within round `r`
//! only non-preemptive alternatives are explored; a preemptive alternative is saved as a
//! prefix for round `r + 1`. So every schedule runs exactly once, in the round equal to its
//! number of preemptions. Switching away from a thread that is blocked, finished, spinning
//! or at `yield_now` is not a preemption.
//!
//! Order of a round (it changes when a bug is found, never what a complete round covers):
//! the prefixes saved during round `r` are sorted into [`Priority`] classes, so round
//! `r + 1` first tries the preemptions that reverse a conflict the saved execution went on
//! to have (the preempted thread's next step and the next shared access of the thread
//! switched to touch a common object, one of them writing), at code locations not
//! preempted at before, then repeated locations, then the other preemptions; within a class,
//! in discovery order. Deterministic: the order only depends on the executions run.
//!
//! Every saved prefix keeps what its execution recorded (enabled threads and events), so
//! replaying it in a later round is checked like a replay inside a round: a divergence is a
//! non-determinism report naming the step.

use super::strategy::{
    check_replay, check_replay_end, is_preemption, ReadChoice, Recorded, Strategy,
};
use crate::rt::{ExecState, Scheduler, Stop, ThreadId};
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

struct Node {
    chosen: ThreadId,
    /// Which store the chosen thread's step reads (weak memory); read choices are not
    /// preemptions, so every one is explored in the node's round.
    read: ReadChoice,
    /// Non-preemptive alternatives not yet tried.
    alternatives: u64,
    /// Preemptions in the schedule up to and including this choice.
    preemptions: u32,
    recorded: Recorded,
}

/// One step of a finished execution, as saved prefixes replay it.
#[derive(Clone, Copy)]
struct Step {
    chosen: ThreadId,
    read: ReadChoice,
    recorded: Recorded,
}

/// A schedule prefix for the next round: the first `len` steps of `run`, then `then`.
struct Prefix {
    run: Rc<[Step]>,
    len: usize,
    then: ThreadId,
}

/// The order classes of a round's prefixes, tried first to last.
#[derive(Clone, Copy)]
enum Priority {
    /// Reverses a conflict, at a (location, thread) pair not preempted at before.
    NewConflict,
    /// Reverses a conflict at a pair already used.
    RepeatedConflict,
    /// No conflict follows, new pair.
    New,
    /// Everything else.
    Other,
}

const CLASSES: usize = 4;

/// The preemption-bounded strategy.
pub struct Bounded {
    bound: u32,
    round: u32,
    stack: Vec<Node>,
    /// Nodes `..fixed` come from a saved prefix and have no alternatives here.
    fixed: usize,
    /// Nodes that existed before the current execution (replayed, checked for divergence).
    replayed: usize,
    queue: VecDeque<Prefix>,
    /// The next round's prefixes by [`Priority`].
    next: [Vec<Prefix>; CLASSES],
    /// Preemptions saved by the current execution: (step, thread switched to).
    saved: Vec<(usize, ThreadId)>,
    /// (code location, thread switched to) pairs of the next round's prefixes so far.
    seen: HashSet<(usize, ThreadId)>,
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
            next: Default::default(),
            saved: Vec::new(),
            seen: HashSet::new(),
            queue_cap,
            started: false,
            recorded: Vec::new(),
        }
    }

    fn queued(&self) -> usize {
        self.next.iter().map(Vec::len).sum::<usize>() + self.saved.len()
    }

    fn load_prefix(&mut self, prefix: Prefix) {
        let preemptions = self.round;
        let node = |chosen, read, recorded| Node {
            chosen,
            read,
            alternatives: 0,
            preemptions,
            recorded,
        };
        self.stack.clear();
        self.stack.extend(
            prefix.run[..prefix.len]
                .iter()
                .map(|s| node(s.chosen, s.read, s.recorded)),
        );
        let enabled = prefix.run[prefix.len].recorded.enabled;
        self.stack.push(node(
            prefix.then,
            ReadChoice::default(),
            Recorded {
                enabled,
                event: None,
            },
        ));
        self.recorded = self.stack.iter().map(|n| n.recorded).collect();
        // The node switched to has no thread alternatives here, but its read choices are
        // this subtree's to explore.
        self.fixed = prefix.len;
        self.replayed = prefix.len;
    }

    /// The class of the preemption saved at `step` (to `then`) of the finished execution `st`.
    fn priority(&mut self, st: &ExecState, step: usize, then: ThreadId) -> Priority {
        let preempted = &st.trace[step];
        let conflict = st.trace[step..]
            .iter()
            .find(|e| e.thread == then && e.op.object().is_some())
            .is_some_and(|e| e.op.dependent(&preempted.op));
        let location = preempted.location as *const _ as usize;
        let new = self.seen.insert((location, then));
        match (conflict, new) {
            (true, true) => Priority::NewConflict,
            (true, false) => Priority::RepeatedConflict,
            (false, true) => Priority::New,
            (false, false) => Priority::Other,
        }
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
            if node.read.advance() {
                node.recorded.event = None;
                self.replayed = self.stack.len() - 1;
                self.recorded.truncate(self.replayed);
                return true;
            }
            if node.alternatives != 0 {
                let t = node.alternatives.trailing_zeros() as usize;
                node.alternatives &= !(1 << t);
                node.chosen = t;
                node.read = ReadChoice::default();
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
            if self.round >= self.bound || self.next.iter().all(Vec::is_empty) {
                return false;
            }
            self.round += 1;
            self.seen.clear();
            self.queue = self.next.iter_mut().flat_map(std::mem::take).collect();
        }
    }

    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop> {
        for (node, e) in self.stack.iter_mut().zip(st.trace.iter()) {
            node.recorded.event = Some(*e);
        }
        self.recorded = self.stack.iter().map(|n| n.recorded).collect();
        if !self.saved.is_empty() {
            let run: Rc<[Step]> = self
                .stack
                .iter()
                .map(|n| Step {
                    chosen: n.chosen,
                    read: n.read,
                    recorded: n.recorded,
                })
                .collect();
            for (len, then) in std::mem::take(&mut self.saved) {
                let class = self.priority(st, len, then) as usize;
                self.next[class].push(Prefix {
                    run: run.clone(),
                    len,
                    then,
                });
            }
        }
        let recorded_len = self.replayed.max(self.fixed);
        check_replay_end(st, recorded_len.min(self.stack.len()))
    }
}

impl Scheduler for Bounded {
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop> {
        let depth = st.trace.len();
        if depth == 0 {
            self.saved.clear();
        }
        if depth <= self.replayed {
            check_replay(st, enabled, &self.recorded)?;
        }
        let current = st.active;
        if let Some(node) = self.stack.get(depth) {
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
                if before < self.bound && self.queued() < self.queue_cap {
                    self.saved.push((depth, t));
                }
            } else {
                alternatives |= 1 << t;
            }
        }
        self.stack.push(Node {
            chosen: default,
            read: ReadChoice::default(),
            alternatives,
            preemptions: before,
            recorded: Recorded {
                enabled,
                event: None,
            },
        });
        Ok(default)
    }

    fn choose_stale(&mut self, st: &ExecState, options: u32) -> Result<u32, Stop> {
        let depth = st.trace.len();
        match self.stack.get_mut(depth) {
            Some(node) => node.read.choose(depth, options),
            None => Ok(0),
        }
    }
}
