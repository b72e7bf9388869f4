//! Stateright's single-decree Paxos example (`paxos.rs` example of
//! stateright 0.31): the `PaxosActor` servers behind stateright's
//! `RegisterActor` clients, on an unordered non-duplicating network, with a
//! linearizability tester as history. Transcribed as it is there; only the
//! serde derives (needed there to spawn real servers), the command line and
//! the real-network `spawn` are left out.
//!
//! Stateright is MIT-licensed; this model is a transcription of its example.

use std::borrow::Cow;

use stateright::actor::register::{RegisterActor, RegisterMsg, RegisterMsg::*};
use stateright::actor::{majority, model_peers, Actor, ActorModel, Id, Network, Out};
use stateright::semantics::register::Register;
use stateright::semantics::LinearizabilityTester;
use stateright::util::{HashableHashMap, HashableHashSet};
use stateright::Expectation;

type Round = u32;
type Ballot = (Round, Id);
type Proposal = (RequestId, Id, Value);
type RequestId = u64;
type Value = char;

/// The servers' internal protocol.
#[derive(Clone, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
pub enum PaxosMsg {
    /// Phase 1a.
    Prepare {
        /// The leader's new ballot.
        ballot: Ballot,
    },
    /// Phase 1b.
    Prepared {
        /// The ballot prepared.
        ballot: Ballot,
        /// What the acceptor last accepted.
        last_accepted: Option<(Ballot, Proposal)>,
    },
    /// Phase 2a.
    Accept {
        /// The ballot.
        ballot: Ballot,
        /// The proposal to accept.
        proposal: Proposal,
    },
    /// Phase 2b.
    Accepted {
        /// The ballot accepted.
        ballot: Ballot,
    },
    /// The leader saw a quorum accept.
    Decided {
        /// The ballot.
        ballot: Ballot,
        /// The proposal decided.
        proposal: Proposal,
    },
}
use PaxosMsg::*;

/// A server's state.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub struct PaxosState {
    ballot: Ballot,
    proposal: Option<Proposal>,
    prepares: HashableHashMap<Id, Option<(Ballot, Proposal)>>,
    accepts: HashableHashSet<Id>,
    accepted: Option<(Ballot, Proposal)>,
    is_decided: bool,
}

/// A Paxos server.
#[derive(Clone)]
pub struct PaxosActor {
    peer_ids: Vec<Id>,
}

impl Actor for PaxosActor {
    type Msg = RegisterMsg<RequestId, Value, PaxosMsg>;
    type State = PaxosState;
    type Timer = ();
    type Random = ();
    type Storage = ();

    fn name(&self) -> String {
        "Paxos Server".to_owned()
    }

    fn on_start(
        &self,
        _id: Id,
        _storage: &Option<Self::Storage>,
        _o: &mut Out<Self>,
    ) -> Self::State {
        PaxosState {
            ballot: (0, Id::from(0)),
            proposal: None,
            prepares: Default::default(),
            accepts: Default::default(),
            accepted: None,
            is_decided: false,
        }
    }

