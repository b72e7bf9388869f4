//! A primary-backup replicated log with view change, in Rust.
//!
//! `n` nodes replicate a log of at most [`LOG_MAX`] entries. Node 0 is the
//! primary of view 0. A client request to the primary appends an entry (the
//! request id + 1) and persists the log; once that persist is flushed, the
//! primary counts its own copy and sends the log to every node in an Append.
//! A backup adopts the primary's log for that view if it is longer than its
//! own (Appends may arrive out of order), persists it and acks once flushed.
//! The primary replies OK only when its own copy and a majority hold the entry
//! durably.
//!
//! Why the primary sends only what it holds durably: node 0 restarts as the
//! primary of view 0 from its durable log. Had it sent a log it then lost in
//! the crash, a backup could hold (and ack) a different log of the same view
//! and length than the one the restarted primary writes, and an Ack names a
//! log only by its view and length. Sent after the flush, every log of a view
//! extends one sequence, so a longer log of the same view is the newer one.
//!
//! View change: a backup whose timer fires (the primary's lease ran out, as
//! far as it can tell) becomes candidate of the next view (at most `cfg0`,
//! default 2): it durably moves to that view, then asks every node to join.
//! A node that joins a higher view durably records it (its vote: it never
//! acts in a lower view again) and answers with its log once flushed. With a
//! majority of votes the candidate becomes primary: it adopts the most recent
//! log among them (by the view it was written in, then length), rewrites it in
//! its view and replicates it. A restarted node comes back as a backup of its
//! durable view (node 0 as primary, in view 0).
//!
//! Planted bugs, selected by the const parameter `BUG` (0: none):
//! 1. a backup acks before its log is flushed;
//! 2. the commit quorum is off by one (`n / 2`: the primary alone);
//! 3. the election quorum is off by one (a candidate elects itself);
//! 4. a new primary keeps its own log instead of the most recent one it was sent.

mod properties;

use bytemuck::{Pod, Zeroable};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::core::helpers::{self, send, Message};
use cmc_world::TypedCore;

use crate::leader::{append_at, broadcast, role_name, AfterFlushed};
use crate::quorum::{majority, quorum};
use crate::wire::{decoded, words, Words};

pub use crate::leader::role;
pub use crate::wire::{REPLY_OK, REPLY_REFUSED};
pub use properties::{core, properties, world};

/// Entries the log holds.
pub const LOG_MAX: usize = 2;
/// Views when `cfg0` is 0.
pub const VIEWS_DEFAULT: u32 = 2;
/// Planted bugs, numbered `1..=BUGS`.
pub const BUGS: u32 = 4;
/// The primary-suspected timer of backups.
pub const TIMER_SUSPECT: u32 = 0;

/// A log: the view it was written in, its length and its entries. It is also
/// the durable record (written whole by each persist), with `view`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// The highest view joined (voted for).
    pub view: u32,
    /// The view the log was last written in.
    pub log_view: u32,
    /// Entries in use.
    pub len: u32,
    /// Entries: request id + 1.
    pub entries: [u32; LOG_MAX],
}

impl Durable {
    /// Whether the log holds entry `value`.
    pub fn holds(&self, value: u32) -> bool {
        self.entries[..self.len as usize].contains(&value)
    }
}

/// The volatile part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// One of [`role`]: the primary of a view is its leader, a backup
    /// follows it.
    pub role: u32,
    /// The node's view and log as it stands (possibly not yet flushed).
    pub current: Durable,
    /// Candidate: bit per node whose vote arrived.
    pub votes: u32,
    /// Candidate: the most recent log among the votes.
    pub best: Durable,
    /// Primary: bit per node holding entry `i` durably.
    pub acks: [u32; LOG_MAX],
    /// Primary: request id + 1 of entry `i` (0: appended in an earlier view).
    pub requests: [u32; LOG_MAX],
    /// Primary: entries committed (replied).
    pub committed: u32,
    /// Per outstanding persist, the message its flush releases: for the
    /// persisted log, the primary's Append (to this node, which counts it and
    /// sends it on), a backup's Ack or a Vote (to another node, or this
    /// candidate's own).
    pub after_flush: AfterFlushed,
}

/// A message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Primary: the log of `view`.
    Append { view: u32, log: Durable },
    /// Backup: holds the first `len` entries of `view`'s log durably.
    Ack { view: u32, len: u32 },
    /// Candidate: join `view`.
    StartView { view: u32 },
    /// Joined `view`; the voter's log.
    Vote { view: u32, log: Durable },
}

impl Msg {
    /// The view the message belongs to.
    fn view(&self) -> u32 {
        match *self {
            Msg::Append { view, .. }
            | Msg::Ack { view, .. }
            | Msg::StartView { view }
            | Msg::Vote { view, .. } => view,
        }
    }
}

impl Message for Msg {
    type Encoded = Words;

