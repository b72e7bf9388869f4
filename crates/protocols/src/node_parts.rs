//! The nodes of a World as a property reads them: typed parts and whether
//! the node runs.

use std::ops::Deref;

use bytemuck::Pod;
use cmc_world::system::state::WorldState;
use cmc_world::World;
use smallvec::SmallVec;

/// One node's durable and volatile parts, and whether it is running.
/// Properties run on every new state: a copy of each part for each property
/// was a tenth of a Paxos check, so the parts are read in place.
pub(crate) struct NodeParts<'a, D, V> {
    pub durable: Part<'a, D>,
    pub volatile: Part<'a, V>,
    pub up: bool,
}

/// A part of a node's state as a `T`: read in place from the state's bytes
/// when those are aligned for `T` (as a core state's memory is), a boxed
/// copy otherwise. Small either way, so a node's parts move cheaply.
pub(crate) enum Part<'a, T> {
    InPlace(&'a T),
    Copied(Box<T>),
}

impl<T> Deref for Part<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Part::InPlace(part) => part,
            Part::Copied(part) => part,
        }
    }
}

/// `bytes` as a `T`, or `None` when the sizes differ.
fn typed<T: Pod>(bytes: &[u8]) -> Option<Part<'_, T>> {
    if bytes.len() != size_of::<T>() {
        return None;
    }
    Some(match bytemuck::try_from_bytes(bytes) {
        Ok(in_place) => Part::InPlace(in_place),
        Err(_) => Part::Copied(Box::new(bytemuck::pod_read_unaligned(bytes))),
    })
}

/// The parts of a few nodes, kept inline up to this many (no allocation).
pub(crate) type Nodes<'a, D, V> = SmallVec<[NodeParts<'a, D, V>; 8]>;

/// The parts of nodes `nodes`, read through the inspection path; every one of
/// them runs the core `core` (its state layout is `D` and `V`).
pub(crate) fn node_parts<'a, D: Pod, V: Pod>(
    world: &'a World,
    state: &'a WorldState,
    nodes: std::ops::Range<usize>,
    core: &str,
) -> Nodes<'a, D, V> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_read_in_place_when_aligned_and_copied_when_not() {
        let words = [7u32, 0x0900_0000, 0];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let aligned = typed::<u32>(&bytes[..4]).expect("four bytes");
        assert!(matches!(aligned, Part::InPlace(_)));
        assert_eq!(*aligned, 7);
        // One byte in: never aligned for a u32, whatever the base address.
        let shifted = typed::<u32>(&bytes[1..5]).expect("four bytes");
        assert!(matches!(shifted, Part::Copied(_)));
        assert_eq!(
            *shifted,
            u32::from_ne_bytes(bytes[1..5].try_into().unwrap())
        );
        assert!(typed::<u32>(&bytes[..3]).is_none(), "sizes differ");
    }
}
