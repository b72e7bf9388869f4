//! Partial-order reduction of the World: persistent sets of node-local steps.
//!
//! A *local step* of node `n` is a DELIVER to `n`, or a FLUSH, FIRE, WAKE
//! or CHOOSE of `n`, that appends nothing to the client history. It reads
//! and writes only `n`'s node state, the packet it consumes (one addressed
//! to `n`) and the packets `n` sends (their source is `n`); it spends no
//! budget. What it does is a function of `n`'s state and its event, so it
//! does the same from every state in which `n` is unchanged.
//!
//! For a set N of nodes, the local steps of N form a *persistent set* of a
//! state (no path of other actions from it can reach an action that
//! conflicts with them) when, after the closure below:
//!
//! - no node of N has an action other than local ones, now or later
//!   without N stepping: no crash, restart, tick, client request, retry,
//!   drop or duplication of a packet to or from it, and no local step that
//!   appends to the history (a reply);
//! - no node outside N that may step before N does may send to N: the nodes
//!   that may step are those with an enabled action or a client request
//!   still to come, and those that they may send to, transitively; "may
//!   send" is [`Core::may_send`](crate::core::Core::may_send), which the
//!   World enforces (every node may send to every node unless a core says
//!   otherwise, so that for most protocols N is every node with an action);
//! - every node that a packet from N is in flight to is in N (a step of N
//!   may send another copy of it, which its delivery must not race).
//!
//! The other actions then touch other nodes, other packets, the budgets,
//! the client history and `issued`, none of which a local step of N reads
//! or writes: each commutes with each step of N and neither enables nor
//! disables the other. Link faults and clock skew would make deliveries
//! and ticks depend on other nodes' actions, and the World refuses
//! reduction with them (see [`support`]).
//!
//! Local steps do not change the client history, and reduction is on only
//! when every property reads nothing but the history
//! ([`World::with_history_property`]): the steps of a persistent set are
//! invisible to every property.

use crate::world::action::{Action, NetAction, NetOp, NodeAction};
use crate::world::env::Env;
use crate::world::state::{Budget, WorldState};
use crate::World;

/// Whether `world` can reduce: `Err` names what stands in the way.
pub(crate) fn support(world: &World) -> Result<(), String> {
    let spec = world.spec();
    if world.quiescence.is_some() {
        return Err(
            "the quiescence check (quiescence=K) runs a fair schedule from every state it is \
             given, and a reduced search leaves states out"
                .into(),
        );
    }
    if let Some(name) = world.properties_reading_more_than_history().next() {
        return Err(format!(
            "the property {name} may read node state; reduction needs every property to read \
             only the client history (World::with_history_property)"
        ));
    }
    if !spec.symmetric_nodes.is_empty() {
        return Err("symmetry is on (symmetry=...); reduction is not combined with it".into());
    }
    let links = [
        Budget::Partitions,
        Budget::OneWayCuts,
        Budget::Isolations,
        Budget::Splits,
    ];
    if links.iter().any(|&kind| spec.budgets[kind as usize] > 0) {
        return Err(
            "link faults (partitions, one-way cuts, isolations, splits) can stop or \
                    start any delivery"
                .into(),
        );
    }
    if spec.budgets[Budget::LocalFails as usize] > 0 {
        return Err("local failures (local_fails=K) can step any node that replied".into());
    }
    if spec.skew.is_some() && spec.budgets[Budget::Ticks as usize] > 0 {
        return Err("with a clock skew bound, a tick of one node enables ticks of others".into());
    }
    Ok(())
}

/// What one state's enabled steps say about each node.
struct Nodes {
    /// Positions of the node's local steps.
    local: Vec<Vec<usize>>,
    /// The node has, or may get without stepping, an action that is not
    /// local: it cannot be in a persistent set.
    pinned: Vec<bool>,
    /// The node has an enabled action, or a client request still to come.
    active: Vec<bool>,
}

