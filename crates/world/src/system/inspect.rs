//! The one path by which users of the World read its states: properties,
//! descriptions, replays and views outside this crate.
//!
//! A [`WorldState`]'s fields are this crate's own; [`World::inspect`] shows
//! a node's durable and volatile parts (decoded with the core's own
//! layout), the environment's record of each node, the messages in flight,
//! the links, the budgets left and the client history. The environment
//! ([`crate::system::env`]) never uses this module: what is enabled is
//! decided without looking inside a core.

use bytemuck::Pod;

use crate::core::fault::{Fault, FaultKind};
use crate::system::state::{Budget, GhostEntry, GhostKind, NodeState, PacketRefs, WorldState};
use crate::World;

/// Read access to a World state's internals, for properties.
///
/// # Example
///
/// A property over `reqack`'s own state: whenever the sender is sending, the
/// request it sends is durable (so a crash cannot lose it).
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Property;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::example_cores::reqack::{phase, Durable, ReqAck, Volatile};
/// use cmc_world::system::state::WorldState;
/// use cmc_world::{World, WorldSpec};
///
/// let sending_is_durable = Property::always("SendingIsDurable", |world: &World, state: &WorldState| {
///     let sender = world.inspect(state).node(0);
///     let (d, v): (Durable, Volatile) =
///         (sender.durable_as().expect("reqack layout"), sender.volatile_as().expect("reqack layout"));
///     v.phase != phase::SENDING || d.pending == v.request
/// });
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "crashes=1", "restarts=1"])?;
/// let world = World::new(spec).with_property(sending_is_durable);
/// assert_eq!(Checker::new(world).workers(1).run().verdict, Verdict::Pass);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
pub struct Inspect<'a> {
    world: &'a World,
    state: &'a WorldState,
}

/// One node's internals.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::{Durable, ReqAck, Volatile};
/// use cmc_world::{World, WorldSpec};
///
/// let world = World::new(WorldSpec::builder(Arc::new(ReqAck::default()), 2).build()?);
/// let mut states = Vec::new();
/// world.init_states(&mut states);
/// let receiver = world.inspect(&states[0]).node(1);
/// assert!(!receiver.env.crashed);
/// assert_eq!(receiver.durable_as::<Durable>(), Some(Durable { pending: 0, stored: 0 }));
/// assert_eq!(receiver.volatile.len(), size_of::<Volatile>());
/// assert_eq!(receiver.volatile_as::<u8>(), None, "not the core's layout");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
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
    ///
    /// Panics on a partial successor (whose nodes are not all its own): the
    /// search makes a state whole before any property reads it.
    pub fn inspect<'a>(&'a self, state: &'a WorldState) -> Inspect<'a> {
        assert!(state.is_whole(), "a partial successor inspected");
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

    /// The messages in flight, in the network's order: each packet once,
    /// whatever its number of copies (for a property over what nodes have
    /// sent, e.g. "every reply sent is covered by the sender's durable
    /// state").
    pub fn messages(&self) -> PacketRefs<'a> {
        self.state.net.refs()
    }

    /// Whether messages from `src` reach `dst`: the direction is not cut
    /// (a node always reaches itself).
    pub fn link_up(&self, src: u8, dst: u8) -> bool {
        self.state.link_up(src, dst)
    }

    /// The fault budget of `kind` left.
    pub fn budget(&self, kind: Budget) -> u8 {
        self.state.budget(kind)
    }

    /// The number of client requests issued so far (request ids `0..issued`).
    pub fn issued(&self) -> u8 {
        self.state.issued
    }

    /// The requests, sorted, that were open at their node when it crashed
    /// (see [`crate::system::quiescence::answered`]).
    pub fn lost_in_crash(&self) -> &'a [u8] {
        &self.state.lost_in_crash
    }

    /// The ghost history of client requests and replies.
    pub fn ghost(&self) -> &'a [GhostEntry] {
        &self.state.ghost
    }

    /// The bytes of the ghost variable `name` (see
    /// [`crate::system::ghosts`]); `None` when the World declares none so
    /// named. Reading a variable that an `INVARIANTS=` selection dropped
    /// (its declared readers were all left out) is a fault of the run: the
    /// property reading it is missing from its readers.
    pub fn ghost_var(&self, name: &str) -> Option<&'a [u8]> {
        if self.world.ghost_dropped(name) {
            self.world.report_outside_step(Fault::outside_step(
                FaultKind::CoreError(format!(
                    "a property read the ghost variable `{name}`, which INVARIANTS= dropped: \
                     add the property to the variable's readers"
                )),
                format!("while reading ghost variable {name}"),
            ));
            return None;
        }
        let range = self.world.ghosts.range(name)?;
        self.state.ghost.vars().get(range)
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
