//! [`OmniPaxosAdapter`]: an omnipaxos server as a heap-state core.
//!
//! World events drive the library's sans-IO API: `START` builds the server
//! from its flushed storage (`OmniPaxosConfig::build`), `RECV` is
//! `handle_incoming`, `TICK` is `tick`, `CLIENT(r)` is `append(r)`.
//!
//! **Persistence.** omnipaxos's `Storage` contract is synchronous: a write
//! is durable when the call returns, and the library acts on it at once
//! (sends a promise, an acceptance). After each step the adapter persists
//! the storage's image as one `PERSIST` when it changed, and releases the
//! library's outgoing messages (`outgoing_messages`) and its clients'
//! replies only once the World has flushed every persist: nothing another
//! node or a client sees depends on a write a crash can still lose, and a
//! crash loses exactly the steps whose writes were not flushed. The
//! storage calls of one step are written together, so a crash between two
//! calls of one handler is not explored.
//!
//! **Clients.** `CLIENT(r)` appends the value `r` at the node it reaches
//! (a follower forwards it to its leader); the node replies one byte, the
//! index, once it has decided an entry with value `r`.
//!
//! **View.** The storage as the library holds it, the leader it follows
//! (`get_current_leader_ballot`), the persists awaiting their flush, the
//! requests awaiting their reply, and a digest of the node's history since
//! its start (its root storage and every event the library was given).
//! omnipaxos exposes little of its volatile state (heartbeat rounds,
//! promises collected, sequence numbers), so the digest keeps apart any
//! two histories that could behave differently: the view is exact, and
//! states merge across the interleavings of different nodes. The one event
//! the digest leaves out is an answered heartbeat request, which changes
//! nothing in the server (see [`is_heartbeat_request`]).

use std::cell::RefCell;
use std::rc::Rc;

use omnipaxos::util::NodeId;
use omnipaxos::{ClusterConfig, OmniPaxos, OmniPaxosConfig, ServerConfig};
use xxhash_rust::xxh3::xxh3_64;

use cmc_log_properties::client::Pending;
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::heap::HeapAdapter;

use crate::codec::{self, server};
use crate::storage::{
    decode_ballot, encode_ballot, Disk, SharedDisk, Value, BALLOT_SIZE, IMAGE_SIZE,
};

/// Where each part of the view starts.
pub mod view {
    use super::{Pending, BALLOT_SIZE, IMAGE_SIZE};

    /// The storage image, as the library holds it.
    pub const DISK: usize = 0;
    /// The ballot of the leader the node follows (zero: none).
    pub const LEADER: usize = DISK + IMAGE_SIZE;
    /// Persists not yet flushed.
    pub const UNFLUSHED: usize = LEADER + BALLOT_SIZE;
    /// Client requests awaiting their reply, as a bit set.
    pub const PENDING: usize = UNFLUSHED + 1;
    /// The digest of the history since the node's start.
    pub const DIGEST: usize = PENDING + Pending::SIZE;
    /// Bytes of the view.
    pub const SIZE: usize = DIGEST + 8;
}

/// The id all checked clusters share.
const CONFIGURATION_ID: u32 = 1;

/// An omnipaxos server as the World drives it.
pub struct Server {
    paxos: OmniPaxos<Value, SharedDisk>,
    disk: Rc<RefCell<Disk>>,
    /// The image last persisted (or read at the start).
    persisted: [u8; IMAGE_SIZE],
    unflushed: u8,
    pending: Pending,
    digest: u64,
}

/// omnipaxos as a heap-state core; `CFG0` is the ticks between resends of
/// unanswered messages (0: never).
#[derive(Clone, Copy, Debug, Default)]
pub struct OmniPaxosAdapter;

fn library_error(why: impl std::fmt::Display) -> CoreError {
    CoreError::Library(why.to_string())
}

impl OmniPaxosAdapter {
    /// After the library ran: persist a changed storage; once nothing is
    /// awaiting its flush, send what the library has to send and answer the
    /// requests it has decided.
    fn settle(&self, node: &mut Server, out: &mut Outputs) -> Result<(), CoreError> {
        let image = node.disk.borrow().image();
        if image != node.persisted {
            out.persist(0, &image)?;
            node.persisted = image;
            node.unflushed += 1;
        }
        if node.unflushed > 0 {
            return Ok(());
        }
        for message in node.paxos.outgoing_messages() {
            let bytes = codec::encode(&message).map_err(|why| {
                library_error(format!("the adapter cannot encode a message: {why}"))
            })?;
            out.send(codec::node(message.get_receiver()), &bytes)?;
        }
        let disk = node.disk.borrow();
        let decided = &disk.log[..(disk.decided_idx as usize).min(disk.log.len())];
        for request in node.pending.requests() {
            if let Some(index) = decided
                .iter()
                .position(|value| u32::from(value.0) == request)
            {
                node.pending.answer(out, request, index)?;
            }
        }
        Ok(())
    }
}

