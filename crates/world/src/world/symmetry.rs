//! Symmetry reduction: interchangeable nodes (off by default).
//!
//! With `symmetry=1,2` (nodes that run the same core, are all client nodes
//! or none, and all crashable or none), every state the World produces is
//! replaced by its canonical form: the least encoding over every renaming of
//! those nodes among themselves. Renaming moves each node's record, renames
//! node ids inside core states and messages (through the core's `permute`
//! and `permute_message`), and renames the environment's own ids: message
//! endpoints, cut links and the ghost history's nodes. Sound when the core's
//! behaviour does not depend on which of the interchangeable ids it has.

use std::cell::RefCell;
use std::cmp::Ordering;

use crate::world::env::Env;
use crate::world::spec::{NetSemantics, WorldSpec};
use crate::world::state::{NodeState, WorldState};

/// The renamings of a World's interchangeable nodes.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::Checker;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::symmetry::Symmetry;
/// use cmc_world::{World, WorldSpec};
///
/// // Three nodes: the sender and two interchangeable receivers.
/// let spec = |symmetric: &[u8]| {
///     WorldSpec::builder(Arc::new(ReqAck::default()), 3)
///         .requests(1).param("drops", 1).symmetry(symmetric).build().unwrap()
/// };
/// assert!(Symmetry::new(&spec(&[])).is_none(), "off by default");
/// assert!(Symmetry::new(&spec(&[1, 2])).is_some());
/// let states = |spec| Checker::new(World::new(spec)).workers(1).run().stats.distinct_states;
/// let (full, reduced) = (states(spec(&[])), states(spec(&[1, 2])));
/// assert!(reduced < full, "{reduced} < {full}");
/// ```
pub struct Symmetry {
    /// Every permutation of the node ids (`perm[old] = new`) that moves only
    /// interchangeable nodes, identity included.
    perms: Vec<Vec<u32>>,
    /// `inverses[i]` is the inverse of `perms[i]` (`inverse[new] = old`).
    inverses: Vec<Vec<u32>>,
}

impl Symmetry {
    /// The renamings for `spec`, or `None` when symmetry is off.
    pub fn new(spec: &WorldSpec) -> Option<Symmetry> {
        let members = &spec.symmetric_nodes;
        if members.len() < 2 {
            return None;
        }
        let mut perms = Vec::new();
        let mut order: Vec<u8> = members.clone();
        permutations(&mut order, 0, &mut |order| {
            let mut perm: Vec<u32> = (0..spec.nodes() as u32).collect();
            for (from, to) in members.iter().zip(order.iter()) {
                perm[*from as usize] = *to as u32;
            }
            perms.push(perm);
        });
        let inverses = perms
            .iter()
            .map(|perm| {
                let mut inverse = vec![0; perm.len()];
                for (old, &new) in perm.iter().enumerate() {
                    inverse[new as usize] = old as u32;
                }
                inverse
            })
            .collect();
        Some(Symmetry { perms, inverses })
    }

    /// Replaces `state` by its canonical form: its least renaming in the order of
    /// `state_order`. Renamings are made in this thread's reused buffers:
    /// no allocation once warm. A renaming is built node by node and dropped
    /// at the first node that makes it greater than the least so far: most
    /// are dropped after a node or two, never built whole nor encoded.
    pub fn canonicalise(&self, env: &Env, state: &mut WorldState) {
        SCRATCH.with(|scratch| {
            let Scratch {
                node,
                renamed,
                best,
                bytes,
                best_bytes,
            } = &mut *scratch.borrow_mut();
            let mut renamed_better = false;
            for (perm, inverse) in self.perms[1..].iter().zip(&self.inverses[1..]) {
                let least = if renamed_better { &*best } else { &*state };
                if !may_be_less(env, state, least, perm, inverse, node) {
                    continue;
                }
                rename_into(env, state, perm, renamed);
                let least = if renamed_better { &*best } else { &*state };
                if state_order(renamed, least, bytes, best_bytes) == Ordering::Less {
                    std::mem::swap(renamed, best);
                    renamed_better = true;
                }
            }
            if renamed_better {
                std::mem::swap(state, best);
            }
        })
    }
}

