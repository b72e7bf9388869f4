//! A replicated read/write register in Rust, multi-writer ABD (Attiya,
//! Bar-Noy and Dolev): quorum reads with write-back, writes that query
//! timestamps first.
//!
//! Nodes `0..servers` are replicas (`servers` is `cfg1`, default 3), the rest
//! are clients; the World's client requests go to the clients. Request `r`
//! writes `r + 1` when `r` is even and reads when it is odd
//! ([`written_value`]); a client busy with a request refuses another
//! ([`REPLY_REFUSED`]).
//!
//! - Write: query every replica, and once a majority answered, store the
//!   value with timestamp `(highest counter + 1, client)` at every replica;
//!   reply once a majority acknowledged.
//! - Read: query every replica; if a majority reported the same timestamp,
//!   that value is already durable at a majority and is returned; otherwise
//!   write the highest (timestamp, value) back to a majority first.
//! - Replica: answers a query with its durable (timestamp, value); adopts a
//!   stored value with a higher timestamp, PERSISTs its record and
//!   acknowledges only once that persist is flushed. A restart resumes from
//!   the durable record.
//!
//! See [`properties`](mod@properties) for what is checked. Planted bugs, selected by the
//! const parameter `BUG` (0: none):
//! 1. a read returns without the write-back phase;
//! 2. the quorum is off by one (`servers / 2`);
//! 3. a read keeps the first reply instead of the highest timestamp;
//! 4. a writer does not query timestamps, it counts its own writes;
//! 5. a replica acknowledges a store before its persist is flushed.
//!
//! The gate runs bugs 2, 3 and 5 (two requests); bugs 1 and 4 need four
//! requests, beyond the gate's time budget (see the crate's README).

mod msg;
pub mod properties;
#[cfg(test)]
mod tests;

use bytemuck::{Pod, Zeroable};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::core::helpers::{self, node_bit, send, send_to_each, Message};
use cmc_world::TypedCore;

use crate::quorum::quorum;
use crate::wire::decoded;
use crate::{is_server, servers, Replies, SERVERS_DEFAULT};

pub use crate::wire::{REPLY_OK, REPLY_REFUSED};
pub use msg::{Msg, Timestamp};
pub use properties::{core, equip, world};

/// Planted bugs, numbered `1..=BUGS`.
pub const BUGS: u32 = 5;

/// Client phases ([`Volatile::phase`]).
pub mod phase {
    /// No request in progress.
    pub const IDLE: u32 = 0;
    /// Collecting the replicas' timestamps.
    pub const QUERY: u32 = 1;
    /// Storing (a write, or a read's write-back), collecting acknowledgements.
    pub const STORE: u32 = 2;
}

/// The value client request `request` writes (even requests), or `None` for
/// a read (odd requests).
pub fn written_value(request: u32) -> Option<u32> {
    request.is_multiple_of(2).then_some(request + 1)
}

/// A replica's durable record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// The timestamp of `value`.
    pub ts: Timestamp,
    /// The register's value (0: the initial value).
    pub value: u32,
}

/// The volatile part; replicas use the first three fields, clients the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// Replica: the highest timestamp stored (possibly not yet flushed).
    pub ts: Timestamp,
    /// Replica: its value.
    pub value: u32,
    /// Replica: acknowledgements waiting for their persist's flush.
    pub pending: Replies,
    /// Client: the request in progress (valid unless `phase` is idle).
    pub request: u32,
    /// Client: a [`phase`].
    pub phase: u32,
    /// Client: the value the request writes (0: a read).
    pub write: u32,
    /// Client: bit per replica that answered in this phase.
    pub replies: u32,
    /// Client: the highest timestamp reported (query), or the one stored.
    pub best: Timestamp,
    /// Client: the value at `best`.
    pub best_value: u32,
    /// Client: the lowest timestamp reported in the query phase.
    pub lowest: Timestamp,
    /// Client: writes it has started.
    pub writes: u32,
}

/// The ABD core; `BUG` selects a planted bug (0: the correct protocol).
#[derive(Clone, Copy, Debug, Default)]
pub struct Abd<const BUG: u32>;

fn broadcast(config: &Config, out: &mut Outputs, msg: Msg) -> Result<(), CoreError> {
    send_to_each(out, 0..servers(&config.params), &msg)
}

impl<const BUG: u32> Abd<BUG> {
    fn quorum(config: &Config) -> u32 {
        quorum(servers(&config.params), BUG == 2)
    }