    fn encode(&self) -> Words {
        let log = |tag, view, l: &Durable| {
            Words::new(&[tag, view, l.log_view, l.len, l.entries[0], l.entries[1]])
        };
        match self {
            Msg::Append { view, log: l } => log(1, *view, l),
            Msg::Ack { view, len } => Words::new(&[2, *view, *len]),
            Msg::StartView { view } => Words::new(&[3, *view]),
            Msg::Vote { view, log: l } => log(4, *view, l),
        }
    }

    fn decode(bytes: &[u8]) -> Option<Msg> {
        let log = |w: [u32; 6]| Durable {
            view: w[1],
            log_view: w[2],
            len: w[3].min(LOG_MAX as u32),
            entries: [w[4], w[5]],
        };
        Some(match (words::<1>(bytes)?[0], bytes.len() / 4) {
            (1, 6) => {
                let w = words::<6>(bytes)?;
                Msg::Append {
                    view: w[1],
                    log: log(w),
                }
            }
            (2, 3) => {
                let w = words::<3>(bytes)?;
                Msg::Ack {
                    view: w[1],
                    len: w[2],
                }
            }
            (3, 2) => Msg::StartView {
                view: words::<2>(bytes)?[1],
            },
            (4, 6) => {
                let w = words::<6>(bytes)?;
                Msg::Vote {
                    view: w[1],
                    log: log(w),
                }
            }
            _ => return None,
        })
    }
}

impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let log = |l: &Durable| format!("{:?}@v{}", &l.entries[..l.len as usize], l.log_view);
        match self {
            Msg::Append { view, log: l } => write!(f, "Append(v{view},{})", log(l)),
            Msg::Ack { view, len } => write!(f, "Ack(v{view},len={len})"),
            Msg::StartView { view } => write!(f, "StartView(v{view})"),
            Msg::Vote { view, log: l } => write!(f, "Vote(v{view},{})", log(l)),
        }
    }
}

/// The primary-backup core; `BUG` selects a planted bug (0: none).
#[derive(Clone, Copy, Debug, Default)]
pub struct PrimaryBackup<const BUG: u32>;

/// The primary's log as persisted, for the backups of its view.
fn append_of(log: &Durable) -> Msg {
    Msg::Append {
        view: log.view,
        log: *log,
    }
}

/// The Ack of `log` as persisted, to the primary of its view.
fn ack_of(log: &Durable) -> Msg {
    Msg::Ack {
        view: log.view,
        len: log.len,
    }
}

/// The vote (with the log as persisted) for the candidate of its view.
fn vote_of(log: &Durable) -> Msg {
    Msg::Vote {
        view: log.view,
        log: *log,
    }
}

/// Forgets the votes of an election (when one starts or ends).
fn clear_votes(v: &mut Volatile) {
    v.votes = 0;
    v.best = Durable::default();
}

/// Whether log `a` is more recent than log `b`.
fn newer(a: &Durable, b: &Durable) -> bool {
    (a.log_view, a.len) > (b.log_view, b.len)
}

impl<const BUG: u32> PrimaryBackup<BUG> {
    /// Persists `v.current`; its flush releases `then(v.current)` to `dst`.
    fn persist(
        v: &mut Volatile,
        then: fn(&Durable) -> Msg,
        dst: u32,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        out.persist_record(0, &v.current)?;
        v.after_flush.hold(dst, &then(&v.current))
    }

    fn become_backup(v: &mut Volatile, view: u32, out: &mut Outputs) -> Result<(), CoreError> {
        let stepped_down = v.role != role::FOLLOWER;
        v.role = role::FOLLOWER;
        v.current.view = view;
        clear_votes(v);
        v.acks = [0; LOG_MAX];
        v.requests = [0; LOG_MAX];
        v.committed = 0;
        if stepped_down {
            out.set_timer(TIMER_SUSPECT)?;
        }
        Ok(())
    }

    /// Replies OK for every entry that a quorum, this node included, holds durably.
    fn commit(config: &Config, v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let needed = quorum(config.nodes, BUG == 2);
        while (v.committed as usize) < v.current.len as usize
            && v.acks[v.committed as usize] & (1 << config.node) != 0
            && v.acks[v.committed as usize].count_ones() >= needed
        {
            let request = v.requests[v.committed as usize];
            if request != 0 {
                out.reply(request - 1, &[REPLY_OK])?;
            }
            v.committed += 1;
        }
        Ok(())
    }

    fn ack(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        len: u32,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        for acks in v.acks.iter_mut().take(len as usize) {
            *acks |= 1 << src;
        }
        Self::commit(config, v, out)
    }

    fn vote(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        log: Durable,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        v.votes |= 1 << src;
        if newer(&log, &v.best) {
            v.best = log;
        }
        let quorum = if BUG == 3 { 1 } else { majority(config.nodes) };
        if v.votes.count_ones() < quorum {
            return Ok(());
        }
        let view = v.current.view;
        if BUG != 4 {
            v.current.len = v.best.len;
            v.current.entries = v.best.entries;
        }
        v.current.log_view = view;
        v.role = role::LEADER;
        clear_votes(v);
        Self::replicate(v, config.node, out)
    }

