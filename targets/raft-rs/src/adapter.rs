//! [`RaftAdapter`]: a raft-rs `RawNode` over `MemStorage` as a heap-state core.
//!
//! World events drive the `RawNode`: `RECV` is `step`, `TICK` is `tick`,
//! `CLIENT(r)` is `propose` of the one-byte entry `r`. After each event the
//! adapter handles the `Ready` with raft-rs's asynchronous contract:
//! `messages` go out at once; `entries` and `hs` are written to the
//! `MemStorage` and persisted as one `PERSIST` of the storage's image;
//! when the ready `must_sync`, its `persisted_messages` wait, and
//! `on_persist_ready` is called, only once the World has flushed that
//! persist (readies are released in order); committed entries answer the
//! requests the node holds.
//!
//! **Randomness.** raft-rs draws each election timeout from
//! `[min_election_tick, max_election_tick)`; the adapter sets
//! `max = min + 1`, so every draw is `min_election_tick`: the library still
//! calls its random generator, but what it draws is fixed.
//!
//! **View.** Term, vote, commit, role, leader and the storage's log (the
//! library's public fields), the persists and readies in flight, the
//! requests awaiting a reply, and a digest of the node's history since its
//! start (raft-rs keeps per-peer progress and vote tallies the view does
//! not spell out): the view is exact.

use std::collections::VecDeque;

use raft::eraftpb::{ConfState, Entry, HardState, Message};
use raft::storage::MemStorage;
use raft::{Config as RaftConfig, RawNode, StateRole, Storage};
use xxhash_rust::xxh3::xxh3_64;

use cmc_log_properties::client::Pending;
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::heap::HeapAdapter;

use crate::codec::{self, peer, ENTRY_SIZE};

/// Most entries the storage layout holds (index 1 to `LOG_MAX`).
pub const LOG_MAX: usize = 6;
/// Bytes of the storage image: term, vote, commit, length, entries.
pub const IMAGE_SIZE: usize = 4 + LOG_MAX * ENTRY_SIZE;

/// Where each part of the view starts.
pub mod view {
    use super::{Pending, IMAGE_SIZE};

    /// The storage image, as the library wrote it.
    pub const DISK: usize = 0;
    /// 1: the node leads.
    pub const LEADER: usize = DISK + IMAGE_SIZE;
    /// The leader the node knows (0: none).
    pub const LEADER_ID: usize = LEADER + 1;
    /// Persists not yet flushed.
    pub const UNFLUSHED: usize = LEADER_ID + 1;
    /// Client requests awaiting their reply, as a bit set.
    pub const PENDING: usize = UNFLUSHED + 1;
    /// The digest of the history since the node's start.
    pub const DIGEST: usize = PENDING + Pending::SIZE;
    /// Bytes of the view.
    pub const SIZE: usize = DIGEST + 8;
}

/// What waits for one persist's flush: the readies it covers (the last
/// ready's number, if any must be acknowledged) and their messages.
#[derive(Default)]
struct Waiting {
    ready: Option<u64>,
    messages: Vec<Message>,
}

/// A raft-rs node as the World drives it.
pub struct Peer {
    raw: RawNode<MemStorage>,
    unflushed: VecDeque<Waiting>,
    persisted: [u8; IMAGE_SIZE],
    pending: Pending,
    digest: u64,
}

/// raft-rs as a heap-state core.
#[derive(Clone, Copy, Debug, Default)]
pub struct RaftAdapter {
    /// The mistake of raft 0.5.0 (fixed in 0.6.0), planted in the adapter:
    /// a ready needs a sync only when its hard state's term or vote
    /// changed, not when it appends entries; its persisted messages then go
    /// out before the entries they acknowledge are durable.
    pub sync_ignores_entries: bool,
}

fn error(why: impl std::fmt::Display) -> CoreError {
    CoreError::Library(why.to_string())
}

/// The storage's entries from index `low` up to `high` (excluded).
fn entries(store: &MemStorage, low: u64, high: u64) -> Result<Vec<Entry>, CoreError> {
    if low >= high {
        return Ok(Vec::new());
    }
    store
        .entries(low, high, None, raft::GetEntriesContext::empty(false))
        .map_err(error)
}

