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

use cmc_model::{Fingerprint, SleepKey};

use crate::system::action::{Action, ClientAction, CrashAction, NetAction, NetOp, NodeAction};
use crate::system::env::Env;
use crate::system::state::{Budget, Network, WorldState};
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

/// Whether `world` can run with sleep sets: `Err` names what stands in the
/// way. Sleep sets take every state (see `cmc_search`'s `sleep` module), so
/// no property is in the way; symmetry is (a state stands for its renamed
/// copies, whose steps name other nodes), and the quiescence check is not
/// argued for.
pub(crate) fn sleep_support(world: &World) -> Result<(), String> {
    if world.quiescence.is_some() {
        return Err("the quiescence check (quiescence=K) is not combined with sleep sets".into());
    }
    if !world.spec().symmetric_nodes.is_empty() {
        return Err(
            "symmetry is on (symmetry=...): a stored state stands for its renamed copies, \
             whose steps name other nodes"
                .into(),
        );
    }
    Ok(())
}

/// The sleep key of `action`, naming it without the packet's position: a
/// step of one node owns it. For a DELIVER, DROP or DUP the owner is the
/// packet's destination and its sender the partner; a FLUSH, FIRE, WAKE,
/// CHOOSE, TICK, CRASH, RESTART, CLIENT, RETRY or LOCAL_FAIL is owned by
/// its node. Link faults have none.
///
/// What each reads and writes (see [`taken_key`]): its node, the packet it
/// consumes or changes (whose sender alone adds copies of it), the packets
/// its node sends, and the environment all nodes share (budgets, the client
/// history, `issued`, requests lost in crashes) if it is marked shared. A
/// TICK reads the other nodes' clocks under a skew bound, which only TICKs
/// (shared) change.
pub(crate) fn sleep_key(action: &Action) -> Option<SleepKey> {
    let mut name = [0u8; 6 + crate::core::abi::PAYLOAD_MAX];
    let mut head = |bytes: &[u8]| {
        name[..bytes.len()].copy_from_slice(bytes);
        bytes.len()
    };
    let (owner, partner, length) = match *action {
        Action::Net(NetAction {
            op,
            src,
            dst,
            msg,
            surplus,
            ..
        }) => {
            let bytes = msg.as_bytes();
            let at = head(&[op as u8, src, dst, surplus as u8, bytes.len() as u8]);
            name[at..at + bytes.len()].copy_from_slice(bytes);
            (dst, Some(src), at + bytes.len())
        }
        Action::Node(NodeAction::Flush { node }) => (node, None, head(&[3, node])),
        Action::Node(NodeAction::Fire { node, timer }) => (node, None, head(&[4, node, timer])),
        Action::Node(NodeAction::Wake { node, wake }) => (node, None, head(&[5, node, wake])),
        Action::Node(NodeAction::Choose {
            node,
            choice,
            value,
        }) => (node, None, head(&[6, node, choice, value])),
        Action::Node(NodeAction::Tick { node }) => (node, None, head(&[7, node])),
        Action::Crash(CrashAction::Crash { node }) => (node, None, head(&[8, node])),
        Action::Crash(CrashAction::Restart { node }) => (node, None, head(&[9, node])),
        Action::Client(ClientAction::Request { request, node, op }) => {
            let [low, high] = op.to_le_bytes();
            (node, None, head(&[10, request, node, low, high]))
        }
        Action::Client(ClientAction::Retry { request, node }) => {
            (node, None, head(&[11, request, node]))
        }
        Action::Client(ClientAction::LocalFail { request, node }) => {
            (node, None, head(&[12, request, node]))
        }
        Action::Link(_) => return None,
    };
    Some(SleepKey {
        owner: owner.into(),
        partner: partner.map(u32::from),
        name: Fingerprint::of_bytes(&name[..length]),
        feeds: u64::MAX,
        shared: true,
    })
}

/// The key of the step `action` from `state` to `next`, named `key`: it
/// is shared unless it is a DELIVER, FLUSH, FIRE, WAKE or CHOOSE that left
/// the environment alone (no reply appended to the client history, no
/// budget spent, no link, request or loss changed); it feeds the nodes
/// whose packets from its owner changed, or hold surplus copies (a copy
/// more may leave them as they were).
pub(crate) fn taken_key(
    state: &WorldState,
    action: &Action,
    next: &WorldState,
    key: SleepKey,
) -> SleepKey {
    let local_kind = matches!(
        action,
        Action::Net(NetAction {
            op: NetOp::Deliver,
            ..
        }) | Action::Node(
            NodeAction::Flush { .. }
                | NodeAction::Fire { .. }
                | NodeAction::Wake { .. }
                | NodeAction::Choose { .. }
        )
    );
    let alone = next.ghost.len() == state.ghost.len()
        && next.budgets == state.budgets
        && next.issued == state.issued
        && next.cut_links == state.cut_links
        && next.lost_in_crash == state.lost_in_crash;
    let owner = key.owner;
    let mut feeds = 0u64;
    for packet in next
        .net
        .refs()
        .filter(|packet| u32::from(packet.src) == owner)
    {
        let dst = packet.dst;
        let Some(bit) = 1u64.checked_shl(dst.into()) else {
            feeds = u64::MAX;
            break;
        };
        if feeds & bit != 0 {
            continue;
        }
        let changed = !sent(&next.net, owner, dst).eq(sent(&state.net, owner, dst));
        let surplus = sent(&next.net, owner, dst).any(|(_, _, surplus)| surplus);
        if changed || surplus {
            feeds |= bit;
        }
    }
    SleepKey {
        feeds,
        shared: !(local_kind && alone),
        ..key
    }
}

/// The packets in `net` from `src` to `dst`, in order: payload, count and
/// surplus flag.
fn sent(net: &Network, src: u32, dst: u8) -> impl Iterator<Item = (&[u8], u8, bool)> {
    net.refs()
        .filter(move |packet| u32::from(packet.src) == src && packet.dst == dst)
        .map(|packet| (packet.msg, packet.count, packet.surplus))
}
