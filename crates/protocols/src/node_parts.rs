//! The nodes of a World as a property reads them: typed parts and whether
//! the node runs.

use bytemuck::Pod;
use cmc_world::world::state::WorldState;
use cmc_world::World;

/// One node's durable and volatile parts, and whether it is running.
pub(crate) struct NodeParts<D, V> {
    pub durable: D,
    pub volatile: V,
    pub up: bool,
}

/// The parts of nodes `nodes`, read through the inspection path; every one of
/// them runs the core `core` (its state layout is `D` and `V`).
pub(crate) fn node_parts<D: Pod, V: Pod>(
    world: &World,
    state: &WorldState,
    nodes: std::ops::Range<usize>,
    core: &str,
) -> Vec<NodeParts<D, V>> {
    let inspect = world.inspect(state);
    nodes
        .map(|node| {
            let view = inspect.node(node);
            NodeParts {
                durable: view
                    .durable_as()
                    .unwrap_or_else(|| panic!("every node runs {core}")),
                volatile: view
                    .volatile_as()
                    .unwrap_or_else(|| panic!("every node runs {core}")),
                up: !view.env.crashed,
            }
        })
        .collect()
}
