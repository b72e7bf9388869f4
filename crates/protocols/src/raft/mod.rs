//! A Raft core (leader election and log replication), in Rust.
//!
//! `n` servers (at most [`NODES_MAX`]) replicate a log of at most [`LOG_MAX`]
//! entries; terms are bounded by `cfg0` (default [`TERMS_DEFAULT`]) so that
//! the state space is finite, and `cfg1`, when not 0, is the set of servers
//! (bit per node) whose election timer may start an election (the others
//! only vote and follow). The durable record is Raft's persistent state: the
//! current term, the vote of that term and the log (entry = request id + 1
//! and the term it was appended in). Every message a node sends in answer
//! to one it received (a vote, an acknowledgement) leaves only once the
//! persist of what it answers for is flushed.
//!
//! - **Election.** A follower's or candidate's election timer starts an
//!   election: the next term, a vote for itself, RequestVote to every other
//!   server. A server grants its vote once per term, to a candidate whose
//!   log is at least as up to date as its own (last entry's term, then
//!   length). A candidate with a majority of votes (its own counted once its
//!   vote is flushed) becomes leader and sends its log to every other server.
//! - **Replication.** A leader appends a client request to its log and sends
//!   the whole log (at most two entries, so AppendEntries carries it all and
//!   needs no consistency check) to every other server. A server of that
//!   term replaces the entries that conflict with the leader's (same index,
//!   other term), keeps the ones that match, and acknowledges the length it
//!   matches once flushed. A message from a higher term makes a server a
//!   follower of that term; one from a lower term is ignored.
//! - **Commitment.** A leader commits index `i` when a majority (its own
//!   flushed copy included) holds its first `i` entries and entry `i` is of
//!   its current term; earlier entries are committed with it (Raft's rule of
//!   section 5.4.2, the answer to its Figure 8). The server a request was
//!   sent to replies OK (`[REPLY_OK, term]`) when, as leader, it commits it;
//!   a server that is not leader, or whose log is full, refuses.
//!
//! Planted bugs, selected by the const parameter `BUG` (0: none):
//! 1. a leader commits an entry of an earlier term by counting replicas
//!    (Raft's Figure 8): the entry can then be overwritten by a leader of a
//!    later term; the shortest counterexample is about 35 states deep;
//! 2. a server grants its vote without checking that the candidate's log is
//!    up to date;
//! 3. a server forgets its persisted vote when it restarts after a crash,
//!    and may vote again in the same term: only `VoteOnce`, a property
//!    over a ghost variable that remembers the vote ([`votes`]), sees it.

mod properties;
pub mod votes;

use bytemuck::{Pod, Zeroable};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::core::helpers::{self, send, Message};
use cmc_world::TypedCore;

use crate::leader::{append_at, broadcast, role_name, AfterFlushed};
use crate::quorum::majority;
use crate::wire::{decoded, words, Words};

pub use crate::leader::role;
pub use crate::wire::{REPLY_OK, REPLY_REFUSED};
pub use properties::{core, properties, world};

/// Entries the log holds.
pub const LOG_MAX: usize = 2;
/// Most servers.
pub const NODES_MAX: usize = 5;
/// Terms when `cfg0` is 0.
pub const TERMS_DEFAULT: u32 = 4;
/// Planted bugs, numbered `1..=BUGS`.
pub const BUGS: u32 = 3;
/// The election timer of followers and candidates.
pub const TIMER_ELECTION: u32 = 0;
/// Core error: more than [`NODES_MAX`] servers.
const ERROR_TOO_MANY_NODES: i32 = 2;

/// One log entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Entry {
    /// Request id + 1.
    pub value: u32,
    /// The term it was appended in.
    pub term: u32,
}

/// Raft's persistent state, written whole by each persist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// The current term.
    pub term: u32,
    /// The server voted for in `term`, plus one (0: none).
    pub voted_for: u32,
    /// Entries in use.
    pub len: u32,
    /// The log.
    pub entries: [Entry; LOG_MAX],
}

impl Durable {
    /// Whether the log holds an entry of value `value`.
    pub fn holds(&self, value: u32) -> bool {
        self.entries[..self.len as usize]
            .iter()
            .any(|entry| entry.value == value)
    }

    /// The term of the last entry (0 for an empty log).
    fn last_term(&self) -> u32 {
        match self.len {
            0 => 0,
            len => self.entries[len as usize - 1].term,
        }
    }
}