impl HeapAdapter for OmniPaxosAdapter {
    type Node = Server;

    fn name(&self) -> &str {
        if cfg!(feature = "release-0-2-0") {
            "omnipaxos-0.2.0"
        } else {
            "omnipaxos-0.2.1"
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

    fn start(
        &self,
        config: &Config,
        durable: &[u8],
        out: &mut Outputs,
    ) -> Result<Server, CoreError> {
        let disk = Rc::new(RefCell::new(Disk::from_image(durable)));
        let resend = match config.params[0] {
            0 => u64::MAX,
            ticks => ticks,
        };
        let cluster = ClusterConfig {
            configuration_id: CONFIGURATION_ID,
            nodes: (0..config.nodes).map(server).collect::<Vec<NodeId>>(),
            ..Default::default()
        };
        let server_config = ServerConfig {
            pid: server(config.node),
            election_tick_timeout: 1,
            resend_message_tick_timeout: resend,
            ..Default::default()
        };
        let paxos = OmniPaxosConfig {
            cluster_config: cluster,
            server_config,
        }
        .build(SharedDisk(disk.clone()))
        .map_err(library_error)?;
        let mut node = Server {
            paxos,
            disk,
            persisted: durable.try_into().expect("the durable part is an image"),
            unflushed: 0,
            pending: Pending::default(),
            digest: xxh3_64(durable),
        };
        self.settle(&mut node, out)?;
        Ok(node)
    }

    fn step(
        &self,
        node: &mut Server,
        config: &Config,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Recv) => {
                let message =
                    codec::decode(event.payload(), server(event.src), server(config.node))
                        .map_err(|why| library_error(format!("undecodable message: {why}")))?;
                node.paxos.handle_incoming(message);
            }
            Some(EventKind::Tick) => node.paxos.tick(),
            Some(EventKind::Client) => {
                let value = node.pending.take(event.id)?;
                // A refused append (a stopped configuration) is never replied to.
                let _ = node.paxos.append(Value(value));
            }
            Some(EventKind::Flushed) => node.unflushed = node.unflushed.saturating_sub(1),
            _ => return Ok(()),
        }
        self.settle(node, out)?;
        if !(node.unflushed == 0 && is_heartbeat_request(event)) {
            node.digest = cmc_world::heap::fold_event(node.digest, event);
        }
        Ok(())
    }

    fn view(&self, node: &Server, _config: &Config, view: &mut [u8]) -> Result<(), CoreError> {
        view[view::DISK..view::LEADER].copy_from_slice(&node.disk.borrow().image());
        view[view::LEADER..view::UNFLUSHED]
            .copy_from_slice(&encode_ballot(node.paxos.get_current_leader_ballot()));
        view[view::UNFLUSHED] = node.unflushed;
        view[view::PENDING..view::DIGEST].copy_from_slice(&node.pending.to_le_bytes());
        view[view::DIGEST..view::SIZE].copy_from_slice(&node.digest.to_le_bytes());
        Ok(())
    }

    fn describe_state(&self, _config: &Config, durable: &[u8], view: &[u8]) -> Option<String> {
        let disk = Disk::from_image(&view[view::DISK..view::LEADER]);
        let flushed = Disk::from_image(durable);
        let leader = decode_ballot(&view[view::LEADER..view::UNFLUSHED]);
        Some(format!(
            "{} | leader {} | unflushed {} | pending {:#x} | durable: {}",
            describe_disk(&disk),
            leader.map_or("none".into(), |b| format!("{}.{}", b.n, b.pid)),
            view[view::UNFLUSHED],
            u32::from_le_bytes(view[view::PENDING..view::DIGEST].try_into().ok()?),
            describe_disk(&flushed),
        ))
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        let decoded = codec::decode(message, 0, server(config.node)).ok()?;
        Some(match decoded {
            omnipaxos::messages::Message::SequencePaxos(m) => format!("{:?}", m.msg),
            omnipaxos::messages::Message::BLE(m) => format!("{:?}", m.msg),
        })
    }
}

/// Whether `event` brings a heartbeat request. omnipaxos answers one with
/// its current ballot and changes nothing else, so once the answer is sent
/// the server is as before: the digest leaves such an event out, and
/// histories that differ only by them are one state (checked like every
/// view, by replaying both under `--check-determinism`).
fn is_heartbeat_request(event: &Event) -> bool {
    event.kind() == Some(EventKind::Recv)
        && event.payload().first() == Some(&codec::tag::HB_REQUEST)
}

fn describe_disk(disk: &Disk) -> String {
    let ballot = |b: Option<omnipaxos::ballot_leader_election::Ballot>| {
        b.map_or("-".into(), |b| format!("{}.{}", b.n, b.pid))
    };
    let log: Vec<u8> = disk.log.iter().map(|value| value.0).collect();
    format!(
        "promise {} accepted {} log {:?} decided {}",
        ballot(disk.promise),
        ballot(disk.accepted_round),
        log,
        disk.decided_idx
    )
}
