//! Ghost variables (`cmc_world::system::ghosts`): bytes a property module
//! keeps in every state, updated from each step. They are part of the
//! state's encoding only when declared, and what the World cannot carry
//! them through (symmetry, partial-order reduction, sleep sets) is refused with a
//! reason.

use std::sync::Arc;

use cmc_model::{Encode, Model, Property};
use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::system::action::{Action, ClientAction, NetOp};
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

/// `Steps`, naming its one reader, and that reader: at most `limit` steps.
fn steps_read_by_bound(limit: u16) -> (GhostVar, Property<World>) {
    let bound = Property::always("StepsBounded", move |world: &World, state: &WorldState| {
        let bytes = world.inspect(state).ghost_var("Steps");
        bytes.is_some_and(|b| u16::from_le_bytes([b[0], b[1]]) <= limit)
    });
    (steps().read_by(["StepsBounded"]), bound)
}

#[test]
fn a_selection_that_keeps_none_of_a_ghosts_readers_drops_it() {
    let world = || {
        let (ghost, bound) = steps_read_by_bound(100);
        World::new(spec(&["requests=1"]))
            .with_properties(reqack::properties())
            .with_property(bound)
            .with_ghost(ghost)
            .unwrap()
    };
    let plain = initial(&World::new(spec(&["requests=1"]))).to_bytes();
    // Kept while its reader is selected ...
    let kept = world().select_properties(&["StepsBounded".into()]).unwrap();
    assert_eq!(
        kept.inspect(&initial(&kept)).ghost_var("Steps"),
        Some(&[0, 0][..])
    );
    assert!(kept.sleep_support().is_err());
    // ... dropped when it is not: states encode as without it, and sleep
    // sets are no longer turned off by it.
    let dropped = world()
        .select_properties(&["AckedIsDurable".into()])
        .unwrap();
    assert_eq!(initial(&dropped).to_bytes(), plain);
    let sleep = dropped.sleep_support();
    assert!(!sleep.is_err_and(|why| why.contains("ghost")));
    assert_eq!(dropped.fault(), None);
    // A property that reads it anyway, unlisted among its readers, is a
    // fault of the run, not a silent `None`.
    assert_eq!(dropped.inspect(&initial(&dropped)).ghost_var("Steps"), None);
    let fault = dropped
        .fault()
        .expect("reading a dropped ghost variable is a fault");
    assert!(fault.to_string().contains("INVARIANTS= dropped"), "{fault}");
}

#[test]
fn a_ghost_variable_read_by_a_property_the_world_lacks_is_refused() {
    let world = World::new(spec(&["requests=1"]))
        .with_properties(reqack::properties())
        .with_ghost(steps().read_by(["Nonesuch"]))
        .unwrap();
    let refused = world
        .select_properties(&["AckedIsDurable".into()])
        .err()
        .unwrap();
    assert!(
        refused.contains("read by `Nonesuch`, which is no property"),
        "{refused}"
    );
}

/// Per node, how many messages were delivered to it (0, 1, or 2 for more):
/// a byte per node id, renamed by moving each node's byte to its new id.
fn deliveries(nodes: usize, renamed: bool) -> GhostVar {
    let ghost = GhostVar::new("Deliveries", vec![0; nodes], |_, _, action, _, bytes| {
        if let Some(net) = action.net().filter(|net| net.op == NetOp::Deliver) {
            let count = &mut bytes[net.dst as usize];
            *count = (*count + 1).min(2);
        }
    })
    .unwrap();
    match renamed {
        true => ghost.renamed_by(|bytes, perm| {
            let old = bytes.to_vec();
            for (node, count) in old.into_iter().enumerate() {
                bytes[perm[node] as usize] = count;
            }
        }),
        false => ghost,
    }
}

/// Checks reqack on three nodes (receivers 1 and 2 interchangeable with
/// `symmetric`) with `Deliveries` and `property` over it; the verdict's
/// property, if violated, and the distinct states.
fn check_deliveries(symmetric: bool, property: Property<World>) -> (Option<String>, u64) {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    spec.set_all(&["requests=1", "drops=1", "dups=1"]).unwrap();
    if symmetric {
        spec.set_all(&["symmetry=1,2"]).unwrap();
    }
    spec.check_determinism = true;
    let world = World::new(spec)
        .with_ghost(deliveries(3, true))
        .unwrap()
        .with_property(property);
    let outcome = Checker::new(world).workers(1).run();
    let violated = match outcome.verdict {
        Verdict::Pass => None,
        Verdict::Violated { property, .. } => Some(property),
        other => panic!("no verdict: {other:?}"),
    };
    (violated, outcome.stats.distinct_states)
}

#[test]
fn a_ghost_variable_with_a_renaming_is_kept_under_symmetry_with_the_same_verdicts() {
    let refused = World::new({
        let mut receivers = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
        receivers.set_all(&["requests=1", "symmetry=1,2"]).unwrap();
        receivers
    })
    .with_ghost(deliveries(3, false))
    .err()
    .unwrap();
    assert!(refused.contains("renamed_by"), "{refused}");
    // The sender hears an ACK only once a receiver got the data: both
    // pass, the reduced run in fewer states.
    let acked_after_data = || {
        Property::always("AckAfterData", |world: &World, state: &WorldState| {
            let counts = world.inspect(state).ghost_var("Deliveries").unwrap();
            counts[0] == 0 || counts[1] > 0 || counts[2] > 0
        })
    };
    let (full_verdict, full) = check_deliveries(false, acked_after_data());
    let (reduced_verdict, reduced) = check_deliveries(true, acked_after_data());
    assert_eq!((full_verdict, reduced_verdict), (None, None));
    assert!(
        reduced < full,
        "{reduced} states with symmetry, {full} without"
    );
    // Some node gets a second delivery (a retransmission or a duplicate):
    // both find it.
    let once = || {
        Property::always("DeliveredOnce", |world: &World, state: &WorldState| {
            let counts = world.inspect(state).ghost_var("Deliveries").unwrap();
            counts.iter().all(|&count| count <= 1)
        })
    };
    let violated = Some("DeliveredOnce".to_string());
    assert_eq!(check_deliveries(false, once()).0, violated);
    assert_eq!(check_deliveries(true, once()).0, violated);
}
