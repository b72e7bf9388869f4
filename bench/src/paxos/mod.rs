//! A cmc port of stateright's single-decree Paxos example
//! (`examples/paxos.rs`, stateright 0.31): the same actors, messages and
//! history, on the same unordered, non-duplicating network (a multiset of
//! envelopes; delivering one removes one copy).
//!
//! A state holds what stateright's `ActorModelState` holds that can change
//! in this system: the actors' states, the network and the history. (Its
//! timers, random choices, crash flags and storages are constant here: the
//! actors set no timer, make no random choice, and nothing crashes.)

mod actors;
mod history;
mod messages;

use std::collections::BTreeMap;

use cmc_model::{encode_fields, Model, ModelParam, Property};

use actors::{ClientState, Outbox, ServerState, Topology};
use history::{History, RegisterOp, RegisterRet};
use messages::{Envelope, Id, Msg, Value};

/// Single-decree Paxos with `client_count` register clients and
/// `server_count` servers.
#[derive(Clone, Debug)]
pub struct Paxos {
    client_count: u8,
    topology: Topology,
}

/// A state of the actor system.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PaxosState {
    servers: Vec<ServerState>,
    clients: Vec<ClientState>,
    history: History,
    /// The multiset of envelopes in flight, with their multiplicities.
    network: BTreeMap<Envelope, u64>,
}

encode_fields!(PaxosState {
    servers,
    clients,
    history,
    network
});

impl Paxos {
    /// The example's system: `client_count` clients and 3 servers.
    pub fn new(client_count: usize) -> Paxos {
        let client_count = u8::try_from(client_count).expect("fewer than 256 clients");
        Paxos {
            client_count,
            topology: Topology { server_count: 3 },
        }
    }

    /// Sends what `src` emitted: records Put and Get invocations in the
    /// history (stateright's `record_invocations`), then enqueues them.
    fn send_all(state: &mut PaxosState, src: Id, out: Outbox) {
        for (dst, msg) in out {
            match msg {
                Msg::Put(_, value) => state.history.on_invoke(src, RegisterOp::Write(value)),
                Msg::Get(_) => state.history.on_invoke(src, RegisterOp::Read),
                _ => {}
            }
            *state.network.entry(Envelope { src, dst, msg }).or_insert(0) += 1;
        }
    }

    fn client_index(&self, id: Id) -> usize {
        usize::from(id - self.topology.server_count)
    }
}

impl Model for Paxos {
    type State = PaxosState;
    type Action = Envelope;

    fn name(&self) -> String {
        "paxos".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![
            ModelParam::new("CLIENTS", self.client_count),
            ModelParam::new("SERVERS", self.topology.server_count),
        ]
    }

    fn init_states(&self, out: &mut Vec<PaxosState>) {
        let servers = self.topology.server_count;
        let mut state = PaxosState {
            servers: (0..servers).map(|_| self.topology.server_start()).collect(),
            clients: Vec::new(),
            history: History::new(),
            network: BTreeMap::new(),
        };
        for id in servers..servers + self.client_count {
            let mut sent = Outbox::new();
            state
                .clients
                .push(self.topology.client_start(id, &mut sent));
            Paxos::send_all(&mut state, id, sent);
        }
        out.push(state);
    }

    /// Delivering each distinct envelope in flight.
    fn actions(&self, state: &PaxosState, out: &mut Vec<Envelope>) {
        out.extend(state.network.keys().copied());
    }

    fn next_state(&self, state: &PaxosState, envelope: &Envelope) -> Option<PaxosState> {
        let Envelope { src, dst, msg } = *envelope;
        let mut sent = Outbox::new();
        let mut next = if dst < self.topology.server_count {
            let mut server = state.servers[usize::from(dst)].clone();
            if !self
                .topology
                .server_on_msg(dst, &mut server, src, msg, &mut sent)
            {
                return None;
            }
            let mut next = state.clone();
            next.servers[usize::from(dst)] = server;
            next
        } else {
            let index = self.client_index(dst);
            let mut client = state.clients[index];
            if !self
                .topology
                .client_on_msg(dst, &mut client, msg, &mut sent)
            {
                return None;
            }
            let mut next = state.clone();
            next.clients[index] = client;
            next
        };
        let copies = next
            .network
            .get_mut(envelope)
            .expect("a delivered envelope is in flight");
        *copies -= 1;
        if *copies == 0 {
            next.network.remove(envelope);
        }
        match msg {
            Msg::GetOk(_, value) => next.history.on_return(dst, RegisterRet::ReadOk(value)),
            Msg::PutOk(_) => next.history.on_return(dst, RegisterRet::WriteOk),
            _ => {}
        }
        Paxos::send_all(&mut next, dst, sent);
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Paxos>> {
        vec![
            Property::always("linearizable", |_: &Paxos, state: &PaxosState| {
                state.history.is_linearizable()
            }),
            Property::sometimes("value chosen", |_: &Paxos, state: &PaxosState| {
                state.network.keys().any(
                    |envelope| matches!(envelope.msg, Msg::GetOk(_, value) if value != Value::default()),
                )
            }),
        ]
    }

    fn format_action(&self, envelope: &Envelope) -> String {
        format!(
            "Deliver {{ src: {}, dst: {}, msg: {:?} }}",
            envelope.src, envelope.dst, envelope.msg
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmc_model::Encode;
    use cmc_search::Checker;

    #[test]
    fn two_clients_have_stateright_s_16668_states() {
        let outcome = Checker::new(Paxos::new(2))
            .workers(1)
            .check_deadlock(false)
            .run();
        assert!(outcome.verdict.is_pass(), "{:?}", outcome.verdict);
        assert_eq!(outcome.stats.distinct_states, 16_668);
    }

    #[test]
    fn states_round_trip_through_their_encoding() {
        let model = Paxos::new(2);
        let mut states = Vec::new();
        model.init_states(&mut states);
        let mut actions = Vec::new();
        for _ in 0..6 {
            let state = states.last().unwrap().clone();
            assert_eq!(PaxosState::decode_exact(&state.to_bytes()).unwrap(), state);
            actions.clear();
            model.actions(&state, &mut actions);
            let Some(next) = actions.iter().find_map(|a| model.next_state(&state, a)) else {
                break;
            };
            states.push(next);
        }
        assert!(states.len() > 3);
    }
}