/// The storage's image: hard state, then the log from index 1.
pub fn image(store: &MemStorage) -> Result<[u8; IMAGE_SIZE], CoreError> {
    let state = store.initial_state().map_err(error)?;
    let last = store.last_index().map_err(error)?;
    let entries = entries(store, 1, last + 1)?;
    if entries.len() > LOG_MAX {
        return Err(error(format!(
            "the adapter's storage layout holds {LOG_MAX} entries, not {}",
            entries.len()
        )));
    }
    let hs = &state.hard_state;
    let fit = |value: u64, what: &str| {
        u8::try_from(value).map_err(|_| error(format!("{what} {value} is over 255")))
    };
    let mut image = [0; IMAGE_SIZE];
    image[..4].copy_from_slice(&[
        fit(hs.term, "term")?,
        fit(hs.vote, "vote")?,
        fit(hs.commit, "commit")?,
        entries.len() as u8,
    ]);
    for (slot, entry) in image[4..].chunks_mut(ENTRY_SIZE).zip(&entries) {
        slot.copy_from_slice(&codec::encode_entry(entry).map_err(error)?);
    }
    Ok(image)
}

/// The hard state and log an image holds.
pub fn from_image(image: &[u8]) -> (HardState, Vec<Entry>) {
    let hs = HardState {
        term: u64::from(image[0]),
        vote: u64::from(image[1]),
        commit: u64::from(image[2]),
        ..Default::default()
    };
    let length = usize::from(image[3]).min(LOG_MAX);
    let entries = image[4..]
        .chunks(ENTRY_SIZE)
        .take(length)
        .enumerate()
        .map(|(offset, bytes)| codec::decode_entry(bytes, offset as u64 + 1))
        .collect();
    (hs, entries)
}

impl RaftAdapter {
    fn send(messages: Vec<Message>, out: &mut Outputs) -> Result<(), CoreError> {
        for message in messages {
            let bytes = codec::encode(&message)
                .map_err(|why| error(format!("the adapter cannot encode a message: {why}")))?;
            out.send((message.to - 1) as u32, &bytes)?;
        }
        Ok(())
    }

    /// Replies to the requests `committed` decides, with their place among
    /// the log's client entries.
    fn answer(node: &mut Peer, committed: &[Entry], out: &mut Outputs) -> Result<(), CoreError> {
        for entry in committed {
            let Some(request) = codec::request_of(entry).map(u32::from) else {
                continue;
            };
            if !node.pending.awaits(request) {
                continue;
            }
            let before = entries(node.raw.store(), 1, entry.index)?;
            let place = before
                .iter()
                .filter(|e| codec::request_of(e).is_some())
                .count();
            node.pending.answer(out, request, place)?;
        }
        Ok(())
    }

    /// Handles every ready the node has.
    fn handle_readies(&self, node: &mut Peer, out: &mut Outputs) -> Result<(), CoreError> {
        while node.raw.has_ready() {
            let mut ready = node.raw.ready();
            Self::send(ready.take_messages(), out)?;
            if !ready.snapshot().is_empty() {
                return Err(error("a snapshot (outside the checked configurations)"));
            }
            let committed = ready.take_committed_entries();
            let old_term_vote = {
                let hs = node.raw.store().initial_state().map_err(error)?.hard_state;
                (hs.term, hs.vote)
            };
            let sync = match (self.sync_ignores_entries, ready.hs()) {
                (false, _) => ready.must_sync(),
                (true, Some(hs)) => (hs.term, hs.vote) != old_term_vote,
                (true, None) => false,
            };
            {
                let store = node.raw.mut_store();
                store.wl().append(ready.entries()).map_err(error)?;
                if let Some(hs) = ready.hs() {
                    store.wl().set_hardstate(hs.clone());
                }
            }
            let persisted = ready.take_persisted_messages();
            let number = ready.number();
            node.raw.advance_append_async(ready);
            let image = image(node.raw.store())?;
            if image != node.persisted {
                out.persist(0, &image)?;
                node.persisted = image;
                node.unflushed.push_back(Waiting::default());
            }
            match node.unflushed.back_mut() {
                Some(waiting) if sync || waiting.ready.is_some() => {
                    waiting.ready = Some(number);
                    waiting.messages.extend(persisted);
                }
                _ => {
                    node.raw.on_persist_ready(number);
                    Self::send(persisted, out)?;
                }
            }
            Self::answer(node, &committed, out)?;
            node.raw.advance_apply();
        }
        Ok(())
    }
}

impl HeapAdapter for RaftAdapter {
    type Node = Peer;

