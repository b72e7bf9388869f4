//! What happens at one node on its own: FLUSH of its oldest unflushed
//! persist, FIRE of a due timer, WAKE, CHOOSE of a pending random choice, and
//! TICK of its clock (budget `ticks`; with `skew=K`, within K of the slowest).

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::{Event, EventKind};
use crate::system::action::{Action, ChartStep, Family};
use crate::system::state::{Budget, Payload, WorldState};

use super::{bits, live, spend, take_bit, Env, Observer, StepFault};

/// An event of one node on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAction {
    /// FLUSH(n): the oldest pending persist of `node` becomes durable.
    Flush {
        /// The node.
        node: u8,
    },
    /// FIRE(n, k): armed timer `timer` of `node` fires.
    Fire {
        /// The node.
        node: u8,
        /// The timer id.
        timer: u8,
    },
    /// WAKE(n, w): pending wake-up `wake` of `node` runs.
    Wake {
        /// The node.
        node: u8,
        /// The wake id.
        wake: u8,
    },
    /// TICK(n): `node`'s clock advances by one (budget `ticks`).
    Tick {
        /// The node.
        node: u8,
    },
    /// CHOICE: pending random choice `choice` of `node` takes `value`.
    Choose {
        /// The node that asked.
        node: u8,
        /// The choice id.
        choice: u8,
        /// The value, below the choice's `k`.
        value: u8,
    },
}

impl NodeAction {
    /// The node the event happens at.
    pub fn node(&self) -> u8 {
        match *self {
            NodeAction::Flush { node }
            | NodeAction::Fire { node, .. }
            | NodeAction::Wake { node, .. }
            | NodeAction::Tick { node }
            | NodeAction::Choose { node, .. } => node,
        }
    }

    /// The event's text without its node (`FIRE timer=1`).
    fn label(&self) -> String {
        match *self {
            NodeAction::Flush { .. } => "FLUSH".into(),
            NodeAction::Fire { timer, .. } => format!("FIRE timer={timer}"),
            NodeAction::Wake { wake, .. } => format!("WAKE id={wake}"),
            NodeAction::Tick { .. } => "TICK".into(),
            NodeAction::Choose { choice, value, .. } => {
                format!("CHOICE id={choice} value={value}")
            }
        }
    }
}

impl Family for NodeAction {
    const KINDS: &'static [(&'static str, Option<Budget>)] = &[
        ("FLUSH", None),
        ("FIRE", None),
        ("WAKE", None),
        ("TICK", Some(Budget::Ticks)),
        ("CHOOSE", None),
    ];

    fn kind(&self) -> (&'static str, bool) {
        match self {
            NodeAction::Flush { .. } => ("FLUSH", false),
            NodeAction::Fire { .. } => ("FIRE", false),
            NodeAction::Wake { .. } => ("WAKE", false),
            NodeAction::Tick { .. } => ("TICK", true),
            NodeAction::Choose { .. } => ("CHOOSE", false),
        }
    }

    fn changed_node(&self) -> Option<u8> {
        Some(self.node())
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            NodeAction::Flush { node } => out.extend([1, node]),
            NodeAction::Fire { node, timer } => out.extend([2, node, timer]),
            NodeAction::Wake { node, wake } => out.extend([3, node, wake]),
            NodeAction::Tick { node } => out.extend([4, node]),
            NodeAction::Choose {
                node,
                choice,
                value,
            } => out.extend([10, node, choice, value]),
        }
    }

    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError> {
        let mut byte = || u8::decode(decoder);
        Ok(Some(match tag {
            1 => NodeAction::Flush { node: byte()? },
            2 => NodeAction::Fire {
                node: byte()?,
                timer: byte()?,
            },
            3 => NodeAction::Wake {
                node: byte()?,
                wake: byte()?,
            },
            4 => NodeAction::Tick { node: byte()? },
            10 => NodeAction::Choose {
                node: byte()?,
                choice: byte()?,
                value: byte()?,
            },
            _ => return Ok(None),
        }))
    }

    fn text(&self, _env: &Env) -> String {
        let (label, node) = (self.label(), self.node());
        match label.split_once(' ') {
            Some((kind, rest)) => format!("{kind} n{node} {rest}"),
            None => format!("{label} n{node}"),
        }
    }

    fn chart(&self, _env: &Env) -> ChartStep {
        ChartStep::Local {
            node: self.node(),
            label: self.label(),
        }
    }

    fn renamed(&self, _env: &Env, perm: &[u32]) -> Option<Self> {
        let mut renamed = *self;
        let (NodeAction::Flush { node }
        | NodeAction::Fire { node, .. }
        | NodeAction::Wake { node, .. }
        | NodeAction::Tick { node }
        | NodeAction::Choose { node, .. }) = &mut renamed;
        *node = perm[*node as usize] as u8;
        Some(renamed)
    }

    /// FLUSH, then WAKE and CHOOSE (a pending choice is made with some
    /// value: the first enabled), FIRE, TICK.
    fn fair_rank(&self) -> Option<u8> {
        Some(match self {
            NodeAction::Flush { .. } => 1,
            NodeAction::Wake { .. } | NodeAction::Choose { .. } => 2,
            NodeAction::Fire { .. } => 4,
            NodeAction::Tick { .. } => 5,
        })
    }

    #[cfg(test)]
    fn examples() -> Vec<Self> {
        vec![
            NodeAction::Flush { node: 2 },
            NodeAction::Fire { node: 1, timer: 3 },
            NodeAction::Wake { node: 1, wake: 4 },
            NodeAction::Tick { node: 2 },
            NodeAction::Choose {
                node: 1,
                choice: 4,
                value: 2,
            },
        ]
    }
}

