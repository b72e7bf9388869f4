//! What Raft must guarantee, read through the inspection path.
//!
//! - `ElectionSafety`: no two running servers are leaders of the same term.
//! - `LeaderCompleteness`: a request replied OK (committed by the leader of
//!   term `t`) is in the log of every running leader of a later term.

use std::sync::Arc;

use cmc_model::Property;
use cmc_world::system::state::{GhostKind, WorldState};
use cmc_world::{Core, World};

use crate::node_parts::{node_parts, Nodes};
use crate::variants::{bug_variant, variant_spec};

use super::{role, Durable, Raft, Volatile, REPLY_OK};

/// The core with planted bug `bug` (0: none), or `None` past [`super::BUGS`].
pub fn core(bug: u32) -> Option<Arc<dyn Core>> {
    bug_variant!(Raft, bug, [0, 1, 2, 3])
}

/// A World of `nodes` nodes running variant `bug`, with `params` applied,
/// the properties above and `VoteOnce` with its ghost variable (see
/// [`super::votes`]), as the catalog's registration equips it.
pub fn world(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String> {
    let mut spec = variant_spec("raft", bug, core(bug), nodes)?;
    spec.set_all(params)?;
    Ok(super::votes::with_vote_once(
        World::new(spec).with_properties(properties()),
    ))
}

fn nodes<'a>(world: &'a World, state: &'a WorldState) -> Nodes<'a, Durable, Volatile> {
    let nodes = world.inspect(state).nodes();
    node_parts(world, state, 0..nodes, "raft")
}

/// The running leaders' terms and logs.
fn leaders<'n>(nodes: &'n Nodes<'_, Durable, Volatile>) -> impl Iterator<Item = &'n Durable> {
    nodes
        .iter()
        .filter(|n| n.up && n.volatile.role == role::LEADER)
        .map(|n| &n.volatile.current)
}

fn election_safety(world: &World, state: &WorldState) -> bool {
    let nodes = nodes(world, state);
    let terms: Vec<u32> = leaders(&nodes).map(|log| log.term).collect();
    terms
        .iter()
        .enumerate()
        .all(|(at, term)| !terms[at + 1..].contains(term))
}

fn leader_completeness(world: &World, state: &WorldState) -> bool {
    let inspect = world.inspect(state);
    let nodes = nodes(world, state);
    inspect
        .ghost()
        .iter()
        .filter(|entry| entry.kind == GhostKind::Reply)
        .filter_map(|entry| match entry.payload.as_bytes() {
            [REPLY_OK, term] => Some((entry.request + 1, u32::from(*term))),
            _ => None,
        })
        .all(|(value, committed_in)| {
            leaders(&nodes)
                .filter(|log| log.term > committed_in)
                .all(|log| log.holds(value))
        })
}

/// `ElectionSafety` and `LeaderCompleteness`.
pub fn properties() -> Vec<Property<World>> {
    vec![
        Property::always("ElectionSafety", election_safety),
        Property::always("LeaderCompleteness", leader_completeness),
    ]
}
