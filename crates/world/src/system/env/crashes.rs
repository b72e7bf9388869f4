//! Crashes and restarts (budgets `crashes`, `restarts`): a crash loses the
//! node's volatile part, timers, wake-ups, pending choices and unflushed
//! persists; a restart starts the core again from its durable part.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::EventKind;
use crate::system::action::{Action, ChartStep, Family};
use crate::system::state::{Budget, Payload, WorldState};

use super::{live, open_requests, spend, Env, Observer, StepFault};

/// A node goes down or comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashAction {
    /// CRASH(n) (budget `crashes`).
    Crash {
        /// The node.
        node: u8,
    },
    /// RESTART(n) of a crashed node (budget `restarts`).
    Restart {
        /// The node.
        node: u8,
    },
}

impl CrashAction {
    /// The node that crashes or restarts.
    pub fn node(&self) -> u8 {
        match *self {
            CrashAction::Crash { node } | CrashAction::Restart { node } => node,
        }
    }
}

impl Family for CrashAction {
    const KINDS: &'static [(&'static str, Option<Budget>)] = &[
        ("CRASH", Some(Budget::Crashes)),
        ("RESTART", Some(Budget::Restarts)),
    ];

    fn kind(&self) -> (&'static str, bool) {
        match self {
            CrashAction::Crash { .. } => ("CRASH", true),
            CrashAction::Restart { .. } => ("RESTART", true),
        }
    }

    fn changed_node(&self) -> Option<u8> {
        Some(self.node())
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            CrashAction::Crash { node } => out.extend([5, node]),
            CrashAction::Restart { node } => out.extend([6, node]),
        }
    }

    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError> {
        Ok(match tag {
            5 => Some(CrashAction::Crash {
                node: u8::decode(decoder)?,
            }),
            6 => Some(CrashAction::Restart {
                node: u8::decode(decoder)?,
            }),
            _ => None,
        })
    }

    fn text(&self, _env: &Env) -> String {
        format!("{} n{}", self.kind().0, self.node())
    }

    fn chart(&self, _env: &Env) -> ChartStep {
        ChartStep::Local {
            node: self.node(),
            label: self.kind().0.into(),
        }
    }

    fn renamed(&self, _env: &Env, perm: &[u32]) -> Option<Self> {
        let node = perm[self.node() as usize] as u8;
        Some(match self {
            CrashAction::Crash { .. } => CrashAction::Crash { node },
            CrashAction::Restart { .. } => CrashAction::Restart { node },
        })
    }

    #[cfg(test)]
    fn examples() -> Vec<Self> {
        vec![
            CrashAction::Crash { node: 1 },
            CrashAction::Restart { node: 2 },
        ]
    }
}

impl Env {
    /// The CRASH and RESTART actions of every node, node by node.
    #[inline]
    pub(super) fn crash_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            let crashable = self.spec.crash_nodes.contains(&node);
            if !ns.crashed && crashable && state.budget(Budget::Crashes) > 0 {
                out.push(Action::Crash(CrashAction::Crash { node }));
            }
            if ns.crashed && state.budget(Budget::Restarts) > 0 {
                out.push(Action::Crash(CrashAction::Restart { node }));
            }
        }
    }

    /// The effect of a CRASH or RESTART: `Ok(false)` when it is not enabled.
    #[inline]
    pub(super) fn crash_next(
        &self,
        state: &WorldState,
        action: &CrashAction,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            CrashAction::Crash { node } => {
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
            CrashAction::Restart { node } => {
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
        }
        Ok(true)
    }
}
