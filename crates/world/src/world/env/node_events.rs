//! What happens at one node on its own: FLUSH of its oldest unflushed
//! persist, FIRE of a due timer, WAKE, CHOOSE of a pending random choice, and
//! TICK of its clock (budget `ticks`; with `skew=K`, within K of the slowest).

use crate::core::abi::{Event, EventKind};
use crate::world::action::Action;
use crate::world::state::{Budget, Payload, WorldState};

use super::{bits, live, spend, take_bit, Env, Observer, StepFault};

impl Env {
    /// The FLUSH, FIRE, WAKE, CHOOSE and TICK actions of every node, node by
    /// node (a crashed node's clock still ticks under a drift bound).
    #[inline]
    pub(super) fn node_event_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            if ns.crashed {
                if self.spec.skew.is_some() && self.may_tick(state, node) {
                    out.push(Action::Tick { node });
                }
                continue;
            }
            if !ns.persists.is_empty() {
                out.push(Action::Flush { node });
            }
            out.extend(
                bits(ns.timers)
                    .filter(|&timer| ns.timer_due(timer))
                    .map(|timer| Action::Fire { node, timer }),
            );
            out.extend(bits(ns.wakes).map(|wake| Action::Wake { node, wake }));
            for choice in &ns.choices {
                out.extend((0..choice.k).map(|value| Action::Choose {
                    node,
                    choice: choice.id,
                    value,
                }));
            }
            if self.may_tick(state, node) {
                out.push(Action::Tick { node });
            }
        }
    }

    /// The effect of a FLUSH, FIRE, WAKE, TICK or CHOOSE: `Ok(false)` when it
    /// is not enabled.
    #[inline]
    pub(super) fn node_event_next(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            Action::Flush { node } => {
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
            Action::Fire { node, timer } => {
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
            Action::Wake { node, wake } => {
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
            Action::Tick { node } => {
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
            Action::Choose {
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
            _ => unreachable!("dispatched to the wrong family: {action:?}"),
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
