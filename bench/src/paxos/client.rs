//! Stateright's `RegisterActor::Client` with `put_count: 1`: a client puts
//! its value, then gets. Its state is its phase, which also says where its
//! operations stand in the linearizability history (an operation is
//! invoked exactly when the client sends it and returns exactly when the
//! client accepts the reply), plus what the history records of its read.

use cmc_model::{DecodeError, Decoder, Encode};

use super::messages::{client_id, Envelope, Msg, Value, MAX_CLIENTS, SERVERS};
use super::network::Network;

/// Where a client is (stateright's `awaiting` and `op_count`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Awaiting `PutOk(id)`; its write is in flight.
    #[default]
    Putting,
    /// Awaiting `GetOk(2 * id, _)`; its write completed, its read is in
    /// flight.
    Getting,
    /// Awaiting nothing; both operations completed.
    Done,
}

impl Phase {
    /// How many of the client's operations completed.
    pub fn completed(self) -> u8 {
        self as u8
    }
}

/// A client and its part of the history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Client {
    /// Where it is.
    pub phase: Phase,
    /// When its read was invoked: how many operations each client had
    /// completed (the history's "last completed" map: 0 is no entry, `n`
    /// the entry `n - 1`); 0 for itself and before the read.
    pub read_after: [u8; MAX_CLIENTS],
    /// What its read returned (default until then).
    pub read: Value,
}

impl Client {
    /// Client `index`'s start: it sends its Put (`RegisterActor::on_start`).
    pub fn start(index: usize, network: &mut Network) -> Client {
        let id = client_id(index);
        network.send(Envelope::new(id, id % SERVERS, Msg::Put));
        Client::default()
    }
}

/// Client `index` of `clients` receives `msg` (the client's `on_msg`, and
/// the history's `record_returns` and `record_invocations`), sending into
/// `network`; returns whether a case applied.
pub fn on_msg(clients: &mut [Client], index: usize, msg: Msg, network: &mut Network) -> bool {
    match (clients[index].phase, msg) {
        (Phase::Putting, Msg::PutOk) => {
            let mut read_after = [0; MAX_CLIENTS];
            for (other, client) in clients.iter().enumerate() {
                if other != index {
                    read_after[other] = client.phase.completed();
                }
            }
            clients[index] = Client {
                phase: Phase::Getting,
                read_after,
                read: Value::default(),
            };
            // The example's `(index + op_count) % server_count`, `index`
            // being the actor id and `op_count` 1.
            let id = client_id(index);
            network.send(Envelope::new(id, (id + 1) % SERVERS, Msg::Get));
        }
        (Phase::Getting, Msg::GetOk(value)) => {
            clients[index].phase = Phase::Done;
            clients[index].read = value;
        }
        _ => return false,
    }
    true
}

/// Three bytes: phase, `read_after` at 2 bits a client, read value.
impl Encode for Client {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        let read_after = (0..MAX_CLIENTS).fold(0, |bits, other| {
            bits | self.read_after[other] << (2 * other)
        });
        out.extend_from_slice(&[self.phase as u8, read_after, self.read.0]);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let [phase, read_after, read] = <[u8; 3]>::decode(decoder)?;
        let phase = match phase {
            0 => Phase::Putting,
            1 => Phase::Getting,
            2 => Phase::Done,
            _ => return decoder.invalid(format!("{phase} is not a client phase")),
        };
        let client = Client {
            phase,
            read_after: std::array::from_fn(|other| read_after >> (2 * other) & 3),
            read: Value(read),
        };
        let valid = client.read_after.iter().all(|&completed| completed <= 2)
            && (phase != Phase::Putting || read_after == 0)
            && (phase == Phase::Done || read == 0)
            && usize::from(read) <= MAX_CLIENTS;
        if !valid {
            return decoder.invalid("not the encoding of a client state");
        }
        Ok(client)
    }
}
