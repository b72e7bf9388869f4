//! ABD messages between clients and replicas, and their encoding.

use bytemuck::{Pod, Zeroable};

use cmc_world::core::helpers::{node_bit, Message};

use crate::wire::{words, Words};

/// A write's timestamp: (counter, writer node), ordered lexicographically.
/// `(0, 0)` is the initial value's, below every write's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
#[repr(C)]
pub struct Timestamp {
    /// The counter.
    pub counter: u32,
    /// The client node that wrote it.
    pub writer: u32,
}

impl Timestamp {
    /// The timestamp with its writer renamed by `perm[old] = new` (the
    /// initial timestamp names no writer and stays).
    pub fn renamed(self, perm: &[u32]) -> Timestamp {
        match self.counter {
            0 => self,
            _ => Timestamp {
                writer: perm[self.writer as usize],
                ..self
            },
        }
    }
}

impl Timestamp {
    /// The node ids [`Timestamp::renamed`] renames, as bits
    /// ([`node_bit`]): the writer's, unless it is the initial timestamp.
    pub fn node_ids(self) -> u64 {
        match self.counter {
            0 => 0,
            _ => node_bit(self.writer),
        }
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{})", self.counter, self.writer)
    }
}

/// A message of the ABD register; `request` is the client request served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Client: report your (timestamp, value).
    Query { request: u32 },
    /// Replica: its durable (timestamp, value).
    QueryOk {
        request: u32,
        ts: Timestamp,
        value: u32,
    },
    /// Client: store `value` if `ts` is above yours.
    Store {
        request: u32,
        ts: Timestamp,
        value: u32,
    },
    /// Replica: it durably holds a timestamp of at least `ts`.
    StoreOk { request: u32, ts: Timestamp },
}

impl Message for Msg {
    type Encoded = Words;

    /// The message's words: a tag, then the fields in order.
    fn encode(&self) -> Words {
        match *self {
            Msg::Query { request } => Words::new(&[1, request]),
            Msg::QueryOk { request, ts, value } => {
                Words::new(&[2, request, ts.counter, ts.writer, value])
            }
            Msg::Store { request, ts, value } => {
                Words::new(&[3, request, ts.counter, ts.writer, value])
            }
            Msg::StoreOk { request, ts } => Words::new(&[4, request, ts.counter, ts.writer]),
        }
    }

    /// The message `bytes` encode, if they are one.
    fn decode(bytes: &[u8]) -> Option<Msg> {
        let ts = |w: &[u32]| Timestamp {
            counter: w[2],
            writer: w[3],
        };
        let [tag] = words::<1>(bytes)?;
        Some(match (tag, bytes.len() / 4) {
            (1, 2) => Msg::Query {
                request: words::<2>(bytes)?[1],
            },
            (2, 5) => {
                let w = words::<5>(bytes)?;
                Msg::QueryOk {
                    request: w[1],
                    ts: ts(&w),
                    value: w[4],
                }
            }
            (3, 5) => {
                let w = words::<5>(bytes)?;
                Msg::Store {
                    request: w[1],
                    ts: ts(&w),
                    value: w[4],
                }
            }
            (4, 4) => {
                let w = words::<4>(bytes)?;
                Msg::StoreOk {
                    request: w[1],
                    ts: ts(&w),
                }
            }
            _ => return None,
        })
    }
}

impl Msg {
    /// The message with the node ids it carries (writers) renamed by
    /// `perm[old] = new`.
    pub fn renamed(self, perm: &[u32]) -> Msg {
        match self {
            Msg::Query { .. } => self,
            Msg::QueryOk { request, ts, value } => Msg::QueryOk {
                request,
                ts: ts.renamed(perm),
                value,
            },
            Msg::Store { request, ts, value } => Msg::Store {
                request,
                ts: ts.renamed(perm),
                value,
            },
            Msg::StoreOk { request, ts } => Msg::StoreOk {
                request,
                ts: ts.renamed(perm),
            },
        }
    }
}

impl Msg {
    /// The node ids [`Msg::renamed`] renames, as bits ([`node_bit`]).
    pub fn node_ids(self) -> u64 {
        match self {
            Msg::Query { .. } => 0,
            Msg::QueryOk { ts, .. } | Msg::Store { ts, .. } | Msg::StoreOk { ts, .. } => {
                ts.node_ids()
            }
        }
    }
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Query { request } => write!(f, "Query(r{request})"),
            Msg::QueryOk { request, ts, value } => write!(f, "QueryOk(r{request},{ts},{value})"),
            Msg::Store { request, ts, value } => write!(f, "Store(r{request},{ts},{value})"),
            Msg::StoreOk { request, ts } => write!(f, "StoreOk(r{request},{ts})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_round_trips_and_junk_does_not_decode() {
        let ts = Timestamp {
            counter: 2,
            writer: 4,
        };
        for msg in [
            Msg::Query { request: 1 },
            Msg::QueryOk {
                request: 1,
                ts,
                value: 3,
            },
            Msg::Store {
                request: 2,
                ts,
                value: 3,
            },
            Msg::StoreOk { request: 2, ts },
        ] {
            assert_eq!(Msg::decode(msg.encode().as_bytes()), Some(msg));
        }
        assert_eq!(Msg::decode(Words::new(&[4, 2]).as_bytes()), None);
        assert_eq!(Msg::decode(Words::new(&[9, 2]).as_bytes()), None);
    }

    #[test]
    fn timestamps_order_by_counter_then_writer() {
        let ts = |counter, writer| Timestamp { counter, writer };
        assert!(ts(0, 0) < ts(1, 3));
        assert!(ts(1, 3) < ts(1, 4));
        assert!(ts(1, 4) < ts(2, 3));
    }
}
