//! Single-decree Paxos in Rust, behind register clients, as in stateright's
//! `paxos.rs` example, with acceptor state made durable before replies.
//!
//! Nodes `0..servers` are Paxos servers (proposer, acceptor and learner in
//! one), the rest are clients; `servers` is `cfg1` (default 3). Client `c`
//! puts the value `'A' + (c - servers)` at server `c % servers`, and after
//! PutOk gets from server `(c + 1) % servers`. A server that receives a Put
//! while it leads nothing becomes leader of the next round: it prepares a
//! ballot, adopts the highest accepted proposal of a prepare quorum (or the
//! client's), has it accepted by a quorum, then broadcasts Decided and
//! answers PutOk. A decided server answers Get with the decided value.
//!
//! Durability: an acceptor's promise and accepted proposal are PERSISTed and
//! each reply (Prepared, Accepted) is sent only once that persist is flushed;
//! the leader's own promise and accept go the same way. A restart resumes
//! from the durable record. See [`properties`](mod@properties) for what is checked.
//!
//! Planted bugs, selected by the const parameter `BUG` (0: none):
//! 1. an acceptor replies before its persist is flushed;
//! 2. a restarted acceptor forgets its promised ballot;
//! 3. the accept quorum is off by one (`servers / 2`);
//! 4. the leader ignores the accepted proposals reported in Prepared.

mod msg;
pub mod properties;

use bytemuck::{Pod, Zeroable};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::core::helpers::{self, send, send_to_each, Message};
use cmc_world::TypedCore;

use crate::quorum::{majority, quorum};
use crate::wire::decoded;
use crate::{is_server, Replies};

pub use crate::{servers, SERVERS_DEFAULT};
pub use msg::{value_char, Ballot, Msg, Proposal};
pub use properties::{properties, world};

/// Planted bugs, numbered `1..=BUGS`.
pub const BUGS: u32 = 4;

/// The acceptor's durable record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// The highest ballot promised.
    pub promised: Ballot,
    /// The ballot of the last accepted proposal (`round == 0`: none).
    pub accepted: Ballot,
    /// The last accepted proposal.
    pub proposal: Proposal,
}

/// The volatile part; servers use the first fields, clients the last three.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// Highest ballot seen (promised, possibly not yet flushed).
    pub ballot: Ballot,
    /// Ballot of the last accepted proposal.
    pub accepted: Ballot,
    /// The last accepted proposal.
    pub proposal: Proposal,
    /// Learner: the ballot a decision was learned at (`round == 0`: none yet).
    pub learned_ballot: Ballot,
    /// Learner: the decided proposal.
    pub learned: Proposal,
    /// Leader: the proposal it drives (`value == 0`: leads nothing).
    pub leading: Proposal,
    /// Leader: bit per server whose Prepared arrived for `ballot`.
    pub prepared: u32,
    /// Leader: highest accepted ballot reported in those Prepared.
    pub best: Ballot,
    /// Leader: the proposal accepted at `best`.
    pub best_proposal: Proposal,
    /// Leader: bit per server whose Accepted arrived for `ballot`.
    pub accepts: u32,
    /// Messages waiting for flushes, one per outstanding persist.
    pub pending: Replies,
    /// Client: the request it waits for (0: none).
    pub awaiting: u32,
    /// Client: operations issued.
    pub op_count: u32,
    /// Client: the value its Get returned (0: none yet).
    pub read: u32,
}

/// The Paxos core; `BUG` selects a planted bug (0: the correct protocol).
#[derive(Clone, Copy, Debug, Default)]
pub struct Paxos<const BUG: u32>;

impl<const BUG: u32> Paxos<BUG> {
    /// Persists the acceptor record of `v`; `reply` goes to `dst` once flushed
    /// (to this node: handled locally, as a message to itself).
    fn persist_then(
        config: &Config,
        v: &mut Volatile,
        dst: u32,
        reply: Msg,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let record = Durable {
            promised: v.ballot,
            accepted: v.accepted,
            proposal: v.proposal,
        };
        out.persist_record(0, &record)?;
        if BUG == 1 && dst != config.node {
            // The persist's entry stays empty: the reply has gone already.
            v.pending.hold_nothing()?;
            return send(out, dst, &reply);
        }
        v.pending.hold(dst, &reply)
    }

    fn broadcast(config: &Config, out: &mut Outputs, msg: Msg) -> Result<(), CoreError> {
        let peers = (0..servers(&config.params)).filter(|peer| *peer != config.node);
        send_to_each(out, peers, &msg)
    }

    fn flushed(config: &Config, v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let Some(head) = v.pending.release() else {
            return Ok(());
        };
        if head.dst == config.node {
            let msg = decoded(head.message())?;
            Self::server_msg(config, v, config.node, msg, out)
        } else {
            out.send(head.dst, head.message())
        }
    }

