//! What the primary-backup log must guarantee, read through the inspection path.
//!
//! - `ReplyAfterFlush`: a node replies OK for an entry only once its own
//!   durable log holds it.
//! - `CommittedSurvives`: an entry replied OK is held durably by a majority
//!   (so it survives any crash that loses unflushed writes), and the running
//!   primary of the highest view holds it in its log.
//! - `OnePrimaryPerView`: no two running nodes are primary of the same view.

use std::sync::Arc;

use cmc_model::Property;
use cmc_world::system::state::WorldState;
use cmc_world::{Core, World};

use crate::node_parts::{node_parts, Nodes};
use crate::variants::{bug_variant, variant_spec};

use super::{role, Durable, PrimaryBackup, Volatile, REPLY_OK};

/// The core with planted bug `bug` (0: none), or `None` past [`super::BUGS`].
pub fn core(bug: u32) -> Option<Arc<dyn Core>> {
    bug_variant!(PrimaryBackup, bug, [0, 1, 2, 3, 4])
}

/// A World of `nodes` nodes running variant `bug`, with `params` applied and
/// the properties above.
pub fn world(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String> {
    let mut spec = variant_spec("primary_backup", bug, core(bug), nodes)?;
    spec.set_all(params)?;
    Ok(World::new(spec).with_properties(properties()))
}

fn nodes<'a>(world: &'a World, state: &'a WorldState) -> Nodes<'a, Durable, Volatile> {
    let nodes = world.inspect(state).nodes();
    node_parts(world, state, 0..nodes, "primary_backup")
}

/// The OK replies: (replying node, entry value).
fn committed<'a>(
    world: &'a World,
    state: &'a WorldState,
) -> impl Iterator<Item = (usize, u32)> + 'a {
    world
        .inspect(state)
        .replies_with(&[REPLY_OK])
        .map(|entry| (entry.node as usize, entry.request + 1))
}

fn reply_after_flush(world: &World, state: &WorldState) -> bool {
    let nodes = nodes(world, state);
    committed(world, state).all(|(node, value)| nodes[node].durable.holds(value))
}

fn committed_survives(world: &World, state: &WorldState) -> bool {
    let nodes = nodes(world, state);
    let majority = nodes.len() / 2 + 1;
    let primary = nodes
        .iter()
        .filter(|n| n.up && n.volatile.role == role::LEADER)
        .max_by_key(|n| n.volatile.current.view);
    committed(world, state).all(|(_, value)| {
        nodes.iter().filter(|n| n.durable.holds(value)).count() >= majority
            && primary.is_none_or(|p| p.volatile.current.holds(value))
    })
}

fn one_primary_per_view(world: &World, state: &WorldState) -> bool {
    let nodes = nodes(world, state);
    let primaries: Vec<u32> = nodes
        .iter()
        .filter(|n| n.up && n.volatile.role == role::LEADER)
        .map(|n| n.volatile.current.view)
        .collect();
    primaries
        .iter()
        .enumerate()
        .all(|(at, view)| !primaries[at + 1..].contains(view))
}

/// `ReplyAfterFlush`, `CommittedSurvives` and `OnePrimaryPerView`.
pub fn properties() -> Vec<Property<World>> {
    vec![
        Property::always("ReplyAfterFlush", reply_after_flush),
        Property::always("CommittedSurvives", committed_survives),
        Property::always("OnePrimaryPerView", one_primary_per_view),
    ]
}
