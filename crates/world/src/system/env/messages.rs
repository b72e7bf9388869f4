//! Messages in flight: DELIVER, and the faults DROP and DUP (budgets
//! `drops`, `dups`). With a network bound, a surplus packet's delivery or
//! drop is explored both as the last surplus copy and with copies left.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::EventKind;
use crate::system::action::{Action, ChartStep, Family};
use crate::system::spec::NetSemantics;
use crate::system::state::{Budget, Payload, Slot, WorldState};

use super::{live, spend, Env, Observer, StepFault};

/// What happens to a message in flight.
///
/// With a `drops` and a `dups` budget, a message in flight may be delivered,
/// dropped or duplicated: three actions.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::action::{Action, NetOp};
/// use cmc_world::{World, WorldSpec};
///
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1);
/// let world = World::new(spec.param("drops", 1).param("dups", 1).build()?);
/// let (mut states, mut actions) = (Vec::new(), Vec::new());
/// world.init_states(&mut states);
/// let mut state = states.remove(0);
/// for _ in 0..2 { // CLIENT, then FLUSH of the request, which sends DATA
///     actions.clear();
///     world.actions(&state, &mut actions);
///     state = world.next_state(&state, &actions[0]).expect("enabled");
/// }
/// actions.clear();
/// world.actions(&state, &mut actions);
/// let ops: Vec<NetOp> = actions.iter().filter_map(|action| Some(action.net()?.op)).collect();
/// assert_eq!(ops, [NetOp::Deliver, NetOp::Drop, NetOp::Dup]);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode)]
pub enum NetOp {
    /// Hand it to the destination core (lost if the destination is down).
    Deliver,
    /// Lose it (budget `drops`).
    Drop,
    /// Add a copy (budget `dups`).
    Dup,
}

impl NetOp {
    /// `DELIVER`, `DROP` or `DUP`.
    pub fn name(self) -> &'static str {
        match self {
            NetOp::Deliver => "DELIVER",
            NetOp::Drop => "DROP",
            NetOp::Dup => "DUP",
        }
    }
}

/// Which copies of a packet a DELIVER or DROP leaves (see [`crate::system::env`]).
///
/// With `net_bound=1`, a retransmitted message has more copies than the
/// network counts: delivering it is two actions, one per outcome.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::action::{Action, NetOp, NodeAction, Surplus};
/// use cmc_world::{World, WorldSpec};
///
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1);
/// let world = World::new(spec.param("net_bound", 1).build()?);
/// let (mut states, mut actions) = (Vec::new(), Vec::new());
/// world.init_states(&mut states);
/// let mut state = states.remove(0);
/// let is_fire = |action: &Action| matches!(action, Action::Node(NodeAction::Fire { .. }));
/// for step in 0..3 { // CLIENT, FLUSH (sends DATA), then FIRE: DATA again
///     actions.clear();
///     world.actions(&state, &mut actions);
///     let action = if step == 2 { actions.iter().find(|a| is_fire(a)) } else { actions.first() };
///     state = world.next_state(&state, action.expect("enabled")).expect("enabled");
/// }
/// actions.clear();
/// world.actions(&state, &mut actions);
/// let delivers: Vec<Surplus> = actions.iter()
///     .filter_map(|action| action.net().filter(|net| net.op == NetOp::Deliver))
///     .map(|net| net.surplus)
///     .collect();
/// assert_eq!(delivers, [Surplus::Ends, Surplus::Stays]);
/// assert_eq!(Surplus::Ends.note(), " (last surplus copy)");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surplus {
    /// The packet's copies are counted: one fewer remains.
    None,
    /// The packet has surplus copies and some remain after this one.
    Stays,
    /// The packet has surplus copies and this was the last of them: exactly
    /// the counted copies remain.
    Ends,
}

impl Surplus {
    /// What an action's text says about it (empty for counted copies).
    pub fn note(self) -> &'static str {
        match self {
            Surplus::None => "",
            Surplus::Stays => " (surplus copy stays)",
            Surplus::Ends => " (last surplus copy)",
        }
    }
}