    /// Persists the primary's log; its flush releases the Append of it to
    /// this node (see [`Self::flushed`]).
    fn replicate(v: &mut Volatile, node: u32, out: &mut Outputs) -> Result<(), CoreError> {
        Self::persist(v, append_of, node, out)
    }

    fn on_msg(
        config: &Config,
        v: &mut Volatile,
        src: u32,
        msg: Msg,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match msg {
            // A candidate that lost its view follows the primary that won it.
            Msg::Append { view, log }
                if view > v.current.view
                    || (view == v.current.view
                        && v.role != role::LEADER
                        && newer(&log, &v.current)) =>
            {
                if view > v.current.view {
                    Self::become_backup(v, view, out)?;
                }
                v.current = Durable { view, ..log };
                Self::persist(v, ack_of, src, out)?;
                if BUG == 1 {
                    send(out, src, &Msg::Ack { view, len: log.len })?;
                }
            }
            Msg::Ack { view, len } if view == v.current.view && v.role == role::LEADER => {
                Self::ack(config, v, src, len, out)?;
            }
            Msg::StartView { view } if view > v.current.view => {
                Self::become_backup(v, view, out)?;
                Self::persist(v, vote_of, src, out)?;
            }
            Msg::Vote { view, log } if view == v.current.view && v.role == role::CANDIDATE => {
                Self::vote(config, v, src, log, out)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn flushed(config: &Config, v: &mut Volatile, out: &mut Outputs) -> Result<(), CoreError> {
        let Some(held) = v.after_flush.release() else {
            return Ok(());
        };
        let msg: Msg = decoded(held.message())?;
        // What a flush confirms only counts in the view it was written for.
        if msg.view() != v.current.view {
            return Ok(());
        }
        match msg {
            // The primary's own copy is durable: it counts as an Ack from
            // itself, and only now goes to the backups.
            Msg::Append { log, .. } if held.dst == config.node => {
                Self::on_msg(config, v, config.node, ack_of(&log), out)?;
                broadcast(config, out, &msg)
            }
            // The node's own vote counts as one more from itself.
            _ if held.dst == config.node => Self::on_msg(config, v, config.node, msg, out),
            // Bug 1 sent this Ack before the flush.
            Msg::Ack { .. } if BUG == 1 => Ok(()),
            _ => send(out, held.dst, &msg),
        }
    }
}

impl<const BUG: u32> TypedCore for PrimaryBackup<BUG> {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "primary_backup"
    }

    fn step(
        &self,
        config: &Config,
        d: &Durable,
        v: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let views = match config.params[0] {
            0 => VIEWS_DEFAULT,
            views => views as u32,
        };
        match event.kind() {
            Some(EventKind::Start) => {
                *v = Volatile {
                    current: *d,
                    ..Volatile::default()
                };
                if d.view == 0 && config.node == 0 {
                    v.role = role::LEADER;
                    v.acks = [1; LOG_MAX];
                    v.committed = d.len;
                } else {
                    out.set_timer(TIMER_SUSPECT)?;
                }
            }
            Some(EventKind::Client) => {
                let Some(at) = append_at(v.role, v.current.len, LOG_MAX, &v.after_flush) else {
                    return out.reply(event.id, &[REPLY_REFUSED]);
                };
                v.current.entries[at] = event.id + 1;
                v.current.len += 1;
                v.current.log_view = v.current.view;
                v.requests[at] = event.id + 1;
                v.acks[at] = 0;
                Self::replicate(v, config.node, out)?;
            }
            Some(EventKind::Timer) if v.role == role::FOLLOWER && v.current.view + 1 < views => {
                v.role = role::CANDIDATE;
                v.current.view += 1;
                clear_votes(v);
                Self::persist(v, vote_of, config.node, out)?;
                broadcast(
                    config,
                    out,
                    &Msg::StartView {
                        view: v.current.view,
                    },
                )?;
            }
            Some(EventKind::Recv) => {
                let msg = decoded(event.payload())?;
                Self::on_msg(config, v, event.src, msg, out)?;
            }
            Some(EventKind::Flushed) => Self::flushed(config, v, out)?,
            _ => {}
        }
        Ok(())
    }

    fn describe_state(&self, _config: &Config, d: &Durable, v: &Volatile) -> Option<String> {
        let role = role_name(v.role, ["backup", "candidate", "primary"]);
        let log = |l: &Durable| format!("{:?}@v{}", &l.entries[..l.len as usize], l.log_view);
        Some(format!(
            "{role} v{} log={} votes={:#x} acks={:?} committed={} | durable v{} log={}",
            v.current.view,
            log(&v.current),
            v.votes,
            v.acks,
            v.committed,
            d.view,
            log(d)
        ))
    }

    fn describe_message(&self, _config: &Config, message: &[u8]) -> Option<String> {
        helpers::describe_message::<Msg>(message)
    }
}