    fn server_msg(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        msg: Msg,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let me = config.node;
        let servers = servers(&config.params);
        if v.learned_ballot.round != 0 {
            if let Msg::Get { request } = msg {
                send(
                    out,
                    src,
                    &Msg::GetOk {
                        request,
                        value: v.learned.value,
                    },
                )?;
            }
            return Ok(());
        }
        match msg {
            Msg::Put { request, value } if v.leading.value == 0 => {
                v.leading = Proposal {
                    request,
                    client: src,
                    value,
                };
                v.prepared = 0;
                v.accepts = 0;
                v.best = Ballot::default();
                v.best_proposal = Proposal::default();
                v.ballot = Ballot {
                    round: v.ballot.round + 1,
                    leader: me,
                };
                let own = Msg::Prepared {
                    ballot: v.ballot,
                    accepted: v.accepted,
                    proposal: v.proposal,
                };
                Self::persist_then(config, v, me, own, out)?;
                Self::broadcast(config, out, Msg::Prepare { ballot: v.ballot })?;
            }
            Msg::Prepare { ballot } if v.ballot < ballot => {
                v.ballot = ballot;
                let reply = Msg::Prepared {
                    ballot,
                    accepted: v.accepted,
                    proposal: v.proposal,
                };
                Self::persist_then(config, v, src, reply, out)?;
            }
            // A leader that restarted lost its round (`leading`): it ignores its replies.
            Msg::Prepared {
                ballot,
                accepted,
                proposal,
            } if ballot == v.ballot && v.leading.value != 0 => {
                if v.prepared & (1 << src) != 0 {
                    return Ok(());
                }
                v.prepared |= 1 << src;
                if accepted.round != 0 && (accepted, proposal) > (v.best, v.best_proposal) {
                    v.best = accepted;
                    v.best_proposal = proposal;
                }
                if v.prepared.count_ones() == majority(servers) {
                    if v.best.round != 0 && BUG != 4 {
                        v.leading = v.best_proposal;
                    }
                    v.accepted = ballot;
                    v.proposal = v.leading;
                    Self::persist_then(config, v, me, Msg::Accepted { ballot }, out)?;
                    Self::broadcast(
                        config,
                        out,
                        Msg::Accept {
                            ballot,
                            proposal: v.leading,
                        },
                    )?;
                }
            }
            Msg::Accept { ballot, proposal } if v.ballot <= ballot => {
                v.ballot = ballot;
                v.accepted = ballot;
                v.proposal = proposal;
                Self::persist_then(config, v, src, Msg::Accepted { ballot }, out)?;
            }
            Msg::Accepted { ballot } if ballot == v.ballot && v.leading.value != 0 => {
                v.accepts |= 1 << src;
                if v.accepts.count_ones() == quorum(servers, BUG == 3) {
                    v.learned_ballot = ballot;
                    v.learned = v.leading;
                    Self::broadcast(
                        config,
                        out,
                        Msg::Decided {
                            ballot,
                            proposal: v.leading,
                        },
                    )?;
                    send(
                        out,
                        v.leading.client,
                        &Msg::PutOk {
                            request: v.leading.request,
                        },
                    )?;
                }
            }
            Msg::Decided { ballot, proposal } => {
                v.learned_ballot = ballot;
                v.learned = proposal;
            }
            _ => {}
        }
        Ok(())
    }

    fn server(
        config: &Config,
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Start) => {
                *v = Volatile {
                    ballot: if BUG == 2 {
                        Ballot::default()
                    } else {
                        d.promised
                    },
                    accepted: d.accepted,
                    proposal: d.proposal,
                    ..Volatile::default()
                };
                Ok(())
            }
            Some(EventKind::Recv) => {
                let msg = decoded(event.payload())?;
                Self::server_msg(config, v, event.src, msg, out)
            }
            Some(EventKind::Flushed) => Self::flushed(config, v, out),
            _ => Ok(()),
        }
    }

    fn client(
        config: &Config,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let servers = servers(&config.params);
        let me = config.node;
        match event.kind() {
            Some(EventKind::Start) if v.op_count == 0 => {
                let value = 'A' as u32 + (me - servers);
                send(out, me % servers, &Msg::Put { request: me, value })?;
                v.awaiting = me;
                v.op_count = 1;
            }
            Some(EventKind::Recv) => match Msg::decode(event.payload()) {
                Some(Msg::PutOk { request }) if request == v.awaiting && v.op_count == 1 => {
                    let request = 2 * me;
                    send(out, (me + 1) % servers, &Msg::Get { request })?;
                    v.awaiting = request;
                    v.op_count = 2;
                }
                Some(Msg::GetOk { request, value }) if request == v.awaiting && v.op_count == 2 => {
                    v.awaiting = 0;
                    v.op_count = 3;
                    v.read = value;
                }
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }
}

impl<const BUG: u32> TypedCore for Paxos<BUG> {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "paxos"
    }

    fn step(
        &self,
        config: &Config,
        durable: &Durable,
        volatile: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if is_server(config) {
            Self::server(config, durable, volatile, event, out)
        } else {
            Self::client(config, volatile, event, out)
        }
    }

    fn describe_state(&self, config: &Config, d: &Durable, v: &Volatile) -> Option<String> {
        let b = |b: Ballot| format!("({},{})", b.round, b.leader);
        Some(if is_server(config) {
            format!(
                "server ballot={} accepted={}{}{} leading={} prepared={:#x} accepts={:#x} pending={} durable: promised={} accepted={}{}",
                b(v.ballot),
                b(v.accepted),
                value_char(v.proposal.value),
                if v.learned_ballot.round != 0 { " DECIDED" } else { "" },
                value_char(v.leading.value),
                v.prepared,
                v.accepts,
                v.pending.len(),
                b(d.promised),
                b(d.accepted),
                value_char(d.proposal.value),
            )
        } else {
            format!(
                "client awaiting=r{} ops={} read={}",
                v.awaiting,
                v.op_count,
                value_char(v.read)
            )
        })
    }

    fn describe_message(&self, _config: &Config, message: &[u8]) -> Option<String> {
        helpers::describe_message::<Msg>(message)
    }
}