/// DELIVER, DROP or DUP of the message at `index` in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetAction {
    /// What happens to it.
    pub op: NetOp,
    /// Position of the packet among the messages in flight, in the
    /// network's order ([`Inspect::messages`](crate::system::inspect::Inspect::messages)'s).
    pub index: u16,
    /// Sending node.
    pub src: u8,
    /// Destination node.
    pub dst: u8,
    /// Message bytes.
    pub msg: Payload,
    /// For a packet with surplus copies (more than the network bound
    /// counts), whether surplus copies remain after this one: the two
    /// outcomes are separate actions so that both are explored.
    pub surplus: Surplus,
}

/// The encoding's tag of a message action.
const TAG: u8 = 0;

impl Family for NetAction {
    const KINDS: &'static [(&'static str, Option<Budget>)] = &[
        ("DELIVER", None),
        ("DROP", Some(Budget::Drops)),
        ("DUP", Some(Budget::Dups)),
    ];

    fn kind(&self) -> (&'static str, bool) {
        (self.op.name(), self.op != NetOp::Deliver)
    }

    fn changed_node(&self) -> Option<u8> {
        (self.op == NetOp::Deliver).then_some(self.dst)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(TAG);
        (self.op, self.index, self.src, self.dst).encode(out);
        self.msg.encode(out);
        out.push(self.surplus as u8);
    }

    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError> {
        if tag != TAG {
            return Ok(None);
        }
        let (op, index, src, dst) = <(NetOp, u16, u8, u8)>::decode(decoder)?;
        let msg = Payload::decode(decoder)?;
        let surplus = match u8::decode(decoder)? {
            0 => Surplus::None,
            1 => Surplus::Stays,
            2 => Surplus::Ends,
            tag => return decoder.invalid(format!("surplus tag {tag}")),
        };
        Ok(Some(NetAction {
            op,
            index,
            src,
            dst,
            msg,
            surplus,
        }))
    }

    fn text(&self, env: &Env) -> String {
        let NetAction {
            op,
            index,
            src,
            dst,
            ..
        } = *self;
        format!(
            "{} n{src}->n{dst} #{index} {}{}",
            op.name(),
            env.describe_message(src, self.msg.as_bytes()),
            self.surplus.note()
        )
    }

    fn chart(&self, env: &Env) -> ChartStep {
        let message = env.describe_message(self.src, self.msg.as_bytes());
        match self.op {
            NetOp::Deliver => ChartStep::Arrow {
                src: self.src,
                dst: self.dst,
                label: message,
            },
            op => ChartStep::Local {
                node: self.src,
                label: format!("{} ->n{} {message}", op.name(), self.dst),
            },
        }
    }

    fn renamed(&self, env: &Env, perm: &[u32]) -> Option<Self> {
        let src = self.src as usize;
        let mut bytes = self.msg.as_bytes().to_vec();
        env.spec
            .core_of(src)
            .permute_message(&env.configs[src], &mut bytes, perm);
        Some(NetAction {
            src: perm[src] as u8,
            dst: perm[self.dst as usize] as u8,
            msg: Payload::new(&bytes)?,
            ..*self
        })
    }

    /// A delivery first; the fair schedule drains surplus copies: it never
    /// assumes more stay.
    fn fair_rank(&self) -> Option<u8> {
        (self.op == NetOp::Deliver && self.surplus != Surplus::Stays).then_some(0)
    }

    #[cfg(test)]
    fn examples() -> Vec<Self> {
        let net = |op, surplus| NetAction {
            op,
            index: 3,
            src: 1,
            dst: 2,
            msg: Payload::new(b"m").unwrap(),
            surplus,
        };
        vec![
            net(NetOp::Deliver, Surplus::None),
            net(NetOp::Drop, Surplus::Stays),
            net(NetOp::Dup, Surplus::Ends),
        ]
    }
}

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
                    out.push(Action::Net(NetAction {
                        op,
                        index: index as u16,
                        src: packet.src,
                        dst: packet.dst,
                        msg: Payload::EMPTY,
                        surplus,
                    }));
                    if let Some(Action::Net(NetAction { msg, .. })) = out.last_mut() {
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
        action: &NetAction,
        slot: Slot,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let NetAction {
            op,
            src,
            dst,
            msg,
            surplus,
            ..
        } = *action;
        // The copy's packets are where the state's are.
        match op {
            NetOp::Deliver => {
                if self.spec.net != NetSemantics::Duplicating {
                    next.net.take_copy(slot, surplus);
                }
                if live(state, dst) {
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
        Ok(true)
    }
}
