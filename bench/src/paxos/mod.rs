//! A cmc port of stateright's single-decree Paxos example
//! (`paxos.rs` example, stateright 0.31): the same actors, messages and
//! history, on the same unordered, non-duplicating network, in a compact
//! fixed-size state (`Copy`, no heap; successors are computed without
//! allocating, and a state encodes into a few dozen bytes).
//!
//! A state holds what stateright's `ActorModelState` holds that can change
//! in this system: the actors' states, the network and the history. (Its
//! timers, random choices, crash flags and storages are constant here: the
//! actors set no timer, make no random choice, and nothing crashes.) The
//! history lives in the clients' states (see [`client`]).

mod client;
mod history;
mod messages;
mod network;
mod server;

use cmc_model::{DecodeError, Decoder, Encode, Model, ModelParam, Property};

use client::Client;
use messages::{client_index, Envelope, Msg, MAX_CLIENTS, SERVERS};
use network::Network;
use server::Server;

/// Single-decree Paxos with `client_count` register clients and 3 servers.
#[derive(Clone, Debug)]
pub struct Paxos {
    client_count: u8,
}

/// A state of the actor system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PaxosState {
    servers: [Server; SERVERS as usize],
    /// How many of `clients` take part (the others stay default).
    client_count: u8,
    clients: [Client; MAX_CLIENTS],
    /// The envelopes in flight.
    network: Network,
}

impl PaxosState {
    fn clients(&self) -> &[Client] {
        &self.clients[..usize::from(self.client_count)]
    }
}

impl Paxos {
    /// The example's system: `client_count` clients (1 to 4) and 3 servers.
    pub fn new(client_count: usize) -> Paxos {
        assert!(
            (1..=MAX_CLIENTS).contains(&client_count),
            "1 to {MAX_CLIENTS} clients"
        );
        Paxos {
            client_count: client_count as u8,
        }
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
            ModelParam::new("SERVERS", SERVERS),
        ]
    }

    fn init_states(&self, out: &mut Vec<PaxosState>) {
        let mut network = Network::new();
        let mut clients = [Client::default(); MAX_CLIENTS];
        for (index, client) in clients[..usize::from(self.client_count)]
            .iter_mut()
            .enumerate()
        {
            *client = Client::start(index, &mut network);
        }
        out.push(PaxosState {
            servers: [Server::default(); SERVERS as usize],
            client_count: self.client_count,
            clients,
            network,
        });
    }

    /// Delivering each distinct envelope in flight.
    fn actions(&self, state: &PaxosState, out: &mut Vec<Envelope>) {
        out.extend(state.network.distinct());
    }

    /// Delivers one copy of `envelope`; `None` if it is not in flight or
    /// the recipient ignores it (stateright's no-op, which is no step).
    fn next_state(&self, state: &PaxosState, envelope: &Envelope) -> Option<PaxosState> {
        let (src, dst, msg) = (envelope.src(), envelope.dst(), envelope.msg());
        let mut next = *state;
        if !next.network.remove(*envelope) {
            return None;
        }
        let applied = if dst < SERVERS {
            next.servers[usize::from(dst)].on_msg(dst, src, msg, &mut next.network)
        } else {
            let clients = &mut next.clients[..usize::from(state.client_count)];
            client::on_msg(clients, client_index(dst), msg, &mut next.network)
        };
        applied.then_some(next)
    }

    fn properties(&self) -> Vec<Property<Paxos>> {
        vec![
            Property::always("linearizable", |_: &Paxos, state: &PaxosState| {
                history::is_linearizable(state.clients())
            }),
            Property::sometimes("value chosen", |_: &Paxos, state: &PaxosState| {
                state.network.iter().any(|envelope| {
                    matches!(envelope.msg(), Msg::GetOk(value) if value != Default::default())
                })
            }),
        ]
    }

    fn format_action(&self, envelope: &Envelope) -> String {
        envelope.to_string()
    }
}

/// The servers (7 bytes each), the client count and clients (3 bytes
/// each), then the network (1 byte and 4 per envelope).
impl Encode for PaxosState {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.servers.encode(out);
        out.push(self.client_count);
        for client in self.clients() {
            client.encode(out);
        }
        self.network.encode(out);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let servers = Encode::decode(decoder)?;
        let client_count = u8::decode(decoder)?;
        if usize::from(client_count) > MAX_CLIENTS {
            return decoder.invalid(format!("{client_count} clients exceed {MAX_CLIENTS}"));
        }
        let mut clients = [Client::default(); MAX_CLIENTS];
        for client in &mut clients[..usize::from(client_count)] {
            *client = Client::decode(decoder)?;
        }
        Ok(PaxosState {
            servers,
            client_count,
            clients,
            network: Network::decode(decoder)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmc_search::Checker;

    #[test]
    fn two_clients_have_stateright_s_16668_states() {
        let outcome = Checker::new(Paxos::new(2))
            .workers(1)
            .check_deadlock(false)
            .run();
        assert!(outcome.verdict.is_pass(), "{:?}", outcome.verdict);
        assert_eq!(outcome.stats.distinct_states, 16_668);
        assert_eq!(outcome.stats.depth, 21);
    }

    #[test]
    fn states_round_trip_through_their_encoding() {
        let model = Paxos::new(3);
        let mut states = Vec::new();
        model.init_states(&mut states);
        let mut actions = Vec::new();
        for _ in 0..12 {
            let state = *states.last().unwrap();
            let bytes = state.to_bytes();
            assert_eq!(PaxosState::decode_exact(&bytes).unwrap(), state);
            assert!(bytes.len() <= 21 + 1 + 9 + 1 + 4 * network::CAPACITY);
            actions.clear();
            model.actions(&state, &mut actions);
            let Some(next) = actions.iter().find_map(|a| model.next_state(&state, a)) else {
                break;
            };
            states.push(next);
        }
        assert!(states.len() > 6);
    }
}