/// The total order on states whose least renaming is the canonical form:
/// the nodes in turn by [`node_order`], then the encodings of the rest of
/// the state (`bytes` and `other_bytes` are buffers for them).
fn state_order(
    state: &WorldState,
    other: &WorldState,
    bytes: &mut Vec<u8>,
    other_bytes: &mut Vec<u8>,
) -> Ordering {
    let nodes = state.nodes.len().cmp(&other.nodes.len()).then_with(|| {
        let mut pairs = state.nodes.iter().zip(&other.nodes);
        pairs
            .find_map(|(a, b)| Some(node_order(a, b)).filter(|order| order.is_ne()))
            .unwrap_or(Ordering::Equal)
    });
    nodes.then_with(|| {
        bytes.clear();
        state.encode_environment(bytes);
        other_bytes.clear();
        other.encode_environment(other_bytes);
        bytes.as_slice().cmp(other_bytes.as_slice())
    })
}

/// A total order on nodes: their fields in declaration order.
fn node_order(node: &NodeState, other: &NodeState) -> Ordering {
    node.fields().cmp(&other.fields())
}

/// Whether renaming `state` by `perm` (whose inverse is `inverse`) may be
/// less than `least` in [`state_order`]: false as soon as a renamed node
/// (built in `node`, in order) is greater than `least`'s.
fn may_be_less(
    env: &Env,
    state: &WorldState,
    least: &WorldState,
    perm: &[u32],
    inverse: &[u32],
    node: &mut NodeState,
) -> bool {
    for (&old, least_node) in inverse.iter().zip(&least.nodes) {
        let old = old as usize;
        node.clone_from(&state.nodes[old]);
        permute_core(env, old, &mut node.core, perm);
        match node_order(node, least_node) {
            Ordering::Greater => return false,
            Ordering::Less => return true,
            Ordering::Equal => {}
        }
    }
    true
}

/// Renames node ids inside node `old`'s core state `core` by `perm`.
fn permute_core(env: &Env, old: usize, core: &mut [u8], perm: &[u32]) {
    let kind = env.spec.core_of(old);
    let (durable, volatile) = core.split_at_mut(kind.durable_size());
    let supported = kind.permute(&env.configs[old], durable, volatile, perm);
    assert!(
        supported,
        "symmetry was accepted for a core without permute"
    );
}

/// One thread's buffers for [`Symmetry::canonical`].
#[derive(Default)]
struct Scratch {
    /// One renamed node of the renaming being tried.
    node: NodeState,
    /// The renaming being tried.
    renamed: WorldState,
    /// The least renaming so far (when not the state itself).
    best: WorldState,
    /// The encoding of a state's environment, to compare it.
    bytes: Vec<u8>,
    /// The encoding of the other state's environment.
    best_bytes: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Calls `visit` with every ordering of `items[at..]` (Heap-style swaps).
fn permutations(items: &mut Vec<u8>, at: usize, visit: &mut impl FnMut(&[u8])) {
    if at == items.len() {
        visit(items);
        return;
    }
    for i in at..items.len() {
        items.swap(at, i);
        permutations(items, at + 1, visit);
        items.swap(at, i);
    }
}

/// `state` with node `n` renamed `perm[n]` everywhere, written over `next`
/// (whose memory is reused).
fn rename_into(env: &Env, state: &WorldState, perm: &[u32], next: &mut WorldState) {
    let to = |node: u8| perm[node as usize] as u8;
    next.clone_from(state);
    for (old, node) in state.nodes.iter().enumerate() {
        let moved = &mut next.nodes[perm[old] as usize];
        moved.clone_from(node);
        permute_core(env, old, &mut moved.core, perm);
    }
    for packet in &mut next.net {
        let core = env.spec.core_of(packet.src as usize);
        let mut bytes = packet.msg;
        let len = bytes.as_bytes().len();
        let mut raw = [0u8; crate::core::abi::PAYLOAD_MAX];
        raw[..len].copy_from_slice(bytes.as_bytes());
        core.permute_message(&env.configs[packet.src as usize], &mut raw[..len], perm);
        bytes = crate::world::state::Payload::new(&raw[..len]).expect("same length");
        packet.msg = bytes;
        packet.src = to(packet.src);
        packet.dst = to(packet.dst);
    }
    match env.spec.net {
        // Stable: the order within a link is its queue.
        NetSemantics::Fifo => next.net.sort_by_key(|p| (p.src, p.dst)),
        NetSemantics::Unordered | NetSemantics::Duplicating => next
            .net
            .sort_by(|p, q| (p.src, p.dst, &p.msg).cmp(&(q.src, q.dst, &q.msg))),
    }
    for link in &mut next.cut_links {
        *link = (to(link.0), to(link.1));
    }
    next.cut_links.sort_unstable();
    for entry in &mut next.ghost {
        entry.node = to(entry.node);
    }
}
