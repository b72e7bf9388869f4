//! omnipaxos's messages in at most 64 bytes: a tag, then the fields the
//! checked configurations use, small numbers as single bytes.
//!
//! Node `i` of the World is omnipaxos server `i + 1` (server ids start at
//! 1), so a message's `from` and `to` are the World's `src` and `dst`.
//! A value that does not fit (an index over 255, a snapshot, a stop sign, a
//! compaction) is an encoding error the adapter reports as a capacity
//! fault, never truncated.

use omnipaxos::messages::ballot_leader_election::{
    BLEMessage, HeartbeatMsg, HeartbeatReply, HeartbeatRequest,
};
use omnipaxos::messages::sequence_paxos::{
    AcceptDecide, AcceptSync, Accepted, Decide, PaxosMessage, PaxosMsg, Prepare, Promise,
};
use omnipaxos::messages::Message;
use omnipaxos::util::{NodeId, SequenceNumber};

use crate::storage::{ballot_fits, decode_ballot, encode_ballot, Value, BALLOT_SIZE};

/// The first byte of each kind of message.
pub mod tag {
    /// A heartbeat request.
    pub const HB_REQUEST: u8 = 0;
    /// A heartbeat reply.
    pub const HB_REPLY: u8 = 1;
    /// A request for a `Prepare` (recovery).
    pub const PREPARE_REQ: u8 = 2;
    /// `Prepare`.
    pub const PREPARE: u8 = 3;
    /// `Promise`.
    pub const PROMISE: u8 = 4;
    /// `AcceptSync`.
    pub const ACCEPT_SYNC: u8 = 5;
    /// `AcceptDecide`.
    pub const ACCEPT_DECIDE: u8 = 6;
    /// `Accepted`.
    pub const ACCEPTED: u8 = 7;
    /// `Decide`.
    pub const DECIDE: u8 = 8;
    /// `ProposalForward`.
    pub const PROPOSAL_FORWARD: u8 = 9;
}

use tag::*;

/// The server id of World node `node`.
pub fn server(node: u32) -> NodeId {
    NodeId::from(node) + 1
}

/// The World node of server `pid`.
pub fn node(pid: NodeId) -> u32 {
    (pid - 1) as u32
}

/// Bytes being written.
struct Writer(Vec<u8>);

impl Writer {
    fn byte(&mut self, value: u64, what: &str) -> Result<(), String> {
        let byte = u8::try_from(value).map_err(|_| format!("{what} {value} is over 255"))?;
        self.0.push(byte);
        Ok(())
    }

    fn ballot(&mut self, ballot: omnipaxos::ballot_leader_election::Ballot) -> Result<(), String> {
        ballot_fits(&ballot).map_err(|error| error.to_string())?;
        self.0.extend_from_slice(&encode_ballot(Some(ballot)));
        Ok(())
    }

    fn seq(&mut self, seq: SequenceNumber) -> Result<(), String> {
        self.byte(seq.session, "sequence session")?;
        self.byte(seq.counter, "sequence counter")
    }

    fn values(&mut self, values: &[Value]) -> Result<(), String> {
        self.byte(values.len() as u64, "entry count")?;
        self.0.extend(values.iter().map(|value| value.0));
        Ok(())
    }
}

/// `message`'s bytes, or why it cannot be encoded.
pub fn encode(message: &Message<Value>) -> Result<Vec<u8>, String> {
    let mut w = Writer(Vec::new());
    match message {
        Message::BLE(BLEMessage { msg, .. }) => match msg {
            HeartbeatMsg::Request(request) => {
                w.0.push(HB_REQUEST);
                w.0.extend_from_slice(&request.round.to_le_bytes());
            }
            HeartbeatMsg::Reply(reply) => {
                w.0.push(HB_REPLY);
                w.0.extend_from_slice(&reply.round.to_le_bytes());
                w.ballot(reply.ballot)?;
                w.0.push(reply.connectivity);
            }
        },
        Message::SequencePaxos(PaxosMessage { msg, .. }) => match msg {
            PaxosMsg::PrepareReq => w.0.push(PREPARE_REQ),
            PaxosMsg::Prepare(p) => {
                w.0.push(PREPARE);
                w.ballot(p.n)?;
                w.byte(p.decided_idx, "decided index")?;
                w.ballot(p.n_accepted)?;
                w.byte(p.accepted_idx, "accepted index")?;
            }
            PaxosMsg::Promise(p) => {
                if p.decided_snapshot.is_some() || p.stopsign.is_some() {
                    return Err("a promise with a snapshot or stop sign".into());
                }
                w.0.push(PROMISE);
                w.ballot(p.n)?;
                w.ballot(p.n_accepted)?;
                w.byte(p.decided_idx, "decided index")?;
                w.byte(p.accepted_idx, "accepted index")?;
                w.values(&p.suffix)?;
            }
            PaxosMsg::AcceptSync(a) => {
                if a.decided_snapshot.is_some() || a.stopsign.is_some() {
                    return Err("an accept-sync with a snapshot or stop sign".into());
                }
                w.0.push(ACCEPT_SYNC);
                w.ballot(a.n)?;
                w.seq(a.seq_num)?;
                w.byte(a.sync_idx, "sync index")?;
                w.byte(a.decided_idx, "decided index")?;
                w.values(&a.suffix)?;
            }
            PaxosMsg::AcceptDecide(a) => {
                w.0.push(ACCEPT_DECIDE);
                w.ballot(a.n)?;
                w.seq(a.seq_num)?;
                w.byte(a.decided_idx, "decided index")?;
                w.values(&a.entries)?;
            }
            PaxosMsg::Accepted(a) => {
                w.0.push(ACCEPTED);
                w.ballot(a.n)?;
                w.byte(a.accepted_idx, "accepted index")?;
            }
            PaxosMsg::Decide(d) => {
                w.0.push(DECIDE);
                w.ballot(d.n)?;
                w.seq(d.seq_num)?;
                w.byte(d.decided_idx, "decided index")?;
            }
            PaxosMsg::ProposalForward(values) => {
                w.0.push(PROPOSAL_FORWARD);
                w.values(values)?;
            }
            other => return Err(format!("message {other:?} (not in the encoding)")),
        },
    }
    Ok(w.0)
}

