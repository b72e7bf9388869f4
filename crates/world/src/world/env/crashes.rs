//! Crashes and restarts (budgets `crashes`, `restarts`): a crash loses the
//! node's volatile part, timers, wake-ups, pending choices and unflushed
//! persists; a restart starts the core again from its durable part.

use crate::core::abi::EventKind;
use crate::world::action::Action;
use crate::world::state::{Budget, Payload, WorldState};

use super::{live, open_requests, spend, Env, Observer, StepFault};

impl Env {
    /// The CRASH and RESTART actions of every node, node by node.
    #[inline]
    pub(super) fn crash_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            let crashable = self.spec.crash_nodes.contains(&node);
            if !ns.crashed && crashable && state.budget(Budget::Crashes) > 0 {
                out.push(Action::Crash { node });
            }
            if ns.crashed && state.budget(Budget::Restarts) > 0 {
                out.push(Action::Restart { node });
            }
        }
    }

    /// The effect of a CRASH or RESTART: `Ok(false)` when it is not enabled.
    #[inline]
    pub(super) fn crash_next(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            Action::Crash { node } => {
                if !live(node) || !self.spec.crash_nodes.contains(&node) {
                    return Ok(false);
                }
                if !spend(next, Budget::Crashes) {
                    return Ok(false);
                }
                for (request, _) in open_requests(state).filter(|(_, at)| *at == node) {
                    let request = request as u8;
                    if let Err(at) = next.lost_in_crash.binary_search(&request) {
                        next.lost_in_crash.insert(at, request);
                    }
                }
                let durable = self.spec.core_of(node as usize).durable_size();
                let ns = &mut next.nodes[node as usize];
                ns.core[durable..].fill(0);
                ns.crashed = true;
                ns.timers = 0;
                ns.deadlines.clear();
                ns.wakes = 0;
                ns.persists.clear();
                ns.choices.clear();
            }
            Action::Restart { node } => {
                if (node as usize) >= state.nodes.len() || !state.nodes[node as usize].crashed {
                    return Ok(false);
                }
                if !spend(next, Budget::Restarts) {
                    return Ok(false);
                }
                next.nodes[node as usize].crashed = false;
                self.step(
                    next,
                    node,
                    EventKind::Start,
                    0,
                    0,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            _ => unreachable!("dispatched to the wrong family: {action:?}"),
        }
        Ok(true)
    }
}