impl Nodes {
    fn of(env: &Env, state: &WorldState, steps: &[(&Action, &WorldState)]) -> Option<Nodes> {
        let count = state.nodes.len();
        let mut nodes = Nodes {
            local: vec![Vec::new(); count],
            pinned: vec![false; count],
            active: vec![false; count],
        };
        for (at, (action, next)) in steps.iter().enumerate() {
            let local = match **action {
                Action::Net(NetAction {
                    op: NetOp::Deliver,
                    dst,
                    ..
                }) => Some(dst),
                Action::Node(
                    NodeAction::Flush { node }
                    | NodeAction::Fire { node, .. }
                    | NodeAction::Wake { node, .. }
                    | NodeAction::Choose { node, .. },
                ) => Some(node),
                _ => None,
            };
            match (local, action.changed_node()) {
                (Some(node), _) => {
                    let node = node as usize;
                    nodes.active[node] = true;
                    if next.ghost.len() == state.ghost.len() {
                        nodes.local[node].push(at);
                    } else {
                        nodes.pinned[node] = true;
                    }
                }
                (None, Some(node)) => {
                    nodes.active[node as usize] = true;
                    nodes.pinned[node as usize] = true;
                }
                (None, None) => match **action {
                    Action::Net(NetAction { src, dst, .. }) => {
                        nodes.pinned[src as usize] = true;
                        nodes.pinned[dst as usize] = true;
                    }
                    // Link faults: refused by `support`.
                    _ => return None,
                },
            }
        }
        let spec = &env.spec;
        let mut coming: Vec<u8> = (state.issued..spec.requests)
            .flat_map(|request| spec.request_nodes(request).iter().copied())
            .collect();
        if state.budget(Budget::Retries) > 0 {
            coming.extend(&spec.client_nodes);
        }
        for node in coming {
            nodes.active[node as usize] = true;
            nodes.pinned[node as usize] = true;
        }
        Some(nodes)
    }
}

/// Writes to `out` the positions in `steps` (the enabled actions of `state`
/// and their successors) of a persistent set of local steps, the smallest
/// found (the first node's on a tie); `false` if every step must be
/// explored. The World must [`support`] reduction.
pub(crate) fn persistent_set(
    env: &Env,
    state: &WorldState,
    steps: &[(&Action, &WorldState)],
    out: &mut Vec<usize>,
) -> bool {
    let Some(nodes) = Nodes::of(env, state, steps) else {
        return false;
    };
    let mut best: Option<Vec<bool>> = None;
    let size = |set: &[bool]| -> usize {
        set.iter()
            .enumerate()
            .filter(|(_, &inside)| inside)
            .map(|(node, _)| nodes.local[node].len())
            .sum()
    };
    for seed in 0..state.nodes.len() {
        if nodes.local[seed].is_empty() || nodes.pinned[seed] {
            continue;
        }
        let Some(set) = closure(env, state, &nodes, seed) else {
            continue;
        };
        if size(&set) < steps.len() && best.as_ref().is_none_or(|best| size(&set) < size(best)) {
            best = Some(set);
        }
    }
    let Some(set) = best else {
        return false;
    };
    out.clear();
    for (node, inside) in set.iter().enumerate() {
        if *inside {
            out.extend(&nodes.local[node]);
        }
    }
    true
}

/// The smallest set of nodes holding `seed` whose local steps are
/// persistent (see the module text), as a flag per node; `None` if it
/// holds a pinned node.
fn closure(env: &Env, state: &WorldState, nodes: &Nodes, seed: usize) -> Option<Vec<bool>> {
    let count = state.nodes.len();
    let may_send = |from: usize, to: usize| {
        env.spec
            .core_of(from)
            .may_send(&env.configs[from], to as u32)
    };
    let mut inside = vec![false; count];
    inside[seed] = true;
    loop {
        let stepping = may_step_outside(nodes, &inside, may_send);
        let mut grown = false;
        for node in 0..count {
            if inside[node] {
                continue;
            }
            let sends_in = stepping[node] && (0..count).any(|to| inside[to] && may_send(node, to));
            let awaits = state
                .net
                .refs()
                .any(|packet| inside[packet.src as usize] && packet.dst as usize == node);
            if sends_in || awaits {
                if nodes.pinned[node] {
                    return None;
                }
                inside[node] = true;
                grown = true;
            }
        }
        if !grown {
            return Some(inside);
        }
    }
}

/// The nodes outside `inside` that may step before a node inside does:
/// the active ones, and those they may send to, transitively.
fn may_step_outside(
    nodes: &Nodes,
    inside: &[bool],
    may_send: impl Fn(usize, usize) -> bool,
) -> Vec<bool> {
    let count = inside.len();
    let mut stepping: Vec<bool> = (0..count)
        .map(|node| !inside[node] && nodes.active[node])
        .collect();
    let mut grown = true;
    while grown {
        grown = false;
        for to in 0..count {
            if inside[to] || stepping[to] {
                continue;
            }
            if (0..count).any(|from| stepping[from] && may_send(from, to)) {
                stepping[to] = true;
                grown = true;
            }
        }
    }
    stepping
}
