//! The explicit path by which properties read core internals.
//!
//! The environment ([`crate::env`]) never uses this module: what is enabled
//! is decided without looking inside a core. Properties, descriptions and
//! replays call [`World::inspect`] to see a node's durable and volatile parts
//! and decode them with the core's own layout.

use bytemuck::Pod;

use crate::state::{GhostEntry, GhostKind, NodeState, WorldState};
use crate::World;

/// Read access to a World state's internals, for properties.
pub struct Inspect<'a> {
    world: &'a World,
    state: &'a WorldState,
}

/// One node's internals.
pub struct NodeView<'a> {
    /// The environment's record of the node (crashed, clock, timers, persists).
    pub env: &'a NodeState,
    /// The core's durable part, as flushed.
    pub durable: &'a [u8],
    /// The core's volatile part.
    pub volatile: &'a [u8],
}

impl NodeView<'_> {
    /// The durable part decoded as `T` (the core's layout); `None` if the sizes differ.
    pub fn durable_as<T: Pod>(&self) -> Option<T> {
        (self.durable.len() == std::mem::size_of::<T>())
            .then(|| bytemuck::pod_read_unaligned(self.durable))
    }

    /// The volatile part decoded as `T`; `None` if the sizes differ.
    pub fn volatile_as<T: Pod>(&self) -> Option<T> {
        (self.volatile.len() == std::mem::size_of::<T>())
            .then(|| bytemuck::pod_read_unaligned(self.volatile))
    }
}

impl World {
    /// The internals of `state`, for properties and descriptions only.
    pub fn inspect<'a>(&'a self, state: &'a WorldState) -> Inspect<'a> {
        Inspect { world: self, state }
    }
}

impl<'a> Inspect<'a> {
    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.state.nodes.len()
    }

    /// Node `node`'s internals.
    pub fn node(&self, node: usize) -> NodeView<'a> {
        let env = &self.state.nodes[node];
        let durable_size = self.world.spec().core_of(node).durable_size();
        let (durable, volatile) = env.core.split_at(durable_size);
        NodeView {
            env,
            durable,
            volatile,
        }
    }

    /// The ghost history of client requests and replies.
    pub fn ghost(&self) -> &'a [GhostEntry] {
        &self.state.ghost
    }

    /// The replies to `request`, in order.
    pub fn replies(&self, request: u32) -> impl Iterator<Item = &'a GhostEntry> {
        self.state
            .ghost
            .iter()
            .filter(move |entry| entry.kind == GhostKind::Reply && entry.request == request)
    }

    /// The replies whose payload is exactly `payload` (e.g. a core's "OK"),
    /// in order.
    pub fn replies_with<'p>(&self, payload: &'p [u8]) -> impl Iterator<Item = &'a GhostEntry> + 'p
    where
        'a: 'p,
    {
        self.state.ghost.iter().filter(move |entry| {
            entry.kind == GhostKind::Reply && entry.payload.as_bytes() == payload
        })
    }
}
