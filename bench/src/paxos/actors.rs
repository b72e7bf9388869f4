//! The actors' message handlers: stateright's example `PaxosActor` for the
//! servers and stateright's `RegisterActor::Client` for the clients, ported
//! statement by statement.
//!
//! A handler returns whether one of its cases applied. Stateright treats a
//! delivery that neither touched the actor's state (`Cow::to_mut`) nor sent
//! anything as a no-op that is not a step at all (the message stays in the
//! network); in both actors every case that applies does one or the other,
//! so "no case applied" is exactly stateright's no-op.

use std::collections::{BTreeMap, BTreeSet};

use cmc_model::encode_fields;

use super::messages::{Accepted, Ballot, Id, Msg, PaxosMsg, Proposal, RequestId};

/// Writes of each client before its read (the example's `put_count: 1`).
pub const PUT_COUNT: u64 = 1;

/// A server's state (the example's `PaxosState`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerState {
    /// The highest ballot joined (shared by leader and acceptor).
    pub ballot: Ballot,
    /// Leader: the proposal being driven.
    pub proposal: Option<Proposal>,
    /// Leader: the Prepared replies of the current ballot, by acceptor.
    pub prepares: BTreeMap<Id, Accepted>,
    /// Leader: the acceptors that accepted in the current ballot.
    pub accepts: BTreeSet<Id>,
    /// Acceptor: the last proposal accepted.
    pub accepted: Accepted,
    /// Whether this server knows the value is decided.
    pub is_decided: bool,
}

encode_fields!(ServerState {
    ballot,
    proposal,
    prepares,
    accepts,
    accepted,
    is_decided
});

/// A client's state (stateright's `RegisterActorState::Client`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientState {
    /// The request it waits a reply to.
    pub awaiting: Option<RequestId>,
    /// Operations issued so far.
    pub op_count: u64,
}

encode_fields!(ClientState { awaiting, op_count });

/// Messages an actor sends while handling one event, in order.
pub type Outbox = Vec<(Id, Msg)>;

/// The fixed topology: servers `0..server_count`, then the clients.
#[derive(Clone, Copy, Debug)]
pub struct Topology {
    /// Number of servers.
    pub server_count: u8,
}

impl Topology {
    /// Stateright's `majority(cluster_size)`.
    fn majority(self) -> usize {
        self.server_count as usize / 2 + 1
    }

    /// Every server except `id` (stateright's `model_peers`).
    fn peers(self, id: Id) -> impl Iterator<Item = Id> {
        (0..self.server_count).filter(move |&peer| peer != id)
    }

    fn broadcast(self, id: Id, msg: Msg, out: &mut Outbox) {
        out.extend(self.peers(id).map(|peer| (peer, msg)));
    }

    /// A server's initial state (`PaxosActor::on_start`; it sends nothing).
    pub fn server_start(self) -> ServerState {
        ServerState {
            ballot: (0, 0),
            proposal: None,
            prepares: BTreeMap::new(),
            accepts: BTreeSet::new(),
            accepted: None,
            is_decided: false,
        }
    }

    /// A client's initial state and first Put (`RegisterActor::on_start`).
    pub fn client_start(self, id: Id, out: &mut Outbox) -> ClientState {
        assert!(id >= self.server_count, "clients come after the servers");
        if PUT_COUNT == 0 {
            return ClientState {
                awaiting: None,
                op_count: 0,
            };
        }
        let request_id = RequestId::from(id);
        let value = b'A' + (id - self.server_count);
        out.push((id % self.server_count, Msg::Put(request_id, value)));
        ClientState {
            awaiting: Some(request_id),
            op_count: 1,
        }
    }

