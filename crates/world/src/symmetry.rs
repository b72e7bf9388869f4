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

use cmc_model::Encode;

use crate::env::Env;
use crate::spec::{NetSemantics, WorldSpec};
use crate::state::WorldState;

/// The renamings of a World's interchangeable nodes.
pub struct Symmetry {
    /// Every permutation of the node ids (`perm[old] = new`) that moves only
    /// interchangeable nodes, identity included.
    perms: Vec<Vec<u32>>,
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
        Some(Symmetry { perms })
    }

    /// The canonical form of `state`: its least encoding over the renamings.
    pub fn canonical(&self, env: &Env, state: WorldState) -> WorldState {
        let mut best_bytes = state.to_bytes();
        let mut best = state.clone();
        let mut bytes = Vec::with_capacity(best_bytes.len());
        for perm in &self.perms[1..] {
            let renamed = rename(env, &state, perm);
            bytes.clear();
            renamed.encode(&mut bytes);
            if bytes < best_bytes {
                std::mem::swap(&mut bytes, &mut best_bytes);
                best = renamed;
            }
        }
        best
    }
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

/// `state` with node `n` renamed `perm[n]` everywhere.
fn rename(env: &Env, state: &WorldState, perm: &[u32]) -> WorldState {
    let to = |node: u8| perm[node as usize] as u8;
    let mut next = state.clone();
    for (old, node) in state.nodes.iter().enumerate() {
        let core = env.spec.core_of(old);
        let mut moved = node.clone();
        let (durable, volatile) = moved.core.split_at_mut(core.durable_size());
        let supported = core.permute(&env.configs[old], durable, volatile, perm);
        assert!(
            supported,
            "symmetry was accepted for a core without permute"
        );
        next.nodes[perm[old] as usize] = moved;
    }
    for packet in &mut next.net {
        let core = env.spec.core_of(packet.src as usize);
        let mut bytes = packet.msg;
        let len = bytes.as_bytes().len();
        let mut raw = [0u8; crate::abi::PAYLOAD_MAX];
        raw[..len].copy_from_slice(bytes.as_bytes());
        core.permute_message(&env.configs[packet.src as usize], &mut raw[..len], perm);
        bytes = crate::state::Payload::new(&raw[..len]).expect("same length");
        packet.msg = bytes;
        packet.src = to(packet.src);
        packet.dst = to(packet.dst);
    }
    match env.spec.net {
        // Stable: the order within a link is its queue.
        NetSemantics::Fifo => next.net.sort_by_key(|p| (p.src, p.dst)),
        NetSemantics::Unordered | NetSemantics::Duplicating => {
            next.net.sort_by_key(|p| (p.src, p.dst, p.msg))
        }
    }
    for link in &mut next.cut_links {
        *link = (to(link.0), to(link.1));
    }
    next.cut_links.sort_unstable();
    for entry in &mut next.ghost {
        entry.node = to(entry.node);
    }
    next
}
