//! The World's actions: environment steps, each enabled only by something a
//! core emitted or by a fault budget.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::world::state::{Packet, Payload};

/// What happens to a message in flight.
///
/// With a `drops` and a `dups` budget, a message in flight may be delivered,
/// dropped or duplicated: three actions.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::action::{Action, NetOp};
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
/// let ops: Vec<NetOp> = actions.iter()
///     .filter_map(|action| match action { Action::Net { op, .. } => Some(*op), _ => None })
///     .collect();
/// assert_eq!(ops, [NetOp::Deliver, NetOp::Drop, NetOp::Dup]);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
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

/// Which copies of a packet a DELIVER or DROP leaves (see [`crate::world::env`]).
///
/// With `net_bound=1`, a retransmitted message has more copies than the
/// network counts: delivering it is two actions, one per outcome.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::action::{Action, NetOp, Surplus};
/// use cmc_world::{World, WorldSpec};
///
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1);
/// let world = World::new(spec.param("net_bound", 1).build()?);
/// let (mut states, mut actions) = (Vec::new(), Vec::new());
/// world.init_states(&mut states);
/// let mut state = states.remove(0);
/// let is_fire = |action: &Action| matches!(action, Action::Fire { .. });
/// for step in 0..3 { // CLIENT, FLUSH (sends DATA), then FIRE: DATA again
///     actions.clear();
///     world.actions(&state, &mut actions);
///     let action = if step == 2 { actions.iter().find(|a| is_fire(a)) } else { actions.first() };
///     state = world.next_state(&state, action.expect("enabled")).expect("enabled");
/// }
/// actions.clear();
/// world.actions(&state, &mut actions);
/// let delivers: Vec<Surplus> = actions.iter()
///     .filter_map(|action| match action {
///         Action::Net { op: NetOp::Deliver, surplus, .. } => Some(*surplus), _ => None })
///     .collect();
/// assert_eq!(delivers, [Surplus::Ends, Surplus::Stays]);
/// assert_eq!(Surplus::Ends.note(), " (last surplus copy)");
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
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

/// One step of the World.
///
/// Message actions carry the message's position in the state's network and
/// its bytes, so that the action's text names the message unambiguously and
/// `next_state` can check it is applied to the state it came from.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::action::Action;
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "clients=0"])?;
/// let world = World::new(spec);
/// let mut states = Vec::new();
/// world.init_states(&mut states);
/// let mut actions = Vec::new();
/// world.actions(&states[0], &mut actions);
/// // No fault budget, nothing sent yet: only the client request is enabled.
/// let [client] = &actions[..] else { panic!("{actions:?}") };
/// assert!(matches!(client, Action::Client { request: 0, node: 0, .. }));
/// assert_eq!(client.kind().0, "CLIENT");
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// DELIVER, DROP or DUP of the message at `index` in the network.
    Net {
        /// What happens to it.
        op: NetOp,
        /// Position in [`crate::world::state::WorldState::net`].
        index: u16,
        /// Sending node.
        src: u8,
        /// Destination node.
        dst: u8,
        /// Message bytes.
        msg: Payload,
        /// For a packet with surplus copies (more than the network bound
        /// counts), whether surplus copies remain after this one: the two
        /// outcomes are separate actions so that both are explored.
        surplus: Surplus,
    },
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
    /// LINKS: cut or heal both directions between `a < b` (budget
    /// `partitions`): a cut when both are up, else a heal.
    Links {
        /// Lower node id.
        a: u8,
        /// Higher node id.
        b: u8,
        /// `true`: cut; `false`: heal.
        cut: bool,
    },
    /// CLIENT: request `request` is sent to `node`.
    Client {
        /// The request id.
        request: u8,
        /// The node it is sent to.
        node: u8,
        /// The operation: an index into the workload's operations
        /// ([`crate::world::spec::Workload::operations`]; 0 without a workload).
        op: u16,
    },
    /// LOCAL_FAIL: request `request` fails locally at `node` (budget `local_fails`).
    LocalFail {
        /// The request id.
        request: u8,
        /// The node that holds it.
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
    /// LINK: cut or heal the direction `src -> dst` only (budget `oneway_cuts`).
    OneWay {
        /// Sending side.
        src: u8,
        /// Receiving side.
        dst: u8,
        /// `true`: cut; `false`: heal.
        cut: bool,
    },
    /// ISOLATE: cut every link to and from `node` (budget `isolations`).
    Isolate {
        /// The node.
        node: u8,
    },
    /// SPLIT: cut every link between the nodes of `group` (a bit per node,
    /// node 0 always in it) and the others (budget `splits`).
    Split {
        /// The group containing node 0.
        group: u64,
    },
    /// RETRY: the client of open request `request` times out and sends it
    /// again to `node` (budget `retries`).
    Retry {
        /// The request id.
        request: u8,
        /// The node it is sent to now.
        node: u8,
    },
}