    fn replica(
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Start) => {
                *v = Volatile {
                    ts: d.ts,
                    value: d.value,
                    ..Volatile::default()
                };
                Ok(())
            }
            Some(EventKind::Recv) => {
                let reply = match decoded(event.payload())? {
                    Msg::Query { request } => Msg::QueryOk {
                        request,
                        ts: d.ts,
                        value: d.value,
                    },
                    Msg::Store { request, ts, value } => {
                        let ack = Msg::StoreOk { request, ts };
                        if ts > v.ts {
                            v.ts = ts;
                            v.value = value;
                        } else if v.pending.is_empty() {
                            // The durable record already holds `v.ts >= ts`.
                            return send(out, event.src, &ack);
                        }
                        let record = Durable {
                            ts: v.ts,
                            value: v.value,
                        };
                        out.persist_record(0, &record)?;
                        if BUG != 5 {
                            return v.pending.hold(event.src, &ack);
                        }
                        v.pending.hold_nothing()?;
                        ack
                    }
                    _ => return Ok(()),
                };
                send(out, event.src, &reply)
            }
            Some(EventKind::Flushed) => match v.pending.release() {
                Some(head) => out.send(head.dst, head.message()),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Starts the store phase of `ts` and `value`.
    fn store(
        config: &Config,
        v: &mut Volatile,
        ts: Timestamp,
        value: u32,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        v.phase = phase::STORE;
        v.replies = 0;
        v.best = ts;
        v.best_value = value;
        let request = v.request;
        broadcast(config, out, Msg::Store { request, ts, value })
    }

    /// Answers the request in progress and goes idle.
    fn finish(v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        if v.write != 0 {
            out.reply(v.request, &[REPLY_OK])?;
        } else {
            out.reply(v.request, &[REPLY_OK, v.best_value as u8])?;
        }
        *v = Volatile {
            writes: v.writes,
            ..Volatile::default()
        };
        Ok(())
    }

    /// Counts `src`'s answer in this phase; whether it is new.
    fn count(v: &mut Volatile, src: u32) -> bool {
        let new = v.replies & (1 << src) == 0;
        v.replies |= 1 << src;
        new
    }

    fn query_reply(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        ts: Timestamp,
        value: u32,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let first = v.replies == 0;
        if !Self::count(v, src) {
            return Ok(());
        }
        if first || ts < v.lowest {
            v.lowest = ts;
        }
        if first || (BUG != 3 && ts > v.best) {
            v.best = ts;
            v.best_value = value;
        }
        if v.replies.count_ones() != Self::quorum(config) {
            return Ok(());
        }
        if v.write != 0 {
            v.writes += 1;
            let ts = Timestamp {
                counter: v.best.counter + 1,
                writer: config.node,
            };
            Self::store(config, v, ts, v.write, out)
        } else if v.lowest == v.best || BUG == 1 {
            Self::finish(v, out)
        } else {
            Self::store(config, v, v.best, v.best_value, out)
        }
    }

    fn client(
        config: &Config,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Client) if v.phase != phase::IDLE => {
                out.reply(event.id, &[REPLY_REFUSED])
            }
            Some(EventKind::Client) => {
                v.request = event.id;
                v.write = written_value(event.id).unwrap_or(0);
                if BUG == 4 && v.write != 0 {
                    v.writes += 1;
                    let ts = Timestamp {
                        counter: v.writes,
                        writer: config.node,
                    };
                    return Self::store(config, v, ts, v.write, out);
                }
                v.phase = phase::QUERY;
                broadcast(config, out, Msg::Query { request: event.id })
            }
            Some(EventKind::Recv) => match Msg::decode(event.payload()) {
                Some(Msg::QueryOk { request, ts, value })
                    if request == v.request && v.phase == phase::QUERY =>
                {
                    Self::query_reply(config, v, event.src, ts, value, out)
                }
                Some(Msg::StoreOk { request, ts })
                    if request == v.request && v.phase == phase::STORE && ts == v.best =>
                {
                    let quorum = Self::quorum(config);
                    if Self::count(v, event.src) && v.replies.count_ones() == quorum {
                        Self::finish(v, out)
                    } else {
                        Ok(())
                    }
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

impl<const BUG: u32> TypedCore for Abd<BUG> {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "abd"
    }

    fn step(
        &self,
        config: &Config,
        durable: &Durable,
        volatile: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if is_server(config) {
            Self::replica(durable, volatile, event, out)
        } else {
            Self::client(config, volatile, event, out)
        }
    }

    fn describe_state(&self, config: &Config, d: &Durable, v: &Volatile) -> Option<String> {
        Some(if is_server(config) {
            format!(
                "replica ts={} value={} pending={} durable: ts={} value={}",
                v.ts,
                v.value,
                v.pending.len(),
                d.ts,
                d.value
            )
        } else {
            let phase = match v.phase {
                phase::QUERY => "query",
                phase::STORE => "store",
                _ => "idle",
            };
            format!(
                "client {phase} r{} write={} replies={:#x} best={}:{} lowest={} writes={}",
                v.request, v.write, v.replies, v.best, v.best_value, v.lowest, v.writes
            )
        })
    }

    fn describe_message(&self, _config: &Config, message: &[u8]) -> Option<String> {
        helpers::describe_message::<Msg>(message)
    }

    /// Node ids live in timestamps (writers), in the destinations and
    /// messages of pending acknowledgements, and in a client's reply bits.
    fn permute(&self, _: &Config, d: &mut Durable, v: &mut Volatile, perm: &[u32]) -> bool {
        d.ts = d.ts.renamed(perm);
        v.ts = v.ts.renamed(perm);
        v.best = v.best.renamed(perm);
        v.lowest = v.lowest.renamed(perm);
        v.replies = (0..perm.len())
            .filter(|&node| v.replies & (1 << node) != 0)
            .fold(0, |replies, node| replies | 1 << perm[node]);
        for entry in v.pending.held_mut() {
            entry.dst = perm[entry.dst as usize];
            rename_message(entry.message_mut(), perm);
        }
        true
    }

    /// The ids `permute` renames.
    fn node_ids(&self, _: &Config, d: &Durable, v: &Volatile) -> u64 {
        let timestamps = [d.ts, v.ts, v.best, v.lowest].map(Timestamp::node_ids);
        let held = v.pending.held().map(|entry| {
            let message = Msg::decode(entry.message()).map_or(0, Msg::node_ids);
            node_bit(entry.dst) | message
        });
        let replies = u64::from(v.replies);
        timestamps
            .into_iter()
            .chain(held)
            .fold(replies, |ids, more| ids | more)
    }

    fn permute_message(&self, _config: &Config, message: &mut [u8], perm: &[u32]) {
        rename_message(message, perm);
    }
}

/// Renames the node ids inside encoded message `bytes` in place (a message
/// that does not decode is left alone).
fn rename_message(bytes: &mut [u8], perm: &[u32]) {
    if let Some(msg) = Msg::decode(bytes) {
        bytes.copy_from_slice(msg.renamed(perm).encode().as_bytes());
    }
}