    fn on_msg(
        &self,
        id: Id,
        state: &mut Cow<Self::State>,
        src: Id,
        msg: Self::Msg,
        o: &mut Out<Self>,
    ) {
        if state.is_decided {
            if let Get(request_id) = msg {
                let (_b, (_req_id, _src, value)) =
                    state.accepted.expect("decided but lacks accepted state");
                o.send(src, GetOk(request_id, value));
            };
            return;
        }

        match msg {
            Put(request_id, value) if state.proposal.is_none() => {
                let state = state.to_mut();
                state.proposal = Some((request_id, src, value));
                state.prepares = Default::default();
                state.accepts = Default::default();
                state.ballot = (state.ballot.0 + 1, id);
                state.prepares.insert(id, state.accepted);
                o.broadcast(
                    &self.peer_ids,
                    &Internal(Prepare {
                        ballot: state.ballot,
                    }),
                );
            }
            Internal(Prepare { ballot }) if state.ballot < ballot => {
                state.to_mut().ballot = ballot;
                o.send(
                    src,
                    Internal(Prepared {
                        ballot,
                        last_accepted: state.accepted,
                    }),
                );
            }
            Internal(Prepared {
                ballot,
                last_accepted,
            }) if ballot == state.ballot => {
                let state = state.to_mut();
                state.prepares.insert(src, last_accepted);
                if state.prepares.len() == majority(self.peer_ids.len() + 1) {
                    let proposal = state
                        .prepares
                        .values()
                        .max()
                        .unwrap()
                        .map(|(_b, p)| p)
                        .unwrap_or_else(|| state.proposal.expect("proposal expected"));
                    state.proposal = Some(proposal);
                    state.accepted = Some((ballot, proposal));
                    state.accepts.insert(id);
                    o.broadcast(&self.peer_ids, &Internal(Accept { ballot, proposal }));
                }
            }
            Internal(Accept { ballot, proposal }) if state.ballot <= ballot => {
                let state = state.to_mut();
                state.ballot = ballot;
                state.accepted = Some((ballot, proposal));
                o.send(src, Internal(Accepted { ballot }));
            }
            Internal(Accepted { ballot }) if ballot == state.ballot => {
                let state = state.to_mut();
                state.accepts.insert(src);
                if state.accepts.len() == majority(self.peer_ids.len() + 1) {
                    state.is_decided = true;
                    let proposal = state.proposal.expect("proposal expected");
                    o.broadcast(&self.peer_ids, &Internal(Decided { ballot, proposal }));
                    let (request_id, requester_id, _) = proposal;
                    o.send(requester_id, PutOk(request_id));
                }
            }
            Internal(Decided { ballot, proposal }) => {
                let state = state.to_mut();
                state.ballot = ballot;
                state.accepted = Some((ballot, proposal));
                state.is_decided = true;
            }
            _ => {}
        }
    }
}

/// The example's configuration: clients, servers and the network.
#[derive(Clone)]
pub struct PaxosModelCfg {
    /// Clients (each puts one value, then gets).
    pub client_count: usize,
    /// Servers.
    pub server_count: usize,
    /// The network the actors share.
    pub network: Network<<PaxosActor as Actor>::Msg>,
}

/// The actor model the example checks.
pub type PaxosModel = ActorModel<
    RegisterActor<PaxosActor>,
    PaxosModelCfg,
    LinearizabilityTester<Id, Register<Value>>,
>;

impl PaxosModelCfg {
    /// The example's configuration with `client_count` clients, 3 servers
    /// and an unordered non-duplicating network (its `check-bfs` defaults).
    pub fn unordered_nonduplicating(client_count: usize) -> PaxosModelCfg {
        PaxosModelCfg {
            client_count,
            server_count: 3,
            network: Network::new_unordered_nonduplicating([]),
        }
    }

    /// The actor model, with the example's properties and history.
    pub fn into_model(self) -> PaxosModel {
        ActorModel::new(
            self.clone(),
            LinearizabilityTester::new(Register(Value::default())),
        )
        .actors((0..self.server_count).map(|i| {
            RegisterActor::Server(PaxosActor {
                peer_ids: model_peers(i, self.server_count),
            })
        }))
        .actors((0..self.client_count).map(|_| RegisterActor::Client {
            put_count: 1,
            server_count: self.server_count,
        }))
        .init_network(self.network)
        .property(Expectation::Always, "linearizable", |_, state| {
            state.history.serialized_history().is_some()
        })
        .property(Expectation::Sometimes, "value chosen", |_, state| {
            for env in state.network.iter_deliverable() {
                if let RegisterMsg::GetOk(_req_id, value) = env.msg {
                    if *value != Value::default() {
                        return true;
                    }
                }
            }
            false
        })
        .record_msg_in(RegisterMsg::record_returns)
        .record_msg_out(RegisterMsg::record_invocations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stateright::{Checker, Model};

    #[test]
    fn two_clients_have_the_examples_16668_states() {
        let checker = PaxosModelCfg::unordered_nonduplicating(2)
            .into_model()
            .checker()
            .spawn_bfs()
            .join();
        checker.assert_properties();
        assert_eq!(checker.unique_state_count(), 16_668);
    }
}