impl Action {
    /// A message action's fields in their encoding's order (`op`, `index`,
    /// `src`, `dst`, `msg`, `surplus`); `None` for any other action.
    pub(crate) fn net_fields(&self) -> Option<(NetOp, u16, u8, u8, Payload, Surplus)> {
        match *self {
            Action::Net {
                op,
                index,
                src,
                dst,
                msg,
                surplus,
            } => Some((op, index, src, dst, msg, surplus)),
            _ => None,
        }
    }

    /// The node whose state (core, clock, timers, persists, choices, ...)
    /// the action may change: the destination of a delivered message, the
    /// node of a node action; `None` for a drop, a duplication or a change
    /// of links. [`Env::next`](crate::world::env::Env::next) changes no
    /// other node.
    pub(crate) fn changed_node(&self) -> Option<u8> {
        match *self {
            Action::Net { op, dst, .. } => (op == NetOp::Deliver).then_some(dst),
            Action::Flush { node }
            | Action::Fire { node, .. }
            | Action::Wake { node, .. }
            | Action::Tick { node }
            | Action::Crash { node }
            | Action::Restart { node }
            | Action::Client { node, .. }
            | Action::LocalFail { node, .. }
            | Action::Choose { node, .. }
            | Action::Retry { node, .. } => Some(node),
            Action::Links { .. }
            | Action::OneWay { .. }
            | Action::Isolate { .. }
            | Action::Split { .. } => None,
        }
    }

    /// Whether this is a message action on `packet`: the same endpoints and
    /// bytes, and surplus outcomes exactly when the packet has surplus copies.
    pub fn names_packet(&self, packet: &Packet) -> bool {
        self.net_fields()
            .is_some_and(|(_, _, src, dst, msg, surplus)| {
                (packet.src, packet.dst, packet.msg) == (src, dst, msg)
                    && packet.surplus == (surplus != Surplus::None)
            })
    }

    /// The action's kind (`DELIVER`, `DROP`, `DUP`, `FLUSH`, `FIRE`, `WAKE`,
    /// `TICK`, `CRASH`, `RESTART`, `PARTITION` (a cut link), `HEAL`, `CLIENT`,
    /// `LOCAL_FAIL`, `CHOOSE`, `ONEWAY_CUT`, `ONEWAY_HEAL`, `ISOLATE`, `SPLIT`,
    /// `RETRY`) and whether it is a fault, taken from a budget.
    pub fn kind(&self) -> (&'static str, bool) {
        match *self {
            Action::Net { op, .. } => (op.name(), op != NetOp::Deliver),
            Action::Flush { .. } => ("FLUSH", false),
            Action::Fire { .. } => ("FIRE", false),
            Action::Wake { .. } => ("WAKE", false),
            Action::Tick { .. } => ("TICK", true),
            Action::Crash { .. } => ("CRASH", true),
            Action::Restart { .. } => ("RESTART", true),
            Action::Links { cut: true, .. } => ("PARTITION", true),
            Action::Links { cut: false, .. } => ("HEAL", true),
            Action::Client { .. } => ("CLIENT", false),
            Action::LocalFail { .. } => ("LOCAL_FAIL", true),
            Action::Choose { .. } => ("CHOOSE", false),
            Action::OneWay { cut: true, .. } => ("ONEWAY_CUT", true),
            Action::OneWay { cut: false, .. } => ("ONEWAY_HEAL", true),
            Action::Isolate { .. } => ("ISOLATE", true),
            Action::Split { .. } => ("SPLIT", true),
            Action::Retry { .. } => ("RETRY", true),
        }
    }
}

