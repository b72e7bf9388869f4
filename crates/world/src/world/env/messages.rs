//! Messages in flight: DELIVER, and the faults DROP and DUP (budgets
//! `drops`, `dups`). With a network bound, a surplus packet's delivery or
//! drop is explored both as the last surplus copy and with copies left.

use crate::core::abi::EventKind;
use crate::world::action::{Action, NetOp, Surplus};
use crate::world::spec::NetSemantics;
use crate::world::state::{Budget, Payload, Slot, WorldState};

use super::{live, spend, Env, Observer, StepFault};

impl Env {
    /// The DELIVER, DROP and DUP actions of `state`'s packets, in network order
    /// (in a FIFO network, only each link's first packet).
    #[inline]
    pub(super) fn message_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        let fifo = self.spec.net == NetSemantics::Fifo;
        let mut link_before = None;
        for (index, packet) in state.net.refs().enumerate() {
            let link = (packet.src, packet.dst);
            let head = !fifo || link_before != Some(link);
            link_before = Some(link);
            if !head {
                continue;
            }
            let outcomes: &[Surplus] = if packet.surplus {
                &[Surplus::Ends, Surplus::Stays]
            } else {
                &[Surplus::None]
            };
            // Each action's payload written in its place, never copied
            // from a payload just written (see `Network::refs`).
            let mut net = |op| {
                for &surplus in outcomes {
                    out.push(Action::Net {
                        op,
                        index: index as u16,
                        src: packet.src,
                        dst: packet.dst,
                        msg: Payload::EMPTY,
                        surplus,
                    });
                    if let Some(Action::Net { msg, .. }) = out.last_mut() {
                        msg.set_bytes(packet.msg);
                    }
                }
            };
            let to_crashed = state.nodes[packet.dst as usize].crashed;
            let duplicating = self.spec.net == NetSemantics::Duplicating;
            if state.link_up(packet.src, packet.dst) && !(to_crashed && duplicating) {
                net(NetOp::Deliver);
            }
            if state.budget(Budget::Drops) > 0 {
                net(NetOp::Drop);
            }
            // A copy more of a surplus packet changes nothing.
            if state.budget(Budget::Dups) > 0 && !duplicating && !packet.surplus {
                net(NetOp::Dup);
            }
        }
    }

    /// The effect of a DELIVER, DROP or DUP of the packet at `slot` (checked by
    /// the caller to be the one the action names): `Ok(false)` when it is not
    /// enabled.
    #[inline]
    pub(super) fn message_next(
        &self,
        state: &WorldState,
        action: &Action,
        slot: Slot,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            Action::Net {
                op,
                src,
                dst,
                msg,
                surplus,
                ..
            } => {
                // The copy's packets are where the state's are.
                match op {
                    NetOp::Deliver => {
                        if self.spec.net != NetSemantics::Duplicating {
                            next.net.take_copy(slot, surplus);
                        }
                        if live(dst) {
                            self.step(next, dst, EventKind::Recv, src as u32, 0, &msg, observer)?;
                        }
                    }
                    NetOp::Drop => {
                        if !spend(next, Budget::Drops) {
                            return Ok(false);
                        }
                        next.net.take_copy(slot, surplus);
                    }
                    NetOp::Dup => {
                        if surplus != Surplus::None || !spend(next, Budget::Dups) {
                            return Ok(false);
                        }
                        next.net.add_copy(slot, u8::MAX);
                    }
                }
            }
            _ => unreachable!("dispatched to the wrong family: {action:?}"),
        }
        Ok(true)
    }
}
