//! Successor states made in recycled memory: the search hands back the
//! buffer of a successor it no longer needs ([`give_back`]), and the next
//! successor is copied into it ([`copy_of`]), so that a warm search
//! allocates nothing per successor.

use std::cell::RefCell;

use crate::world::state::WorldState;

thread_local! {
    /// A state whose memory this thread may reuse.
    static SPARE: RefCell<Option<WorldState>> = const { RefCell::new(None) };
}

/// A copy of `state`, in the memory of the state last given back on this
/// thread if there is one.
pub fn copy_of(state: &WorldState) -> WorldState {
    match SPARE.with(|spare| spare.borrow_mut().take()) {
        Some(mut copy) => {
            copy.clone_from(state);
            copy
        }
        None => state.clone(),
    }
}

/// Keeps `state`'s memory for the next [`copy_of`] on this thread.
pub fn give_back(state: WorldState) {
    SPARE.with(|spare| *spare.borrow_mut() = Some(state));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::state::{NodeState, Persist};

    #[test]
    fn a_copy_in_recycled_memory_equals_its_source() {
        let source = WorldState {
            nodes: vec![NodeState {
                core: vec![1, 2, 3],
                clock: 7,
                persists: vec![Persist {
                    offset: 1,
                    bytes: Default::default(),
                }],
                ..NodeState::default()
            }],
            issued: 2,
            lost_in_crash: vec![1],
            cut_links: vec![(0, 1)],
            ..WorldState::default()
        };
        let mut bigger = source.clone();
        bigger.nodes.push(NodeState {
            core: vec![9; 40],
            ..NodeState::default()
        });
        bigger.nodes[0].core.extend([4, 5]);
        give_back(bigger);
        assert_eq!(copy_of(&source), source);
        assert_eq!(copy_of(&source), source, "without a spare too");
    }
}