    /// Server `id` receives `msg` from `src` (`PaxosActor::on_msg`).
    pub fn server_on_msg(
        self,
        id: Id,
        state: &mut ServerState,
        src: Id,
        msg: Msg,
        out: &mut Outbox,
    ) -> bool {
        if state.is_decided {
            let Msg::Get(request_id) = msg else {
                return false;
            };
            let (_ballot, (_request, _requester, value)) =
                state.accepted.expect("decided but lacks accepted state");
            out.push((src, Msg::GetOk(request_id, value)));
            return true;
        }
        let Msg::Internal(internal) = msg else {
            let Msg::Put(request_id, value) = msg else {
                return false;
            };
            if state.proposal.is_some() {
                return false;
            }
            state.proposal = Some((request_id, src, value));
            state.prepares = BTreeMap::new();
            state.accepts = BTreeSet::new();
            state.ballot = (state.ballot.0 + 1, id);
            state.prepares.insert(id, state.accepted);
            let ballot = state.ballot;
            self.broadcast(id, Msg::Internal(PaxosMsg::Prepare { ballot }), out);
            return true;
        };
        match internal {
            PaxosMsg::Prepare { ballot } if state.ballot < ballot => {
                state.ballot = ballot;
                let last_accepted = state.accepted;
                out.push((
                    src,
                    Msg::Internal(PaxosMsg::Prepared {
                        ballot,
                        last_accepted,
                    }),
                ));
            }
            PaxosMsg::Prepared {
                ballot,
                last_accepted,
            } if ballot == state.ballot => {
                state.prepares.insert(src, last_accepted);
                if state.prepares.len() == self.majority() {
                    let proposal = state
                        .prepares
                        .values()
                        .max()
                        .expect("a quorum of prepares")
                        .map(|(_ballot, proposal)| proposal)
                        .unwrap_or_else(|| state.proposal.expect("proposal expected"));
                    state.proposal = Some(proposal);
                    state.accepted = Some((ballot, proposal));
                    state.accepts.insert(id);
                    self.broadcast(
                        id,
                        Msg::Internal(PaxosMsg::Accept { ballot, proposal }),
                        out,
                    );
                }
            }
            PaxosMsg::Accept { ballot, proposal } if state.ballot <= ballot => {
                state.ballot = ballot;
                state.accepted = Some((ballot, proposal));
                out.push((src, Msg::Internal(PaxosMsg::Accepted { ballot })));
            }
            PaxosMsg::Accepted { ballot } if ballot == state.ballot => {
                state.accepts.insert(src);
                if state.accepts.len() == self.majority() {
                    state.is_decided = true;
                    let proposal = state.proposal.expect("proposal expected");
                    self.broadcast(
                        id,
                        Msg::Internal(PaxosMsg::Decided { ballot, proposal }),
                        out,
                    );
                    let (request_id, requester, _value) = proposal;
                    out.push((requester, Msg::PutOk(request_id)));
                }
            }
            PaxosMsg::Decided { ballot, proposal } => {
                state.ballot = ballot;
                state.accepted = Some((ballot, proposal));
                state.is_decided = true;
            }
            _ => return false,
        }
        true
    }

    /// Client `id` receives `msg` (`RegisterActor::Client`'s `on_msg`).
    pub fn client_on_msg(
        self,
        id: Id,
        state: &mut ClientState,
        msg: Msg,
        out: &mut Outbox,
    ) -> bool {
        let Some(awaiting) = state.awaiting else {
            return false;
        };
        let op_count = state.op_count;
        match msg {
            Msg::PutOk(request_id) if request_id == awaiting => {
                let index = u64::from(id);
                let request_id = (op_count + 1) * index;
                let server = ((index + op_count) % u64::from(self.server_count)) as Id;
                if op_count < PUT_COUNT {
                    let value = b'Z' - (id - self.server_count);
                    out.push((server, Msg::Put(request_id, value)));
                } else {
                    out.push((server, Msg::Get(request_id)));
                }
                *state = ClientState {
                    awaiting: Some(request_id),
                    op_count: op_count + 1,
                };
            }
            Msg::GetOk(request_id, _value) if request_id == awaiting => {
                *state = ClientState {
                    awaiting: None,
                    op_count: op_count + 1,
                };
            }
            _ => return false,
        }
        true
    }
}