/// The volatile part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// One of [`role`].
    pub role: u32,
    /// Term, vote and log as they stand (possibly not yet flushed).
    pub current: Durable,
    /// Candidate: bit per server whose vote arrived.
    pub votes: u32,
    /// Leader: per server, how many first entries of its log it holds durably.
    pub matched: [u32; NODES_MAX],
    /// Leader: entries committed.
    pub commit: u32,
    /// Request id + 1 of the request this server appended at each index as
    /// leader and has not replied to yet (0: none); kept across terms,
    /// lost in a crash.
    pub pending: [u32; LOG_MAX],
    /// Per outstanding persist, the message its flush releases.
    pub after_flush: AfterFlushed,
}

/// A message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Candidate of `term`, whose log ends with an entry of `last_term` and
    /// has `len` entries.
    RequestVote { term: u32, last_term: u32, len: u32 },
    /// A vote granted in `term`.
    Vote { term: u32 },
    /// Leader of `term`: its whole log.
    Append { term: u32, log: Durable },
    /// Holds the first `len` entries of the log of `term`'s leader durably.
    Ack { term: u32, len: u32 },
}

impl Msg {
    /// The term the message belongs to.
    fn term(&self) -> u32 {
        match *self {
            Msg::RequestVote { term, .. }
            | Msg::Vote { term }
            | Msg::Append { term, .. }
            | Msg::Ack { term, .. } => term,
        }
    }
}

impl Message for Msg {
    type Encoded = Words;

    fn encode(&self) -> Words {
        match *self {
            Msg::RequestVote {
                term,
                last_term,
                len,
            } => Words::new(&[1, term, last_term, len]),
            Msg::Vote { term } => Words::new(&[2, term]),
            Msg::Append { term, log: l } => Words::new(&[
                3,
                term,
                l.len,
                l.entries[0].value,
                l.entries[0].term,
                l.entries[1].value,
                l.entries[1].term,
            ]),
            Msg::Ack { term, len } => Words::new(&[4, term, len]),
        }
    }

    fn decode(bytes: &[u8]) -> Option<Msg> {
        Some(match (words::<1>(bytes)?[0], bytes.len() / 4) {
            (1, 4) => {
                let w = words::<4>(bytes)?;
                Msg::RequestVote {
                    term: w[1],
                    last_term: w[2],
                    len: w[3].min(LOG_MAX as u32),
                }
            }
            (2, 2) => Msg::Vote {
                term: words::<2>(bytes)?[1],
            },
            (3, 7) => {
                let w = words::<7>(bytes)?;
                let entry = |at: usize| Entry {
                    value: w[at],
                    term: w[at + 1],
                };
                Msg::Append {
                    term: w[1],
                    log: Durable {
                        term: w[1],
                        voted_for: 0,
                        len: w[2].min(LOG_MAX as u32),
                        entries: [entry(3), entry(5)],
                    },
                }
            }
            (4, 3) => {
                let w = words::<3>(bytes)?;
                Msg::Ack {
                    term: w[1],
                    len: w[2].min(LOG_MAX as u32),
                }
            }
            _ => return None,
        })
    }
}

/// A log as text: `[value@term, ...]`.
fn log_text(log: &Durable) -> String {
    let entries: Vec<String> = log.entries[..log.len as usize]
        .iter()
        .map(|entry| format!("{}@t{}", entry.value, entry.term))
        .collect();
    format!("[{}]", entries.join(","))
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::RequestVote {
                term,
                last_term,
                len,
            } => write!(f, "RequestVote(t{term},last=t{last_term},len={len})"),
            Msg::Vote { term } => write!(f, "Vote(t{term})"),
            Msg::Append { term, log } => write!(f, "Append(t{term},{})", log_text(log)),
            Msg::Ack { term, len } => write!(f, "Ack(t{term},len={len})"),
        }
    }
}

/// The Raft core; `BUG` selects a planted bug (0: none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Raft<const BUG: u32>;

impl<const BUG: u32> Raft<BUG> {
    /// Persists `v.current`; its flush releases `then` to `dst` (nothing
    /// with `None`).
    fn persist(
        v: &mut Volatile,
        then: Option<(u32, Msg)>,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        out.persist_record(0, &v.current)?;
        match then {
            Some((dst, msg)) => v.after_flush.hold(dst, &msg),
            None => v.after_flush.hold_nothing(),
        }
    }

    /// Follows `term` (a higher one than its own, or its own as a candidate
    /// that lost), re-arming the election timer of a leader.
    fn become_follower(v: &mut Volatile, term: u32, out: &mut Outputs) -> Result<(), CoreError> {
        if term > v.current.term {
            v.current.term = term;
            v.current.voted_for = 0;
        }
        if v.role == role::LEADER {
            // Only a server that may stand becomes leader.
            out.set_timer(TIMER_ELECTION)?;
        }
        v.role = role::FOLLOWER;
        v.votes = 0;
        Ok(())
    }