/// Bytes being read; running out is a decoding error.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Result<&[u8], String> {
        if self.0.len() < count {
            return Err("a message shorter than its kind".into());
        }
        let (head, tail) = self.0.split_at(count);
        self.0 = tail;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u64, String> {
        Ok(u64::from(self.take(1)?[0]))
    }

    fn round(&mut self) -> Result<u32, String> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("four bytes")))
    }

    fn ballot(&mut self) -> Result<omnipaxos::ballot_leader_election::Ballot, String> {
        decode_ballot(self.take(BALLOT_SIZE)?).ok_or_else(|| "a missing ballot".to_string())
    }

    fn seq(&mut self) -> Result<SequenceNumber, String> {
        Ok(SequenceNumber {
            session: self.byte()?,
            counter: self.byte()?,
        })
    }

    fn values(&mut self) -> Result<Vec<Value>, String> {
        let count = self.byte()? as usize;
        Ok(self
            .take(count)?
            .iter()
            .map(|&value| Value(value))
            .collect())
    }
}

/// The message `bytes` encode, sent by server `from` to server `to`.
pub fn decode(bytes: &[u8], from: NodeId, to: NodeId) -> Result<Message<Value>, String> {
    let (&tag, rest) = bytes.split_first().ok_or("an empty message")?;
    let mut r = Reader(rest);
    let paxos = |msg| Message::SequencePaxos(PaxosMessage { from, to, msg });
    let ble = |msg| Message::BLE(BLEMessage { from, to, msg });
    let message = match tag {
        HB_REQUEST => ble(HeartbeatMsg::Request(HeartbeatRequest {
            round: r.round()?,
        })),
        HB_REPLY => ble(HeartbeatMsg::Reply(HeartbeatReply {
            round: r.round()?,
            ballot: r.ballot()?,
            connectivity: r.byte()? as u8,
        })),
        PREPARE_REQ => paxos(PaxosMsg::PrepareReq),
        PREPARE => paxos(PaxosMsg::Prepare(Prepare {
            n: r.ballot()?,
            decided_idx: r.byte()?,
            n_accepted: r.ballot()?,
            accepted_idx: r.byte()?,
        })),
        PROMISE => paxos(PaxosMsg::Promise(Promise {
            n: r.ballot()?,
            n_accepted: r.ballot()?,
            decided_idx: r.byte()?,
            accepted_idx: r.byte()?,
            suffix: r.values()?,
            decided_snapshot: None,
            stopsign: None,
        })),
        ACCEPT_SYNC => paxos(PaxosMsg::AcceptSync(AcceptSync {
            n: r.ballot()?,
            seq_num: r.seq()?,
            sync_idx: r.byte()?,
            decided_idx: r.byte()?,
            suffix: r.values()?,
            decided_snapshot: None,
            stopsign: None,
        })),
        ACCEPT_DECIDE => paxos(PaxosMsg::AcceptDecide(AcceptDecide {
            n: r.ballot()?,
            seq_num: r.seq()?,
            decided_idx: r.byte()?,
            entries: r.values()?,
        })),
        ACCEPTED => paxos(PaxosMsg::Accepted(Accepted {
            n: r.ballot()?,
            accepted_idx: r.byte()?,
        })),
        DECIDE => paxos(PaxosMsg::Decide(Decide {
            n: r.ballot()?,
            seq_num: r.seq()?,
            decided_idx: r.byte()?,
        })),
        PROPOSAL_FORWARD => paxos(PaxosMsg::ProposalForward(r.values()?)),
        other => return Err(format!("unknown message tag {other}")),
    };
    if !r.0.is_empty() {
        return Err("a message longer than its kind".into());
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use omnipaxos::ballot_leader_election::Ballot;

    use super::*;

    #[test]
    fn every_encoded_message_decodes_to_itself() {
        let n = Ballot::with(1, 2, 0, 3);
        let seq = SequenceNumber {
            session: 1,
            counter: 4,
        };
        let messages = [
            PaxosMsg::Prepare(Prepare {
                n,
                decided_idx: 1,
                n_accepted: Ballot::default(),
                accepted_idx: 2,
            }),
            PaxosMsg::AcceptSync(AcceptSync {
                n,
                seq_num: seq,
                decided_snapshot: None,
                suffix: vec![Value(5), Value(6)],
                sync_idx: 1,
                decided_idx: 0,
                stopsign: None,
            }),
            PaxosMsg::ProposalForward(vec![Value(7)]),
        ];
        for msg in messages {
            let message = Message::SequencePaxos(PaxosMessage {
                from: 1,
                to: 2,
                msg,
            });
            let bytes = encode(&message).unwrap();
            assert!(bytes.len() <= 64);
            let again = decode(&bytes, 1, 2).unwrap();
            assert_eq!(format!("{again:?}"), format!("{message:?}"));
        }
    }

    #[test]
    fn an_index_over_a_byte_is_refused_not_truncated() {
        let msg = PaxosMsg::Accepted(Accepted {
            n: Ballot::with(1, 1, 0, 1),
            accepted_idx: 256,
        });
        let error = encode(&Message::SequencePaxos(PaxosMessage {
            from: 1,
            to: 2,
            msg,
        }));
        assert_eq!(error.unwrap_err(), "accepted index 256 is over 255");
    }
}
