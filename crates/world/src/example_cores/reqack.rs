//! `reqack`: a request/acknowledge protocol with retransmission, in Rust.
//!
//! Node 0 is the sender, every other node a receiver. A client request to the
//! sender is made durable (PERSIST `pending`), then sent as DATA to every
//! receiver, and retransmitted on timer 0 until each receiver has ACKed. A
//! receiver stores the request id durably and ACKs only once the store is
//! flushed. When all ACKs are in, the sender durably clears `pending` and only
//! then replies OK to the client. A request that arrives while one is in
//! progress is answered BUSY at once.
//!
//! Same semantics and same state layout as `cores/reqack/reqack.c`.
//! Planted bugs (`bug`): 1 replies before the clear of `pending` is flushed
//! (a crash then makes the sender reply twice); 2 makes receivers ACK before
//! their store is flushed (a crash then loses an acknowledged request); 3
//! (Rust only) re-arms the retransmission timer but forgets to retransmit (a
//! dropped DATA then leaves the client unanswered while the timer fires
//! forever: no deadlock, caught by the quiescence check).

use bytemuck::{Pod, Zeroable};

use cmc_model::Property;

use crate::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use crate::core::helpers::{self, send, send_to_each, Message};
use crate::core::TypedCore;
use crate::system::state::WorldState;
use crate::World;

/// Message type of DATA(request).
pub const MSG_DATA: u32 = 1;
/// Message type of ACK(request).
pub const MSG_ACK: u32 = 2;
/// Reply payload: the request was delivered to every receiver.
pub const REPLY_OK: u8 = 1;
/// Reply payload: another request was in progress.
pub const REPLY_BUSY: u8 = 0;
/// Durable offset of [`Durable::pending`].
pub const OFFSET_PENDING: u32 = 0;
/// Durable offset of [`Durable::stored`].
pub const OFFSET_STORED: u32 = 4;
/// The retransmission timer.
pub const TIMER_RESEND: u32 = 0;

/// Sender phases ([`Volatile::phase`]).
pub mod phase {
    /// No request in progress.
    pub const IDLE: u32 = 0;
    /// Waiting for `pending` to be flushed.
    pub const PERSISTING: u32 = 1;
    /// Sending DATA, collecting ACKs.
    pub const SENDING: u32 = 2;
    /// Waiting for the clear of `pending` to be flushed.
    pub const CLEARING: u32 = 3;
}

/// The durable part; a core persists each field at its offset
/// ([`OFFSET_PENDING`], [`OFFSET_STORED`]).
///
/// ```
/// use std::mem::offset_of;
/// use cmc_world::core::abi::{Config, Event, EventKind, Outputs};
/// use cmc_world::example_cores::reqack::{Durable, ReqAck, Volatile, OFFSET_PENDING, OFFSET_STORED};
/// use cmc_world::TypedCore;
///
/// assert_eq!(offset_of!(Durable, pending), OFFSET_PENDING as usize);
/// assert_eq!(offset_of!(Durable, stored), OFFSET_STORED as usize);
/// // The sender makes request 4 durable as `pending` = 4 + 1.
/// let (sender, mut out) = (Config { node: 0, nodes: 2, params: [0; 8] }, Outputs::default());
/// let request = Event::new(EventKind::Client, 0, 4, &[], 0);
/// ReqAck::default().step(&sender, &Durable::default(), &mut Volatile::default(), &request, &mut out)?;
/// let persist = out.as_slice()[0];
/// assert_eq!((persist.id, persist.payload()), (OFFSET_PENDING, &5u32.to_le_bytes()[..]));
/// # Ok::<(), cmc_world::core::abi::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// Sender: request id + 1 being delivered; 0 for none.
    pub pending: u32,
    /// Receiver: bit per request id stored.
    pub stored: u32,
}

/// The volatile part.
///
/// ```
/// use cmc_world::core::abi::{Config, Event, EventKind, Outputs};
/// use cmc_world::example_cores::reqack::{phase, Durable, ReqAck, Volatile};
/// use cmc_world::TypedCore;
///
/// let sender = Config { node: 0, nodes: 2, params: [0; 8] };
/// let mut v = Volatile::default();
/// let request = Event::new(EventKind::Client, 0, 4, &[], 0);
/// ReqAck::default().step(&sender, &Durable::default(), &mut v, &request, &mut Outputs::default())?;
/// assert_eq!(v, Volatile { phase: phase::PERSISTING, request: 5, acked: 0, flushing: 0 });
/// # Ok::<(), cmc_world::core::abi::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// Sender: one of [`phase`].
    pub phase: u32,
    /// Sender: request id + 1 in progress; 0 for none.
    pub request: u32,
    /// Sender: bit per receiver that ACKed.
    pub acked: u32,
    /// Receiver: bit per request id persisted but not yet flushed.
    pub flushing: u32,
}