    fn become_leader(
        config: &Config,
        v: &mut Volatile,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        v.role = role::LEADER;
        v.votes = 0;
        v.matched = [0; NODES_MAX];
        v.commit = 0;
        out.cancel_timer(TIMER_ELECTION)?;
        Self::replicate(config, v, out)
    }

    /// Persists the leader's log (its flush counts the leader's own copy)
    /// and sends it to every other server.
    fn replicate(config: &Config, v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let term = v.current.term;
        let own = Msg::Ack {
            term,
            len: v.current.len,
        };
        Self::persist(v, Some((config.node, own)), out)?;
        broadcast(
            config,
            out,
            &Msg::Append {
                term,
                log: v.current,
            },
        )
    }

    /// Commits what a majority holds (the last such entry of the current
    /// term, and everything before it) and replies OK for the requests
    /// this server appended.
    fn advance_commit(
        config: &Config,
        v: &mut Volatile,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let held_by = |len: u32| {
            v.matched[..config.nodes as usize]
                .iter()
                .filter(|matched| **matched >= len)
                .count() as u32
        };
        let committable = (v.commit + 1..=v.current.len).rev().find(|&len| {
            held_by(len) >= majority(config.nodes)
                && (BUG == 1 || v.current.entries[len as usize - 1].term == v.current.term)
        });
        let Some(commit) = committable else {
            return Ok(());
        };
        for at in v.commit as usize..commit as usize {
            let value = v.current.entries[at].value;
            if v.pending[at] == value && value != 0 {
                out.reply(value - 1, &[REPLY_OK, v.current.term as u8])?;
                v.pending[at] = 0;
            }
        }
        v.commit = commit;
        Ok(())
    }

    fn on_msg(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        msg: Msg,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let term = msg.term();
        if term < v.current.term {
            return Ok(());
        }
        let newer_term = term > v.current.term;
        if newer_term {
            Self::become_follower(v, term, out)?;
        }
        match msg {
            Msg::RequestVote { last_term, len, .. } => {
                let up_to_date = (last_term, len) >= (v.current.last_term(), v.current.len);
                let free = v.current.voted_for == 0 || v.current.voted_for == src + 1;
                if free && (up_to_date || BUG == 2) {
                    v.current.voted_for = src + 1;
                    Self::persist(v, Some((src, Msg::Vote { term })), out)?;
                } else if newer_term {
                    Self::persist(v, None, out)?;
                }
            }
            Msg::Vote { .. } if v.role == role::CANDIDATE => {
                v.votes |= 1 << src;
                if v.votes.count_ones() >= majority(config.nodes) {
                    Self::become_leader(config, v, out)?;
                }
            }
            Msg::Append { log, .. } if v.role != role::LEADER => {
                if v.role == role::CANDIDATE {
                    Self::become_follower(v, term, out)?;
                }
                Self::adopt(&mut v.current, &log);
                Self::persist(v, Some((src, Msg::Ack { term, len: log.len })), out)?;
            }
            Msg::Ack { len, .. } if v.role == role::LEADER => {
                let matched = &mut v.matched[src as usize];
                *matched = (*matched).max(len);
                Self::advance_commit(config, v, out)?;
            }
            _ if newer_term => Self::persist(v, None, out)?,
            _ => {}
        }
        Ok(())
    }

    /// Makes `mine` hold the leader's `log`: entries that conflict (same
    /// index, another term) are dropped with everything after them, the
    /// leader's entries are written, entries past them that match are kept.
    fn adopt(mine: &mut Durable, log: &Durable) {
        let conflict = (0..log.len.min(mine.len) as usize)
            .find(|&at| mine.entries[at].term != log.entries[at].term);
        if let Some(at) = conflict {
            mine.len = at as u32;
            mine.entries[at..].fill(Entry::default());
        }
        mine.entries[..log.len as usize].copy_from_slice(&log.entries[..log.len as usize]);
        mine.len = mine.len.max(log.len);
    }

    fn flushed(config: &Config, v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let Some(held) = v.after_flush.release() else {
            return Ok(());
        };
        if held.message().is_empty() {
            return Ok(());
        }
        let msg: Msg = decoded(held.message())?;
        if held.dst == config.node {
            // The server's own vote or copy: counted in the term it was for.
            if msg.term() == v.current.term {
                Self::on_msg(config, v, config.node, msg, out)?;
            }
            return Ok(());
        }
        send(out, held.dst, &msg)
    }
}

