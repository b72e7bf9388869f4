//! A schedule of World actions, driven step by step, with every property
//! checked in every state it reaches; and [`shrink`], which shortens a run
//! to a violation (a random walk's) by leaving actions out.
//!
//! [`ACCEPT_SYNC_SCHEDULE`] is the run of upstream pull request 112: server
//! 3 leads the first round; server 1 accepts its entry, server 2 does not;
//! server 1 takes over in a new round with server 2's promise; the
//! `AcceptSync` it sends server 2 must start at server 2's own log end.

use cmc_model::{Model, PropertyKind};
use cmc_world::system::action::{Action, ClientAction, NetAction, NetOp, NodeAction};
use cmc_world::system::state::WorldState;
use cmc_world::World;

use crate::codec;

/// One scheduled action; after each, every node flushes its writes.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Deliver the message with this tag from `src` to `dst` (the first in
    /// the network's order if several are in flight).
    Deliver(u8, u8, u8),
    /// A tick of a node's clock.
    Tick(u8),
    /// Client request `request` reaches `node`.
    Client(u8, u8),
}

use codec::tag::*;
use Step::*;

/// The run of the `AcceptSync` bug, from the initial state.
pub const ACCEPT_SYNC_SCHEDULE: &[Step] = &[
    // Server 3 (n2) hears server 2 and leads round 0.3.
    Deliver(2, 1, HB_REQUEST),
    Deliver(1, 2, HB_REPLY),
    Tick(2),
    // Servers 1 and 2 promise and take the leader's (empty) log.
    Deliver(2, 0, PREPARE),
    Deliver(0, 2, PROMISE),
    Deliver(2, 0, ACCEPT_SYNC),
    Deliver(2, 1, PREPARE),
    Deliver(1, 2, PROMISE),
    Deliver(2, 1, ACCEPT_SYNC),
    // Request 0 is accepted by server 1 only.
    Client(0, 2),
    Deliver(2, 0, ACCEPT_DECIDE),
    // Three election rounds at server 1 (n0), hearing server 2: it follows
    // 0.3, loses it, then leads round 1.1.
    Deliver(0, 1, HB_REQUEST),
    Deliver(1, 0, HB_REPLY),
    Deliver(0, 2, HB_REQUEST),
    Deliver(2, 0, HB_REPLY),
    Tick(0),
    Deliver(0, 1, HB_REQUEST),
    Deliver(1, 0, HB_REPLY),
    Tick(0),
    Deliver(0, 1, HB_REQUEST),
    Deliver(1, 0, HB_REPLY),
    Tick(0),
    // Server 2 promises in round 1.1; server 1 answers with an
    // `AcceptSync` from index 1, beyond server 2's log.
    Deliver(0, 1, PREPARE),
    Deliver(1, 0, PROMISE),
    Deliver(0, 1, ACCEPT_SYNC),
    Deliver(1, 0, ACCEPTED),
    // Request 1 reaches the new leader and is replicated to server 2.
    Client(1, 0),
    Deliver(0, 1, ACCEPT_DECIDE),
    // (`LATE_STEPS` steps in: a search starts here.)
    Deliver(1, 0, ACCEPTED),
    // The leader decides index 1 and tells server 2.
    Deliver(0, 1, DECIDE),
];

/// How many steps of [`ACCEPT_SYNC_SCHEDULE`] put server 2's misplaced
/// entry in place: from the state they reach, a breadth-first search finds
/// the shortest way on to a violation.
pub const LATE_STEPS: usize = 28;

/// The states the schedule reaches, each after its flushes; stops early at
/// the first property violated, with its name. A step that is not enabled
/// ends the run with an error naming it.
pub fn drive(
    world: &World,
    schedule: &[Step],
) -> Result<(Vec<WorldState>, Option<String>), String> {
    let mut states = Vec::new();
    world.init_states(&mut states);
    let mut state = states.pop().ok_or("no initial state")?;
    let mut reached = Vec::new();
    state = flush_all(world, state)?;
    for (index, step) in schedule.iter().enumerate() {
        let mut actions = Vec::new();
        world.actions(&state, &mut actions);
        let action = actions
            .iter()
            .find(|action| matches(step, action))
            .ok_or_else(|| {
                let enabled: Vec<String> = actions.iter().map(|a| world.format_action(a)).collect();
                format!(
                    "step {index} ({step:?}) is not enabled; enabled: {}",
                    enabled.join(", ")
                )
            })?;
        state = world
            .next_state(&state, action)
            .ok_or_else(|| format!("step {index} ({step:?}) faulted"))?;
        state = flush_all(world, state)?;
        reached.push(state.clone());
        if let Some(name) = violated(world, &state) {
            return Ok((reached, Some(name)));
        }
    }
    Ok((reached, None))
}