/// The Rust `reqack` core; `bug` selects a planted bug (0: none; see the
/// module's text for bugs 1 to 3).
///
/// # Example
///
/// Bug 3 never retransmits: after a dropped DATA the timer fires forever
/// and the client is never answered. No state is a deadlock, so only the
/// quiescence check (`quiescence=STEPS`: from every state whose faults are
/// spent, a fair schedule answers every client within STEPS steps) sees it.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::quiescence::QUIESCENCE;
/// use cmc_world::{World, WorldSpec};
///
/// let check = |bug, quiescence: Option<u32>| {
///     let mut spec = WorldSpec::builder(Arc::new(ReqAck { bug }), 2).requests(1).param("drops", 1);
///     if let Some(steps) = quiescence {
///         spec = spec.quiescence(steps);
///     }
///     Checker::new(World::new(spec.build().unwrap())).workers(1).run().verdict
/// };
/// assert_eq!(check(3, None), Verdict::Pass);
/// assert!(matches!(check(3, Some(20)),
///     Verdict::Violated { property, .. } if property == QUIESCENCE));
/// assert_eq!(check(0, Some(20)), Verdict::Pass, "the correct core retransmits");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ReqAck {
    /// Planted bug number, 0 for the correct protocol.
    pub bug: u32,
}

/// A message: its type ([`MSG_DATA`] or [`MSG_ACK`]) and the request id,
/// two little-endian words (longer payloads: the first two words).
///
/// ```
/// use cmc_world::core::helpers::Message;
/// use cmc_world::example_cores::reqack::{describe_message, Msg, MSG_DATA};
///
/// let data = Msg { kind: MSG_DATA, request: 2 };
/// assert_eq!(data.encode(), [1, 0, 0, 0, 2, 0, 0, 0]);
/// assert_eq!(Msg::decode(&data.encode()), Some(data));
/// assert_eq!(describe_message(&data.encode()), "DATA(r=2)");
/// assert_eq!(describe_message(&[7]), "?(1 bytes)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// [`MSG_DATA`] or [`MSG_ACK`] (another value: a bad message).
    pub kind: u32,
    /// The request id.
    pub request: u32,
}

impl Msg {
    fn ack(request: u32) -> Msg {
        Msg {
            kind: MSG_ACK,
            request,
        }
    }
}

impl Message for Msg {
    type Encoded = [u8; 8];