    fn name(&self) -> &str {
        if self.sync_ignores_entries {
            "raft-rs-0.7.0-sync-ignores-entries"
        } else {
            "raft-rs-0.7.0"
        }
    }

    fn durable_size(&self) -> usize {
        IMAGE_SIZE
    }

    fn view_size(&self) -> usize {
        view::SIZE
    }

    fn needs_memory_guards(&self) -> bool {
        false
    }

    fn start(&self, config: &Config, durable: &[u8], out: &mut Outputs) -> Result<Peer, CoreError> {
        let voters: Vec<u64> = (0..config.nodes).map(peer).collect();
        let store = MemStorage::new_with_conf_state(ConfState::from((voters, vec![])));
        let (hs, entries) = from_image(durable);
        store.wl().append(&entries).map_err(error)?;
        store.wl().set_hardstate(hs);
        let raft_config = RaftConfig {
            id: peer(config.node),
            election_tick: 2,
            heartbeat_tick: 1,
            min_election_tick: 2,
            max_election_tick: 3,
            ..Default::default()
        };
        let logger = slog::Logger::root(slog::Discard, slog::o!());
        let raw = RawNode::new(&raft_config, store, &logger).map_err(error)?;
        let mut node = Peer {
            raw,
            unflushed: VecDeque::new(),
            persisted: durable.try_into().map_err(error)?,
            pending: Pending::default(),
            digest: xxh3_64(durable),
        };
        self.handle_readies(&mut node, out)?;
        Ok(node)
    }

    fn step(
        &self,
        node: &mut Peer,
        config: &Config,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Recv) => {
                let message = codec::decode(event.payload(), peer(event.src), peer(config.node))
                    .map_err(|why| error(format!("undecodable message: {why}")))?;
                // A message raft-rs refuses (e.g. from an unknown peer) is dropped, as a network would.
                let _ = node.raw.step(message);
            }
            Some(EventKind::Tick) => {
                node.raw.tick();
            }
            Some(EventKind::Client) => {
                let request = node.pending.take(event.id)?;
                // A proposal raft-rs drops (no leader known) is never answered.
                let _ = node.raw.propose(vec![], vec![request]);
            }
            Some(EventKind::Flushed) => {
                if let Some(waiting) = node.unflushed.pop_front() {
                    if let Some(number) = waiting.ready {
                        node.raw.on_persist_ready(number);
                    }
                    Self::send(waiting.messages, out)?;
                }
            }
            _ => return Ok(()),
        }
        node.digest = cmc_world::heap::fold_event(node.digest, event);
        self.handle_readies(node, out)
    }

    fn view(&self, node: &Peer, _config: &Config, view: &mut [u8]) -> Result<(), CoreError> {
        view[view::DISK..view::LEADER].copy_from_slice(&image(node.raw.store())?);
        view[view::LEADER] = u8::from(node.raw.raft.state == StateRole::Leader);
        view[view::LEADER_ID] = node.raw.raft.leader_id as u8;
        view[view::UNFLUSHED] = node.unflushed.len() as u8;
        view[view::PENDING..view::DIGEST].copy_from_slice(&node.pending.to_le_bytes());
        view[view::DIGEST..view::SIZE].copy_from_slice(&node.digest.to_le_bytes());
        Ok(())
    }

    fn describe_state(&self, _config: &Config, durable: &[u8], view: &[u8]) -> Option<String> {
        let describe = |image: &[u8]| {
            let (hs, entries) = from_image(image);
            let log: Vec<String> = entries
                .iter()
                .map(|e| match codec::request_of(e) {
                    Some(r) => format!("{}:r{r}", e.term),
                    None => format!("{}:-", e.term),
                })
                .collect();
            format!(
                "term {} vote {} commit {} log [{}]",
                hs.term,
                hs.vote,
                hs.commit,
                log.join(" ")
            )
        };
        Some(format!(
            "{}{} | leader {} | unflushed {} | durable: {}",
            describe(&view[view::DISK..view::LEADER]),
            if view[view::LEADER] == 1 {
                " LEADER"
            } else {
                ""
            },
            view[view::LEADER_ID],
            view[view::UNFLUSHED],
            describe(durable)
        ))
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        let m = codec::decode(message, 0, peer(config.node)).ok()?;
        Some(format!(
            "{:?} term {} log_term {} index {} commit {} reject {} entries {}",
            m.msg_type,
            m.term,
            m.log_term,
            m.index,
            m.commit,
            m.reject,
            m.entries.len()
        ))
    }
}