/// Every environment action kind with the fault budget that enables it
/// (`None`: not a fault), as [`Action::kind`] names them.
pub const KINDS: [(&str, Option<crate::world::state::Budget>); 19] = {
    use crate::world::state::Budget;
    [
        ("DELIVER", None),
        ("DROP", Some(Budget::Drops)),
        ("DUP", Some(Budget::Dups)),
        ("FLUSH", None),
        ("FIRE", None),
        ("WAKE", None),
        ("TICK", Some(Budget::Ticks)),
        ("CRASH", Some(Budget::Crashes)),
        ("RESTART", Some(Budget::Restarts)),
        ("PARTITION", Some(Budget::Partitions)),
        ("HEAL", Some(Budget::Partitions)),
        ("CLIENT", None),
        ("LOCAL_FAIL", Some(Budget::LocalFails)),
        ("CHOOSE", None),
        ("ONEWAY_CUT", Some(Budget::OneWayCuts)),
        ("ONEWAY_HEAL", Some(Budget::OneWayCuts)),
        ("ISOLATE", Some(Budget::Isolations)),
        ("SPLIT", Some(Budget::Splits)),
        ("RETRY", Some(Budget::Retries)),
    ]
};

impl Encode for Action {
    fn encode(&self, out: &mut Vec<u8>) {
        if let Some((op, index, src, dst, msg, surplus)) = self.net_fields() {
            out.push(0);
            (op, index, src, dst).encode(out);
            msg.encode(out);
            out.push(surplus as u8);
            return;
        }
        match *self {
            Action::Net { .. } => unreachable!("encoded above"),
            Action::Flush { node } => out.extend([1, node]),
            Action::Fire { node, timer } => out.extend([2, node, timer]),
            Action::Wake { node, wake } => out.extend([3, node, wake]),
            Action::Tick { node } => out.extend([4, node]),
            Action::Crash { node } => out.extend([5, node]),
            Action::Restart { node } => out.extend([6, node]),
            Action::Links { a, b, cut } => out.extend([7, a, b, u8::from(cut)]),
            Action::Client { request, node, op } => {
                out.extend([8, request, node]);
                op.encode(out);
            }
            Action::LocalFail { request, node } => out.extend([9, request, node]),
            Action::Choose {
                node,
                choice,
                value,
            } => out.extend([10, node, choice, value]),
            Action::OneWay { src, dst, cut } => out.extend([11, src, dst, u8::from(cut)]),
            Action::Isolate { node } => out.extend([12, node]),
            Action::Split { group } => {
                out.push(13);
                group.encode(out);
            }
            Action::Retry { request, node } => out.extend([14, request, node]),
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let byte = |decoder: &mut Decoder<'_>| u8::decode(decoder);
        Ok(match byte(decoder)? {
            0 => {
                let (op, index, src, dst) = <(NetOp, u16, u8, u8)>::decode(decoder)?;
                Action::Net {
                    op,
                    index,
                    src,
                    dst,
                    msg: Payload::decode(decoder)?,
                    surplus: match u8::decode(decoder)? {
                        0 => Surplus::None,
                        1 => Surplus::Stays,
                        2 => Surplus::Ends,
                        tag => return decoder.invalid(format!("surplus tag {tag}")),
                    },
                }
            }
            1 => Action::Flush {
                node: byte(decoder)?,
            },
            2 => Action::Fire {
                node: byte(decoder)?,
                timer: byte(decoder)?,
            },
            3 => Action::Wake {
                node: byte(decoder)?,
                wake: byte(decoder)?,
            },
            4 => Action::Tick {
                node: byte(decoder)?,
            },
            5 => Action::Crash {
                node: byte(decoder)?,
            },
            6 => Action::Restart {
                node: byte(decoder)?,
            },
            7 => Action::Links {
                a: byte(decoder)?,
                b: byte(decoder)?,
                cut: bool::decode(decoder)?,
            },
            8 => Action::Client {
                request: byte(decoder)?,
                node: byte(decoder)?,
                op: u16::decode(decoder)?,
            },
            9 => Action::LocalFail {
                request: byte(decoder)?,
                node: byte(decoder)?,
            },
            10 => Action::Choose {
                node: byte(decoder)?,
                choice: byte(decoder)?,
                value: byte(decoder)?,
            },
            11 => Action::OneWay {
                src: byte(decoder)?,
                dst: byte(decoder)?,
                cut: bool::decode(decoder)?,
            },
            12 => Action::Isolate {
                node: byte(decoder)?,
            },
            13 => Action::Split {
                group: u64::decode(decoder)?,
            },
            14 => Action::Retry {
                request: byte(decoder)?,
                node: byte(decoder)?,
            },
            tag => return decoder.invalid(format!("world action tag {tag}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_kind_is_listed_with_its_budget() {
        let msg = Payload::new(b"m").unwrap();
        let net = |op| Action::Net {
            op,
            index: 0,
            src: 0,
            dst: 1,
            msg,
            surplus: Surplus::None,
        };
        let actions = [
            net(NetOp::Deliver),
            net(NetOp::Drop),
            net(NetOp::Dup),
            Action::Flush { node: 0 },
            Action::Fire { node: 0, timer: 1 },
            Action::Wake { node: 0, wake: 1 },
            Action::Tick { node: 0 },
            Action::Crash { node: 0 },
            Action::Restart { node: 0 },
            Action::Links {
                a: 0,
                b: 1,
                cut: true,
            },
            Action::Links {
                a: 0,
                b: 1,
                cut: false,
            },
            Action::Client {
                request: 0,
                node: 0,
                op: 0,
            },
            Action::LocalFail {
                request: 0,
                node: 0,
            },
            Action::Choose {
                node: 0,
                choice: 0,
                value: 0,
            },
            Action::OneWay {
                src: 0,
                dst: 1,
                cut: true,
            },
            Action::OneWay {
                src: 0,
                dst: 1,
                cut: false,
            },
            Action::Isolate { node: 0 },
            Action::Split { group: 1 },
            Action::Retry {
                request: 0,
                node: 0,
            },
        ];
        let kinds: Vec<(&str, bool)> = actions.iter().map(Action::kind).collect();
        let listed: Vec<(&str, bool)> = KINDS
            .iter()
            .map(|&(name, budget)| (name, budget.is_some()))
            .collect();
        assert_eq!(kinds, listed);
    }

    #[test]
    fn actions_round_trip() {
        let actions = [
            Action::Net {
                op: NetOp::Dup,
                index: 3,
                src: 1,
                dst: 2,
                msg: Payload::new(b"m").unwrap(),
                surplus: Surplus::Ends,
            },
            Action::Links {
                a: 0,
                b: 2,
                cut: true,
            },
            Action::LocalFail {
                request: 1,
                node: 0,
            },
            Action::Client {
                request: 2,
                node: 1,
                op: 300,
            },
            Action::Choose {
                node: 1,
                choice: 4,
                value: 2,
            },
            Action::OneWay {
                src: 2,
                dst: 0,
                cut: true,
            },
            Action::Isolate { node: 3 },
            Action::Split { group: 0b1011 },
            Action::Retry {
                request: 0,
                node: 2,
            },
        ];
        for action in actions {
            assert_eq!(Action::decode_exact(&action.to_bytes()).unwrap(), action);
        }
        assert!(Action::decode_exact(&[42]).is_err());
    }
}