impl Env {
    /// The FLUSH, FIRE, WAKE, CHOOSE and TICK actions of every node, node by
    /// node (a crashed node's clock still ticks under a drift bound).
    #[inline]
    pub(super) fn node_event_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            if ns.crashed {
                if self.spec.skew.is_some() && self.may_tick(state, node) {
                    out.push(Action::Node(NodeAction::Tick { node }));
                }
                continue;
            }
            if !ns.persists.is_empty() {
                out.push(Action::Node(NodeAction::Flush { node }));
            }
            out.extend(
                bits(ns.timers)
                    .filter(|&timer| ns.timer_due(timer))
                    .map(|timer| Action::Node(NodeAction::Fire { node, timer })),
            );
            out.extend(bits(ns.wakes).map(|wake| Action::Node(NodeAction::Wake { node, wake })));
            for choice in &ns.choices {
                out.extend((0..choice.k).map(|value| {
                    Action::Node(NodeAction::Choose {
                        node,
                        choice: choice.id,
                        value,
                    })
                }));
            }
            if self.may_tick(state, node) {
                out.push(Action::Node(NodeAction::Tick { node }));
            }
        }
    }

    /// The effect of a FLUSH, FIRE, WAKE, TICK or CHOOSE: `Ok(false)` when it
    /// is not enabled.
    #[inline]
    pub(super) fn node_event_next(
        &self,
        state: &WorldState,
        action: &NodeAction,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            NodeAction::Flush { node } => {
                if !live(node) || next.nodes[node as usize].persists.is_empty() {
                    return Ok(false);
                }
                let persist = next.nodes[node as usize].persists.remove(0);
                let bytes = persist.bytes.as_bytes();
                let offset = persist.offset as usize;
                next.nodes[node as usize].core[offset..offset + bytes.len()].copy_from_slice(bytes);
                self.step(
                    next,
                    node,
                    EventKind::Flushed,
                    0,
                    persist.offset,
                    &persist.bytes,
                    observer,
                )?;
            }
            NodeAction::Fire { node, timer } => {
                if !live(node) || !state.nodes[node as usize].timer_due(timer) {
                    return Ok(false);
                }
                let ns = &mut next.nodes[node as usize];
                if !take_bit(&mut ns.timers, timer) {
                    return Ok(false);
                }
                ns.set_deadline(timer, None);
                self.step(
                    next,
                    node,
                    EventKind::Timer,
                    0,
                    timer as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            NodeAction::Wake { node, wake } => {
                if !live(node) || !take_bit(&mut next.nodes[node as usize].wakes, wake) {
                    return Ok(false);
                }
                self.step(
                    next,
                    node,
                    EventKind::Wake,
                    0,
                    wake as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            NodeAction::Tick { node } => {
                let exists = (node as usize) < state.nodes.len();
                if !exists || !(live(node) || self.spec.skew.is_some()) {
                    return Ok(false);
                }
                if !self.may_tick(state, node) || !spend(next, Budget::Ticks) {
                    return Ok(false);
                }
                let clock = &mut next.nodes[node as usize].clock;
                *clock = clock.checked_add(1).ok_or_else(|| {
                    let event = Event::new(EventKind::Tick, 0, 0, &[], u32::MAX as u64);
                    StepFault::capacity(
                        node,
                        event,
                        format!("the clock of n{node} is at its maximum, {}", u32::MAX),
                    )
                })?;
                if live(node) {
                    self.step(next, node, EventKind::Tick, 0, 0, &Payload::EMPTY, observer)?;
                }
            }
            NodeAction::Choose {
                node,
                choice,
                value,
            } => {
                if !live(node) {
                    return Ok(false);
                }
                let choices = &mut next.nodes[node as usize].choices;
                let Some(at) = choices.iter().position(|c| c.id == choice && value < c.k) else {
                    return Ok(false);
                };
                choices.remove(at);
                self.step(
                    next,
                    node,
                    EventKind::Choice,
                    0,
                    choice as u32,
                    &Payload::new(&[value]).expect("one byte"),
                    observer,
                )?;
            }
        }
        Ok(true)
    }

    /// Whether TICK of `node` is enabled: ticks are left and, with a drift
    /// bound `skew=K`, the node's next clock value stays within K of every
    /// other node's clock (crashed nodes included).
    fn may_tick(&self, state: &WorldState, node: u8) -> bool {
        if state.budget(Budget::Ticks) == 0 {
            return false;
        }
        let Some(skew) = self.spec.skew else {
            return true;
        };
        let slowest = state.nodes.iter().map(|ns| ns.clock).min().unwrap_or(0);
        let next = state.nodes[node as usize].clock as u64 + 1;
        next - slowest as u64 <= skew as u64
    }
}
