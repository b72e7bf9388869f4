//! The example's `PaxosActor`: a server's state, packed, and its message
//! handler, case by case as in `paxos.rs` example.

use cmc_model::{DecodeError, Decoder, Encode};

use super::messages::{
    client_id, client_index, Ballot, Envelope, Id, LastAccepted, Msg, Proposal, Value, MAX_CLIENTS,
    SERVERS,
};
use super::network::Network;

/// Stateright's `majority(3)`.
const MAJORITY: u32 = SERVERS as u32 / 2 + 1;

/// A server's state (the example's `PaxosState`), with its map and set
/// over servers as bit masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Server {
    /// The highest ballot joined (shared by leader and acceptor).
    ballot: Ballot,
    /// Leader: the proposal being driven.
    proposal: Option<Proposal>,
    /// Leader: the servers whose Prepared replies of the current ballot
    /// arrived (the keys of the example's `prepares`)...
    prepared: u8,
    /// ...and what they reported (its values; default where no reply).
    prepares: [LastAccepted; SERVERS as usize],
    /// Leader: the servers that accepted in the current ballot.
    accepts: u8,
    /// Acceptor: the last proposal accepted.
    accepted: LastAccepted,
    /// Whether this server knows the value is decided.
    is_decided: bool,
}

impl Server {
    fn broadcast(id: Id, msg: Msg, network: &mut Network) {
        for peer in (0..SERVERS).filter(|&peer| peer != id) {
            network.send(Envelope::new(id, peer, msg));
        }
    }

    fn prepare(&mut self, server: Id, last_accepted: LastAccepted) {
        self.prepared |= 1 << server;
        self.prepares[usize::from(server)] = last_accepted;
    }

    /// Server `id` receives `msg` from `src` (`PaxosActor::on_msg`), sending
    /// into `network`; returns whether a case applied (otherwise nothing
    /// changed and nothing was sent: stateright's no-op).
    pub fn on_msg(&mut self, id: Id, src: Id, msg: Msg, network: &mut Network) -> bool {
        if self.is_decided {
            if msg != Msg::Get {
                return false;
            }
            let (_ballot, proposal) = self
                .accepted
                .get()
                .expect("decided but lacks accepted state");
            let value = Value::written_by(usize::from(proposal.0));
            network.send(Envelope::new(id, src, Msg::GetOk(value)));
            return true;
        }
        match msg {
            Msg::Put if self.proposal.is_none() => {
                self.proposal = Some(Proposal(client_index(src) as u8));
                self.prepared = 0;
                self.prepares = Default::default();
                self.accepts = 0;
                self.ballot = Ballot::new(self.ballot.round() + 1, id);
                self.prepare(id, self.accepted);
                Server::broadcast(id, Msg::Prepare(self.ballot), network);
            }
            Msg::Prepare(ballot) if self.ballot < ballot => {
                self.ballot = ballot;
                network.send(Envelope::new(id, src, Msg::Prepared(ballot, self.accepted)));
            }
            Msg::Prepared(ballot, last_accepted) if ballot == self.ballot => {
                self.prepare(src, last_accepted);
                if self.prepared.count_ones() == MAJORITY {
                    let highest = self.prepares.iter().max().expect("a quorum of prepares");
                    let proposal = highest.get().map_or_else(
                        || self.proposal.expect("proposal expected"),
                        |(_ballot, proposal)| proposal,
                    );
                    self.proposal = Some(proposal);
                    self.accepted = LastAccepted::some(ballot, proposal);
                    self.accepts |= 1 << id;
                    Server::broadcast(id, Msg::Accept(ballot, proposal), network);
                }
            }
            Msg::Accept(ballot, proposal) if self.ballot <= ballot => {
                self.ballot = ballot;
                self.accepted = LastAccepted::some(ballot, proposal);
                network.send(Envelope::new(id, src, Msg::Accepted(ballot)));
            }
            Msg::Accepted(ballot) if ballot == self.ballot => {
                self.accepts |= 1 << src;
                if self.accepts.count_ones() == MAJORITY {
                    self.is_decided = true;
                    let proposal = self.proposal.expect("proposal expected");
                    Server::broadcast(id, Msg::Decided(ballot, proposal), network);
                    let requester = client_id(usize::from(proposal.0));
                    network.send(Envelope::new(id, requester, Msg::PutOk));
                }
            }
            Msg::Decided(ballot, proposal) => {
                self.ballot = ballot;
                self.accepted = LastAccepted::some(ballot, proposal);
                self.is_decided = true;
            }
            _ => return false,
        }
        true
    }
}

/// Seven bytes: ballot, proposal (0 for none, else index + 1), accepted,
/// the two masks and the decided flag, then the three reported values.
impl Encode for Server {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        let proposal = self.proposal.map_or(0, |proposal| proposal.0 + 1);
        let flags = self.prepared | self.accepts << 3 | u8::from(self.is_decided) << 6;
        let [a, b, c] = self.prepares.map(|last| last.0);
        out.extend_from_slice(&[
            self.ballot.bits(),
            proposal,
            self.accepted.0,
            flags,
            a,
            b,
            c,
        ]);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let [ballot, proposal, accepted, flags, a, b, c] = <[u8; 7]>::decode(decoder)?;
        let Some(ballot) = Ballot::from_bits(ballot) else {
            return decoder.invalid(format!("{ballot} is not a packed ballot"));
        };
        let server = Server {
            ballot,
            proposal: proposal.checked_sub(1).map(Proposal),
            prepared: flags & 7,
            prepares: [a, b, c].map(LastAccepted),
            accepts: flags >> 3 & 7,
            accepted: LastAccepted(accepted),
            is_decided: flags & 64 != 0,
        };
        let unprepared_are_default = (0..SERVERS).all(|server_id| {
            server.prepared & 1 << server_id != 0
                || server.prepares[usize::from(server_id)] == LastAccepted::NONE
        });
        let valid = flags < 128
            && usize::from(proposal) <= MAX_CLIENTS
            && unprepared_are_default
            && server.accepted.is_valid()
            && server.prepares.iter().all(|last| last.is_valid());
        if !valid {
            return decoder.invalid("not the encoding of a server state");
        }
        Ok(server)
    }
}
