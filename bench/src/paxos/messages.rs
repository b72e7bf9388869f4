//! The messages of the Paxos actor system, as in stateright's example:
//! stateright's `RegisterMsg` wrapping the example's `PaxosMsg`, and the
//! envelopes that carry them.

use cmc_model::{encode_fields, DecodeError, Decoder, Encode};

/// An actor: servers are `0..server_count`, clients follow.
pub type Id = u8;
/// A leadership term's round number.
pub type Round = u32;
/// `(round, leader)`, ordered as the example's tuple.
pub type Ballot = (Round, Id);
/// A client request number.
pub type RequestId = u64;
/// A register value: the example's `char`, here its byte (`0` is `'\0'`,
/// the register's initial value).
pub type Value = u8;
/// `(request, requester, value)`, ordered as the example's tuple.
pub type Proposal = (RequestId, Id, Value);
/// What an acceptor accepted last, if anything.
pub type Accepted = Option<(Ballot, Proposal)>;

/// The servers' internal protocol (the example's `PaxosMsg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PaxosMsg {
    /// Phase 1a: a leader opens `ballot`.
    Prepare {
        /// The new ballot.
        ballot: Ballot,
    },
    /// Phase 1b: an acceptor joins `ballot` and reports what it accepted.
    Prepared {
        /// The ballot joined.
        ballot: Ballot,
        /// The acceptor's last accepted proposal.
        last_accepted: Accepted,
    },
    /// Phase 2a: the leader asks to accept `proposal`.
    Accept {
        /// The ballot.
        ballot: Ballot,
        /// The proposal.
        proposal: Proposal,
    },
    /// Phase 2b: an acceptor accepted in `ballot`.
    Accepted {
        /// The ballot.
        ballot: Ballot,
    },
    /// The leader saw a quorum of accepts.
    Decided {
        /// The ballot.
        ballot: Ballot,
        /// The proposal decided.
        proposal: Proposal,
    },
}

/// A message between actors (stateright's `RegisterMsg<u64, char, PaxosMsg>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// A server-to-server message.
    Internal(PaxosMsg),
    /// A client asks to write a value.
    Put(RequestId, Value),
    /// A client asks to read.
    Get(RequestId),
    /// The write of a request succeeded.
    PutOk(RequestId),
    /// The read of a request returned a value.
    GetOk(RequestId, Value),
}

/// A message in flight from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Envelope {
    /// The sender.
    pub src: Id,
    /// The recipient.
    pub dst: Id,
    /// The message.
    pub msg: Msg,
}

encode_fields!(Envelope { src, dst, msg });

impl Encode for PaxosMsg {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            PaxosMsg::Prepare { ballot } => {
                out.push(0);
                ballot.encode(out);
            }
            PaxosMsg::Prepared {
                ballot,
                last_accepted,
            } => {
                out.push(1);
                ballot.encode(out);
                last_accepted.encode(out);
            }
            PaxosMsg::Accept { ballot, proposal } => {
                out.push(2);
                ballot.encode(out);
                proposal.encode(out);
            }
            PaxosMsg::Accepted { ballot } => {
                out.push(3);
                ballot.encode(out);
            }
            PaxosMsg::Decided { ballot, proposal } => {
                out.push(4);
                ballot.encode(out);
                proposal.encode(out);
            }
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(match u8::decode(decoder)? {
            0 => PaxosMsg::Prepare {
                ballot: Encode::decode(decoder)?,
            },
            1 => PaxosMsg::Prepared {
                ballot: Encode::decode(decoder)?,
                last_accepted: Encode::decode(decoder)?,
            },
            2 => PaxosMsg::Accept {
                ballot: Encode::decode(decoder)?,
                proposal: Encode::decode(decoder)?,
            },
            3 => PaxosMsg::Accepted {
                ballot: Encode::decode(decoder)?,
            },
            4 => PaxosMsg::Decided {
                ballot: Encode::decode(decoder)?,
                proposal: Encode::decode(decoder)?,
            },
            tag => return decoder.invalid(format!("PaxosMsg has no variant number {tag}")),
        })
    }
}

impl Encode for Msg {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Msg::Internal(msg) => {
                out.push(0);
                msg.encode(out);
            }
            Msg::Put(request, value) => {
                out.push(1);
                request.encode(out);
                value.encode(out);
            }
            Msg::Get(request) => {
                out.push(2);
                request.encode(out);
            }
            Msg::PutOk(request) => {
                out.push(3);
                request.encode(out);
            }
            Msg::GetOk(request, value) => {
                out.push(4);
                request.encode(out);
                value.encode(out);
            }
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(match u8::decode(decoder)? {
            0 => Msg::Internal(Encode::decode(decoder)?),
            1 => Msg::Put(Encode::decode(decoder)?, Encode::decode(decoder)?),
            2 => Msg::Get(Encode::decode(decoder)?),
            3 => Msg::PutOk(Encode::decode(decoder)?),
            4 => Msg::GetOk(Encode::decode(decoder)?, Encode::decode(decoder)?),
            tag => return decoder.invalid(format!("Msg has no variant number {tag}")),
        })
    }
}
