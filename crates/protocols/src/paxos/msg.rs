//! Paxos messages, the client register protocol included, and their encoding.

use bytemuck::{Pod, Zeroable};

use cmc_world::core::helpers::Message;

use crate::wire::{words, Words};

/// A ballot: (round, leader node); ordered lexicographically. `(0, 0)` is
/// the initial ballot, below every ballot a leader uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
#[repr(C)]
pub struct Ballot {
    /// The round.
    pub round: u32,
    /// The node that leads it.
    pub leader: u32,
}

/// A proposal: the client request it answers and the value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
#[repr(C)]
pub struct Proposal {
    /// The client's request id.
    pub request: u32,
    /// The client node.
    pub client: u32,
    /// The value (a letter, as in stateright's example); 0 for none.
    pub value: u32,
}

/// A message of the register clients or of the Paxos servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Client: write `value`.
    Put { request: u32, value: u32 },
    /// Client: read.
    Get { request: u32 },
    /// Server: the write is decided.
    PutOk { request: u32 },
    /// Server: the decided value.
    GetOk { request: u32, value: u32 },
    /// Leader: promise not to accept below `ballot`.
    Prepare { ballot: Ballot },
    /// Acceptor: promised `ballot`; its last accepted proposal, if any
    /// (`accepted.round == 0` for none).
    Prepared {
        ballot: Ballot,
        accepted: Ballot,
        proposal: Proposal,
    },
    /// Leader: accept `proposal` at `ballot`.
    Accept { ballot: Ballot, proposal: Proposal },
    /// Acceptor: accepted at `ballot`.
    Accepted { ballot: Ballot },
    /// Leader: `proposal` was chosen at `ballot`.
    Decided { ballot: Ballot, proposal: Proposal },
}

impl Message for Msg {
    type Encoded = Words;

    /// The message's words: a tag, then the fields in order.
    fn encode(&self) -> Words {
        match *self {
            Msg::Put { request, value } => Words::new(&[1, request, value]),
            Msg::Get { request } => Words::new(&[2, request]),
            Msg::PutOk { request } => Words::new(&[3, request]),
            Msg::GetOk { request, value } => Words::new(&[4, request, value]),
            Msg::Prepare { ballot: b } => Words::new(&[5, b.round, b.leader]),
            Msg::Prepared {
                ballot: b,
                accepted: a,
                proposal: p,
            } => Words::new(&[
                6, b.round, b.leader, a.round, a.leader, p.request, p.client, p.value,
            ]),
            Msg::Accept {
                ballot: b,
                proposal: p,
            } => Words::new(&[7, b.round, b.leader, p.request, p.client, p.value]),
            Msg::Accepted { ballot: b } => Words::new(&[8, b.round, b.leader]),
            Msg::Decided {
                ballot: b,
                proposal: p,
            } => Words::new(&[9, b.round, b.leader, p.request, p.client, p.value]),
        }
    }

    /// The message `bytes` encode, if they are one.
    fn decode(bytes: &[u8]) -> Option<Msg> {
        let ballot = |w: &[u32]| Ballot {
            round: w[1],
            leader: w[2],
        };
        let proposal = |w: &[u32], at: usize| Proposal {
            request: w[at],
            client: w[at + 1],
            value: w[at + 2],
        };
        let [tag] = words::<1>(bytes)?;
        Some(match (tag, bytes.len() / 4) {
            (1, 3) => {
                let w = words::<3>(bytes)?;
                Msg::Put {
                    request: w[1],
                    value: w[2],
                }
            }
            (2, 2) => Msg::Get {
                request: words::<2>(bytes)?[1],
            },
            (3, 2) => Msg::PutOk {
                request: words::<2>(bytes)?[1],
            },
            (4, 3) => {
                let w = words::<3>(bytes)?;
                Msg::GetOk {
                    request: w[1],
                    value: w[2],
                }
            }
            (5, 3) => Msg::Prepare {
                ballot: ballot(&words::<3>(bytes)?),
            },
            (6, 8) => {
                let w = words::<8>(bytes)?;
                Msg::Prepared {
                    ballot: ballot(&w),
                    accepted: Ballot {
                        round: w[3],
                        leader: w[4],
                    },
                    proposal: proposal(&w, 5),
                }
            }
            (7, 6) => {
                let w = words::<6>(bytes)?;
                Msg::Accept {
                    ballot: ballot(&w),
                    proposal: proposal(&w, 3),
                }
            }
            (8, 3) => Msg::Accepted {
                ballot: ballot(&words::<3>(bytes)?),
            },
            (9, 6) => {
                let w = words::<6>(bytes)?;
                Msg::Decided {
                    ballot: ballot(&w),
                    proposal: proposal(&w, 3),
                }
            }
            _ => return None,
        })
    }
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |b: &Ballot| format!("({},{})", b.round, b.leader);
        let p = |p: &Proposal| format!("(r{},n{},{})", p.request, p.client, value_char(p.value));
        match self {
            Msg::Put { request, value } => write!(f, "Put(r{request},{})", value_char(*value)),
            Msg::Get { request } => write!(f, "Get(r{request})"),
            Msg::PutOk { request } => write!(f, "PutOk(r{request})"),
            Msg::GetOk { request, value } => write!(f, "GetOk(r{request},{})", value_char(*value)),
            Msg::Prepare { ballot } => write!(f, "Prepare{}", b(ballot)),
            Msg::Prepared {
                ballot,
                accepted,
                proposal,
            } if accepted.round == 0 => {
                let _ = proposal;
                write!(f, "Prepared{} none", b(ballot))
            }
            Msg::Prepared {
                ballot,
                accepted,
                proposal,
            } => {
                write!(
                    f,
                    "Prepared{} last={}{}",
                    b(ballot),
                    b(accepted),
                    p(proposal)
                )
            }
            Msg::Accept { ballot, proposal } => write!(f, "Accept{}{}", b(ballot), p(proposal)),
            Msg::Accepted { ballot } => write!(f, "Accepted{}", b(ballot)),
            Msg::Decided { ballot, proposal } => write!(f, "Decided{}{}", b(ballot), p(proposal)),
        }
    }
}

/// A value as its letter (`-` for none).
pub fn value_char(value: u32) -> char {
    char::from_u32(value).filter(|_| value != 0).unwrap_or('-')
}