/// The first `always` property `state` violates.
pub fn violated(world: &World, state: &WorldState) -> Option<String> {
    world
        .properties()
        .into_iter()
        .find_map(|property| match &property.kind {
            PropertyKind::Always(holds) if !holds(world, state) => Some(property.name.clone()),
            _ => None,
        })
}

/// Whether `state` violates the `always` property named `property`.
fn violates(world: &World, state: &WorldState, property: &str) -> bool {
    world.properties().iter().any(|p| {
        p.name == property && matches!(&p.kind, PropertyKind::Always(holds) if !holds(world, state))
    })
}

fn matches(step: &Step, action: &Action) -> bool {
    match (*step, action) {
        (
            Deliver(src, dst, tag),
            Action::Net(NetAction {
                op: NetOp::Deliver,
                src: s,
                dst: d,
                msg,
                ..
            }),
        ) => (src, dst) == (*s, *d) && msg.as_bytes().first() == Some(&tag),
        (Tick(node), Action::Node(NodeAction::Tick { node: n })) => node == *n,
        (
            Client(request, node),
            Action::Client(ClientAction::Request {
                request: r,
                node: n,
                ..
            }),
        ) => (request, node) == (*r, *n),
        _ => false,
    }
}

fn flush_all(world: &World, mut state: WorldState) -> Result<WorldState, String> {
    loop {
        let mut actions = Vec::new();
        world.actions(&state, &mut actions);
        let Some(flush) = actions
            .into_iter()
            .find(|action| matches!(action, Action::Node(NodeAction::Flush { .. })))
        else {
            return Ok(state);
        };
        state = world.next_state(&state, &flush).ok_or("a flush faulted")?;
    }
}

/// The same World action in another state: a message is named by what it
/// is (operation, link, bytes), not by its place in the network, which
/// moves as other messages come and go.
fn same_action(a: &Action, b: &Action) -> bool {
    match (a, b) {
        (Action::Net(a), Action::Net(b)) => {
            (a.op, a.src, a.dst, a.msg.as_bytes()) == (b.op, b.src, b.dst, b.msg.as_bytes())
        }
        _ => a == b,
    }
}

/// Runs `actions` from the initial state, leaving out any that is not
/// enabled where it comes (a message never sent, a budget spent), until a
/// state violates `property`: the actions taken up to there, or `None` if
/// the run never violates it.
pub fn replay_until(world: &World, actions: &[Action], property: &str) -> Option<Vec<Action>> {
    let mut states = Vec::new();
    world.init_states(&mut states);
    let mut state = states.pop()?;
    let mut taken = Vec::new();
    let mut enabled = Vec::new();
    for wanted in actions {
        enabled.clear();
        world.actions(&state, &mut enabled);
        let Some(action) = enabled.iter().find(|a| same_action(wanted, a)) else {
            continue;
        };
        state = world.next_state(&state, action)?;
        taken.push(*action);
        if violates(world, &state, property) {
            return Some(taken);
        }
    }
    None
}

/// A shorter run to a violation of `property`, from a run that reaches
/// one (a random walk's counterexample): each action in turn, last to
/// first, is left out when the rest (with whatever no longer happens left
/// out too, such as the reply to a request never delivered) still reaches
/// a violation; repeated until no action can go. Every run it returns is
/// one [`replay_until`] confirms; it is locally minimal, not always the
/// shortest there is.
pub fn shrink(world: &World, actions: &[Action], property: &str) -> Option<Vec<Action>> {
    let mut best = replay_until(world, actions, property)?;
    loop {
        let before = best.len();
        let mut index = best.len();
        while index > 0 {
            index -= 1;
            let mut candidate = best.clone();
            candidate.remove(index);
            if let Some(shorter) = replay_until(world, &candidate, property) {
                index = index.min(shorter.len());
                best = shorter;
            }
        }
        if best.len() == before {
            return Some(best);
        }
    }
}