    fn encode(&self) -> [u8; 8] {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&self.kind.to_le_bytes());
        bytes[4..].copy_from_slice(&self.request.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> Option<Msg> {
        Some(Msg {
            kind: word(bytes, 0)?,
            request: word(bytes, 4)?,
        })
    }
}

fn word(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn receivers(config: &Config) -> u32 {
    ((1u64 << config.nodes) - 2) as u32
}

impl ReqAck {
    fn send_data(config: &Config, v: &Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let data = Msg {
            kind: MSG_DATA,
            request: v.request - 1,
        };
        let unacked = (1..config.nodes).filter(|node| v.acked & (1 << node) == 0);
        send_to_each(out, unacked, &data)?;
        out.set_timer(TIMER_RESEND)
    }

    fn sender(
        &self,
        config: &Config,
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Start) if d.pending != 0 => {
                *v = Volatile {
                    phase: phase::SENDING,
                    request: d.pending,
                    ..Volatile::default()
                };
                Self::send_data(config, v, out)?;
            }
            Some(EventKind::Client) if v.phase != phase::IDLE => {
                out.reply(event.id, &[REPLY_BUSY])?
            }
            Some(EventKind::Client) => {
                v.phase = phase::PERSISTING;
                v.request = event.id + 1;
                out.persist(OFFSET_PENDING, &v.request.to_le_bytes())?;
            }
            Some(EventKind::Flushed) => {
                let value = word(event.payload(), 0).ok_or(CoreError::Code(3))?;
                if value != 0 && v.phase == phase::PERSISTING {
                    v.phase = phase::SENDING;
                    v.acked = 0;
                    Self::send_data(config, v, out)?;
                } else if value == 0 && v.phase == phase::CLEARING {
                    out.reply(v.request - 1, &[REPLY_OK])?;
                    *v = Volatile::default();
                }
            }
            Some(EventKind::Timer) if v.phase == phase::SENDING && self.bug == 3 => {
                out.set_timer(TIMER_RESEND)?
            }
            Some(EventKind::Timer) if v.phase == phase::SENDING => Self::send_data(config, v, out)?,
            Some(EventKind::Recv) => {
                let Msg { kind, request } = helpers::received(event, 1)?;
                let acks_current = kind == MSG_ACK
                    && v.phase == phase::SENDING
                    && request + 1 == v.request
                    && event.src != 0;
                if acks_current {
                    v.acked |= 1 << event.src;
                    if v.acked == receivers(config) {
                        out.cancel_timer(TIMER_RESEND)?;
                        out.persist(OFFSET_PENDING, &0u32.to_le_bytes())?;
                        if self.bug == 1 {
                            out.reply(v.request - 1, &[REPLY_OK])?;
                            *v = Volatile::default();
                        } else {
                            v.phase = phase::CLEARING;
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn receiver(
        &self,
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Client) => out.reply(event.id, &[REPLY_BUSY])?,
            Some(EventKind::Recv) => {
                let Msg { kind, request } = helpers::received(event, 1)?;
                if kind != MSG_DATA || request >= 32 {
                    return Err(CoreError::Code(2));
                }
                let bit = 1u32 << request;
                if d.stored & bit != 0 {
                    send(out, event.src, &Msg::ack(request))?;
                } else if v.flushing & bit == 0 {
                    v.flushing |= bit;
                    out.persist(OFFSET_STORED, &(d.stored | v.flushing).to_le_bytes())?;
                    if self.bug == 2 {
                        send(out, event.src, &Msg::ack(request))?;
                    }
                }
            }
            Some(EventKind::Flushed) => {
                let value = word(event.payload(), 0).ok_or(CoreError::Code(3))?;
                let newly = v.flushing & value;
                for request in (0..32).filter(|r| newly & (1 << r) != 0) {
                    send(out, 0, &Msg::ack(request))?;
                }
                v.flushing &= !value;
            }
            _ => {}
        }
        Ok(())
    }
}

impl TypedCore for ReqAck {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "reqack"
    }

    fn step(
        &self,
        config: &Config,
        durable: &Durable,
        volatile: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if config.node == 0 {
            self.sender(config, durable, volatile, event, out)
        } else {
            self.receiver(durable, volatile, event, out)
        }
    }

    fn describe_state(&self, config: &Config, d: &Durable, v: &Volatile) -> Option<String> {
        Some(describe_state(config, d, v))
    }

    fn describe_message(&self, _config: &Config, message: &[u8]) -> Option<String> {
        Some(describe_message(message))
    }

    /// Receivers are interchangeable; only the sender's `acked` names nodes
    /// (messages carry none).
    fn permute(&self, config: &Config, _: &mut Durable, v: &mut Volatile, perm: &[u32]) -> bool {
        if config.node == 0 {
            v.acked = (0..config.nodes)
                .filter(|&node| v.acked & (1 << node) != 0)
                .fold(0, |acked, node| acked | 1 << perm[node as usize]);
        }
        true
    }

    /// The ids `permute` renames: the sender's `acked`.
    fn node_ids(&self, config: &Config, _: &Durable, v: &Volatile) -> u64 {
        match config.node {
            0 => u64::from(v.acked),
            _ => 0,
        }
    }
}

/// The text both implementations give for a state: node 0 is the sender,
/// every other node a receiver.
///
/// ```
/// use cmc_world::core::abi::Config;
/// use cmc_world::example_cores::reqack::{describe_state, phase, Durable, Volatile};
///
/// let sender = Config { node: 0, nodes: 3, params: [0; 8] };
/// let sending = Volatile { phase: phase::SENDING, request: 1, acked: 0b10, flushing: 0 };
/// assert_eq!(describe_state(&sender, &Durable { pending: 1, stored: 0 }, &sending),
///            "sender SENDING request=1 acked=0x2 durable.pending=1");
/// let receiver = Config { node: 1, ..sender };
/// assert_eq!(describe_state(&receiver, &Durable { pending: 0, stored: 1 }, &Volatile::default()),
///            "receiver stored=0x1 flushing=0x0");
/// ```
pub fn describe_state(config: &Config, d: &Durable, v: &Volatile) -> String {
    if config.node == 0 {
        let phase = ["IDLE", "PERSISTING", "SENDING", "CLEARING"]
            .get(v.phase as usize)
            .unwrap_or(&"?");
        format!(
            "sender {phase} request={} acked={:#x} durable.pending={}",
            v.request, v.acked, d.pending
        )
    } else {
        format!("receiver stored={:#x} flushing={:#x}", d.stored, v.flushing)
    }
}

/// The text both implementations give for a message (see [`Msg`]'s example).
pub fn describe_message(message: &[u8]) -> String {
    match Msg::decode(message) {
        Some(Msg {
            kind: MSG_DATA,
            request,
        }) => format!("DATA(r={request})"),
        Some(Msg {
            kind: MSG_ACK,
            request,
        }) => format!("ACK(r={request})"),
        _ => format!("?({} bytes)", message.len()),
    }
}

/// `AckedIsDurable`: once the sender replied OK to a request, every receiver
/// that is up or restartable holds it in its durable part. Reads receivers'
/// durable parts through the inspection path (either implementation: the
/// layouts are identical). [`crate::World::with_property`]'s example
/// catches bug 2 with it.
pub fn properties() -> Vec<Property<World>> {
    vec![Property::always(
        "AckedIsDurable",
        |world: &World, state: &WorldState| {
            let inspect = world.inspect(state);
            inspect.replies_with(&[REPLY_OK]).all(|entry| {
                (1..inspect.nodes()).all(|node| {
                    inspect
                        .node(node)
                        .durable_as::<Durable>()
                        .is_some_and(|durable| durable.stored & (1 << entry.request) != 0)
                })
            })
        },
    )]
}
