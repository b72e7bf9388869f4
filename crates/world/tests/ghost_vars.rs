//! Ghost variables (`cmc_world::system::ghosts`): bytes a property module
//! keeps in every state, updated from each step. They are part of the
//! state's encoding only when declared, and what the World cannot carry
//! them through (symmetry, partial-order reduction, sleep sets) is refused with a
//! reason.

use std::sync::Arc;

use cmc_model::{Encode, Model};
use cmc_world::example_cores::reqack::ReqAck;
use cmc_world::system::action::{Action, ClientAction};
use cmc_world::system::ghosts::GhostVar;
use cmc_world::system::state::WorldState;
use cmc_world::{World, WorldSpec};

fn spec(params: &[&str]) -> WorldSpec {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
    spec.set_all(params).unwrap();
    spec
}

/// Counts the steps taken: a variable every step changes.
fn steps() -> GhostVar {
    GhostVar::new("Steps", vec![0, 0], |_, _, _, _, bytes| {
        let count = u16::from_le_bytes([bytes[0], bytes[1]]) + 1;
        bytes.copy_from_slice(&count.to_le_bytes());
    })
    .unwrap()
}

fn initial(world: &World) -> WorldState {
    let mut init = Vec::new();
    world.init_states(&mut init);
    init.pop().unwrap()
}

#[test]
fn a_ghost_variable_starts_at_its_initial_value_and_is_updated_by_each_step() {
    let world = World::new(spec(&["requests=1"]))
        .with_ghost(steps())
        .unwrap();
    let start = initial(&world);
    assert_eq!(world.inspect(&start).ghost_var("Steps"), Some(&[0, 0][..]));
    let request = Action::Client(ClientAction::Request {
        request: 0,
        node: 0,
        op: 0,
    });
    let next = world.next_state(&start, &request).unwrap();
    assert_eq!(world.inspect(&next).ghost_var("Steps"), Some(&[1, 0][..]));
    assert_eq!(world.inspect(&next).ghost_var("Other"), None);
    // Part of the state: equal but for the variable is another state.
    let bytes = next.to_bytes();
    assert_eq!(WorldState::decode_exact(&bytes).unwrap(), next);
    assert_ne!(world.next_state(&next, &request), Some(next));
    // Described by name (hex without a description).
    let view = world.describe_state(&start);
    assert!(view
        .fields
        .iter()
        .any(|(name, text)| name == "ghost.Steps" && text == "0000"));
}

#[test]
fn a_world_without_ghost_variables_encodes_its_states_as_before() {
    let plain = World::new(spec(&["requests=1"]));
    let ghost = World::new(spec(&["requests=1"]))
        .with_ghost(steps())
        .unwrap();
    let (plain, ghost) = (initial(&plain).to_bytes(), initial(&ghost).to_bytes());
    // The variables follow the history: a u32 length and the bytes.
    assert_eq!(ghost.len(), plain.len() + 4 + 2);
}

#[test]
fn ghost_variables_refuse_symmetry_and_turn_reduction_and_sleep_sets_off_with_a_reason() {
    let mut receivers = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    receivers.set_all(&["requests=1", "symmetry=1,2"]).unwrap();
    let symmetric = World::new(receivers);
    let refused = symmetric.with_ghost(steps()).err().unwrap();
    assert!(refused.contains("symmetry"), "{refused}");

    let world = World::new(spec(&["requests=1"]))
        .with_ghost(steps())
        .unwrap();
    let off = world.reduction_support().unwrap_err();
    assert!(off.contains("ghost variable `Steps`"), "{off}");
    // Sleep sets too: an update may tell the two orders of commuting steps apart.
    let off = world.sleep_support().unwrap_err();
    assert!(off.contains("ghost variable `Steps`"), "{off}");
}

#[test]
fn a_ghost_variable_must_have_a_size_and_a_name_of_its_own() {
    let empty = GhostVar::new("Empty", Vec::new(), |_, _, _, _, _| {})
        .err()
        .unwrap();
    assert!(empty.contains("size is 0 bytes"), "{empty}");
    let twice = World::new(spec(&[]))
        .with_ghost(steps())
        .unwrap()
        .with_ghost(steps());
    assert!(twice.err().unwrap().contains("declared twice"));
}
