//! `VoteOnce`: a server never grants its vote to two candidates in one
//! term, remembered across the crashes that may erase a vote. A property
//! of one state cannot say it: a server that forgets its persisted vote
//! (planted bug 3) holds, after its crash, nothing of the vote it gave.
//! The ghost variable `Votes` keeps, per server, the last vote it made
//! durable (term and candidate); the property compares each server's
//! durable vote with it.

use cmc_model::Property;
use cmc_world::system::ghosts::GhostVar;
use cmc_world::system::state::WorldState;
use cmc_world::World;

use super::Durable;

/// The ghost variable's name.
pub const VOTES: &str = "Votes";

/// The property's name (the ghost variable's only reader).
pub const VOTE_ONCE: &str = "VoteOnce";

/// Bytes per server in `Votes`: the term (`u32`, little-endian), then the
/// candidate + 1 (0: no vote seen yet).
const RECORD: usize = 5;

/// The durable part of node `node` of `state`.
fn durable(world: &World, state: &WorldState, node: usize) -> Durable {
    world
        .inspect(state)
        .node(node)
        .durable_as()
        .expect("every node runs raft")
}

/// One server's record in `Votes`: (term, candidate + 1).
fn record(bytes: &[u8]) -> (u32, u8) {
    let term = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
    (term, bytes[4])
}

/// `Votes`: per server, the term and candidate of the last vote its
/// durable state showed, a vote of a later term replacing it and a second
/// vote of the same term leaving it alone.
pub fn votes_ghost(nodes: usize) -> GhostVar {
    GhostVar::new(
        VOTES,
        vec![0; nodes * RECORD],
        |world, _, _, post, bytes| {
            for (node, slot) in bytes.chunks_exact_mut(RECORD).enumerate() {
                let now = durable(world, post, node);
                let (term, _) = record(slot);
                if now.voted_for != 0 && (term < now.term || slot[4] == 0) {
                    slot[..4].copy_from_slice(&now.term.to_le_bytes());
                    slot[4] = now.voted_for as u8;
                }
            }
        },
    )
    .expect("a server's record is 5 bytes, at most 5 servers")
    .read_by([VOTE_ONCE])
    .describe_with(|_, bytes| {
        let servers: Vec<String> = bytes
            .chunks_exact(RECORD)
            .enumerate()
            .map(|(node, slot)| match record(slot) {
                (_, 0) => format!("n{node}: none"),
                (term, candidate) => format!("n{node}: t{term}->n{}", candidate - 1),
            })
            .collect();
        format!("[{}]", servers.join(", "))
    })
}

/// Whether every server's durable vote is the first one it made durable
/// in its term (as `Votes` remembers it).
fn vote_once(world: &World, state: &WorldState) -> bool {
    let votes = world
        .inspect(state)
        .ghost_var(VOTES)
        .expect("VoteOnce needs the Votes ghost variable");
    votes.chunks_exact(RECORD).enumerate().all(|(node, slot)| {
        let now = durable(world, state, node);
        let (term, candidate) = record(slot);
        now.voted_for == 0 || term != now.term || u32::from(candidate) == now.voted_for
    })
}

/// A World of raft nodes with `Votes` and `VoteOnce` (what the catalog's
/// registration equips every raft World with).
pub fn with_vote_once(world: World) -> World {
    let nodes = world.spec().nodes();
    world
        .with_ghost(votes_ghost(nodes))
        .expect("raft does not support symmetry reduction, which ghost variables refuse")
        .with_property(Property::always(VOTE_ONCE, vote_once))
}