impl<const BUG: u32> TypedCore for Raft<BUG> {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "raft"
    }

    fn step(
        &self,
        config: &Config,
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if config.nodes as usize > NODES_MAX {
            return Err(CoreError::Code(ERROR_TOO_MANY_NODES));
        }
        let terms = match config.params[0] {
            0 => TERMS_DEFAULT,
            terms => terms as u32,
        };
        let may_stand = config.params[1] == 0 || config.params[1] & (1 << config.node) != 0;
        match event.kind() {
            Some(EventKind::Start) => {
                let voted_for = if BUG == 3 { 0 } else { d.voted_for };
                *v = Volatile {
                    current: Durable { voted_for, ..*d },
                    ..Volatile::default()
                };
                if may_stand {
                    out.set_timer(TIMER_ELECTION)?;
                }
            }
            Some(EventKind::Client) => {
                let Some(at) = append_at(v.role, v.current.len, LOG_MAX, &v.after_flush) else {
                    return out.reply(event.id, &[REPLY_REFUSED]);
                };
                v.current.entries[at] = Entry {
                    value: event.id + 1,
                    term: v.current.term,
                };
                v.current.len += 1;
                v.pending[at] = event.id + 1;
                Self::replicate(config, v, out)?;
            }
            Some(EventKind::Timer)
                if may_stand
                    && v.role != role::LEADER
                    && v.current.term < terms
                    && !v.after_flush.is_full() =>
            {
                v.role = role::CANDIDATE;
                v.current.term += 1;
                v.current.voted_for = config.node + 1;
                v.votes = 0;
                let term = v.current.term;
                Self::persist(v, Some((config.node, Msg::Vote { term })), out)?;
                broadcast(
                    config,
                    out,
                    &Msg::RequestVote {
                        term,
                        last_term: v.current.last_term(),
                        len: v.current.len,
                    },
                )?;
                out.set_timer(TIMER_ELECTION)?;
            }
            Some(EventKind::Recv) => {
                let msg = decoded(event.payload())?;
                if v.after_flush.is_full() {
                    // Too many writes outstanding: drop it, as a lossy network may.
                    return Ok(());
                }
                Self::on_msg(config, v, event.src, msg, out)?;
            }
            Some(EventKind::Flushed) => Self::flushed(config, v, out)?,
            _ => {}
        }
        Ok(())
    }

    fn describe_state(&self, _config: &Config, d: &Durable, v: &Volatile) -> Option<String> {
        let role = role_name(v.role, ["follower", "candidate", "leader"]);
        Some(format!(
            "{role} t{} voted={} log={} votes={:#x} matched={:?} commit={} | durable t{} voted={} log={}",
            v.current.term,
            v.current.voted_for,
            log_text(&v.current),
            v.votes,
            v.matched,
            v.commit,
            d.term,
            d.voted_for,
            log_text(d)
        ))
    }

    fn describe_message(&self, _config: &Config, message: &[u8]) -> Option<String> {
        helpers::describe_message::<Msg>(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(entries: &[(u32, u32)]) -> Durable {
        let mut log = Durable {
            len: entries.len() as u32,
            ..Durable::default()
        };
        for (at, &(value, term)) in entries.iter().enumerate() {
            log.entries[at] = Entry { value, term };
        }
        log
    }

    #[test]
    fn a_follower_drops_conflicting_entries_and_keeps_matching_ones() {
        // A conflict at index 0 (term 2 against term 1): everything goes.
        let mut mine = log(&[(2, 2), (3, 2)]);
        Raft::<0>::adopt(&mut mine, &log(&[(1, 1)]));
        assert_eq!(mine, log(&[(1, 1)]));
        // A shorter, older Append of the same leader: the longer log stays.
        let mut mine = log(&[(1, 1), (3, 3)]);
        Raft::<0>::adopt(&mut mine, &log(&[(1, 1)]));
        assert_eq!(mine, log(&[(1, 1), (3, 3)]));
        // A longer one extends it.
        let mut mine = log(&[(1, 1)]);
        Raft::<0>::adopt(&mut mine, &log(&[(1, 1), (3, 3)]));
        assert_eq!(mine, log(&[(1, 1), (3, 3)]));
    }

    #[test]
    fn messages_decode_to_what_was_encoded() {
        for msg in [
            Msg::RequestVote {
                term: 3,
                last_term: 1,
                len: 1,
            },
            Msg::Vote { term: 2 },
            Msg::Append {
                term: 4,
                log: Durable {
                    term: 4,
                    ..log(&[(1, 1), (2, 4)])
                },
            },
            Msg::Ack { term: 4, len: 2 },
        ] {
            assert_eq!(Msg::decode(msg.encode().as_bytes()), Some(msg));
        }
    }
}
