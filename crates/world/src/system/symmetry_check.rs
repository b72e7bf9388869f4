//! Whether the nodes declared interchangeable (`symmetry=`) behave alike.
//!
//! Symmetry reduction merges a state with its renamings, which is sound only
//! when renaming commutes with stepping: for a renaming `p` of the
//! interchangeable nodes, a state `s` and an action `a`, the step of `p(a)`
//! from `p(s)` must lead to the renaming of the state `a` leads to from
//! `s`. A core whose behaviour depends on which of the ids it has (node 2
//! answers twice, node 1 once), or whose `permute` misses ids, breaks it,
//! and the reduction would then merge states that differ and hide bugs. So
//! steps are checked: each step is taken again from the state renamed by
//! one of the renamings (they are used in turn), with the action renamed,
//! and the two successors' canonical forms must be equal. A step that
//! fails is a fault of the run ([`FaultKind::NotSymmetric`]) naming the
//! nodes and the step, never a pass.
//!
//! With `check-determinism` (which every gate run uses) every step is
//! checked; otherwise the first [`FIRST_STEPS`] steps of a World (over all
//! its threads), then one in [`STEP_SAMPLE`] of each thread's: that covers small Worlds whole and
//! catches a core that breaks symmetry in a share of its steps in any long
//! search, but may miss one that breaks it in a few deep steps only.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use cmc_model::{Encode, Model};

use crate::core::fault::{Fault, FaultKind};
use crate::system::action::{Action, NetAction};
use crate::system::env::Successor;
use crate::system::state::WorldState;
use crate::system::symmetry::{renamed, Symmetry};
use crate::World;

/// Without `check-determinism`, the first this many steps of a World (over
/// all its threads) are checked...
pub(crate) const FIRST_STEPS: u64 = 4096;

/// ... then one in this many.
pub(crate) const STEP_SAMPLE: u64 = 256;

thread_local! {
    /// The World (by [`World::id`]) this thread steps, and how many steps
    /// it has taken in it: for the sample and for choosing the renaming.
    static STEPS: Cell<(u64, u64)> = const { Cell::new((u64::MAX, 0)) };
}

/// Checks (every step with `check-determinism`, a sample otherwise) that
/// the step of `action` from `state`, which led to `next` (canonical),
/// commutes with a renaming of the interchangeable nodes.
pub(crate) fn check_step(
    world: &World,
    symmetry: &Symmetry,
    state: &WorldState,
    action: &Action,
    next: &WorldState,
) -> Result<(), Fault> {
    let steps = STEPS.with(|steps| {
        let count = match steps.get() {
            (id, count) if id == world.id() => count + 1,
            _ => 1,
        };
        steps.set((world.id(), count));
        count
    });
    // The first steps are counted over the World, not per thread: the
    // search starts new worker threads at every level.
    let first = || {
        world.symmetry_checks.load(Ordering::Relaxed) < FIRST_STEPS
            && world.symmetry_checks.fetch_add(1, Ordering::Relaxed) < FIRST_STEPS
    };
    let checked = world.spec().check_determinism || steps.is_multiple_of(STEP_SAMPLE) || first();
    if !checked {
        return Ok(());
    }
    // A renaming other than the identity (index 0), each in turn.
    let index = 1 + (steps % (symmetry.len() as u64 - 1)) as usize;
    let perm = symmetry.perm(index);
    let image = renamed(&world.env, &|v, p| world.rename_ghosts(v, p), state, perm);
    let broken =
        |why: String| Fault {
            kind: FaultKind::NotSymmetric(format!(
            "symmetry={}: {} do not behave alike: {why}; symmetry reduction would merge states \
             that differ. The steps of core `{}` depend on which of these ids a node has, or \
             its permute (or id descriptor) misses ids: drop symmetry= or fix the core",
            node_list(&world.spec().symmetric_nodes),
            moved_nodes(perm),
            world.spec().core_of(world.spec().symmetric_nodes[0] as usize).name(),
        )),
            action: world.format_action(action),
            event: String::new(),
            pre_state: state.to_bytes(),
        };
    let Some(image_action) = rename_action(world, action, perm, &image) else {
        return Err(broken(format!(
            "{} is enabled in the pre-state below, but its renaming is not enabled in the \
             renamed pre-state",
            world.format_action(action)
        )));
    };
    let mut image_next = WorldState::default();
    let enabled = world.recorded_step(&image, &image_action, &mut image_next, Successor::Whole)?;
    if !enabled || image_next != *next {
        return Err(broken(format!(
            "{} from the pre-state below and {} from its renaming lead to states that are \
             not renamings of each other",
            world.format_action(action),
            world.format_action(&image_action)
        )));
    }
    Ok(())
}

/// `nodes` as `symmetry=` spells them.
fn node_list(nodes: &[u8]) -> String {
    let names: Vec<String> = nodes.iter().map(u8::to_string).collect();
    names.join(",")
}

/// The nodes `perm` moves, e.g. `nodes n1, n2 (renamed n1->n2, n2->n1)`.
fn moved_nodes(perm: &[u32]) -> String {
    let moved: Vec<(usize, u32)> = perm
        .iter()
        .enumerate()
        .filter(|&(old, &new)| old as u32 != new)
        .map(|(old, &new)| (old, new))
        .collect();
    let names: Vec<String> = moved.iter().map(|(old, _)| format!("n{old}")).collect();
    let renames: Vec<String> = moved
        .iter()
        .map(|(old, new)| format!("n{old}->n{new}"))
        .collect();
    format!(
        "nodes {} (renamed {})",
        names.join(", "),
        renames.join(", ")
    )
}

/// `action` with node `n` renamed `perm[n]`, as one of the actions enabled
/// in `image` (the state it is taken from, renamed), or `None` when no
/// enabled action is its renaming.
fn rename_action(
    world: &World,
    action: &Action,
    perm: &[u32],
    image: &WorldState,
) -> Option<Action> {
    let wanted = action.renamed(&world.env, perm)?;
    let mut enabled = Vec::new();
    world.env.actions(image, &mut enabled);
    // A renamed message is wherever the renamed state holds it: any index.
    let at_any_index = |candidate: &Action| match (candidate, &wanted) {
        (Action::Net(found), Action::Net(net)) => {
            *found
                == NetAction {
                    index: found.index,
                    ..*net
                }
        }
        _ => *candidate == wanted,
    };
    enabled.into_iter().find(at_any_index)
}
