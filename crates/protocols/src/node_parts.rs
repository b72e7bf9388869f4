//! The nodes of a World as a property reads them: typed parts and whether
//! the node runs.

use std::borrow::Cow;

use bytemuck::Pod;
use cmc_world::world::state::WorldState;
use cmc_world::World;

/// One node's durable and volatile parts, and whether it is running. The
/// parts are read in place from the state's bytes when those are aligned
/// for `D` and `V` (as a core state's memory is), and copied otherwise:
/// properties run on every new state, and a copy of each part for each
/// property was a tenth of a Paxos check.
pub(crate) struct NodeParts<'a, D: Clone, V: Clone> {
    pub durable: Cow<'a, D>,
    pub volatile: Cow<'a, V>,
    pub up: bool,
}

/// `bytes` as a `T`: borrowed when aligned for `T`, a copy otherwise; `None`
/// when the sizes differ.
fn typed<T: Pod>(bytes: &[u8]) -> Option<Cow<'_, T>> {
    if bytes.len() != size_of::<T>() {
        return None;
    }
    Some(match bytemuck::try_from_bytes(bytes) {
        Ok(in_place) => Cow::Borrowed(in_place),
        Err(_) => Cow::Owned(bytemuck::pod_read_unaligned(bytes)),
    })
}

/// The parts of nodes `nodes`, read through the inspection path; every one of
/// them runs the core `core` (its state layout is `D` and `V`).
pub(crate) fn node_parts<'a, D: Pod, V: Pod>(
    world: &'a World,
    state: &'a WorldState,
    nodes: std::ops::Range<usize>,
    core: &str,
) -> Vec<NodeParts<'a, D, V>> {
    let inspect = world.inspect(state);
    nodes
        .map(|node| {
            let view = inspect.node(node);
            NodeParts {
                durable: typed(view.durable).unwrap_or_else(|| panic!("every node runs {core}")),
                volatile: typed(view.volatile).unwrap_or_else(|| panic!("every node runs {core}")),
                up: !view.env.crashed,
            }
        })
        .collect()
}
