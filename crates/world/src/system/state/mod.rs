//! The World's state and its canonical encoding.
//!
//! [`WorldState`] (here) holds the nodes (`node.rs`: a core's bytes and what
//! the environment keeps for it), the messages in flight (`network.rs`, of
//! packets in `packet.rs` carrying payloads in `payload.rs`), the cut links,
//! the fault budgets (`budget.rs`), the client history (`ghost.rs`) and its
//! bookkeeping (`provenance.rs`: what lets a successor's encoding copy what
//! a step left unchanged). Each file holds one part with its encoding.
//!
//! A node's core state is an opaque byte blob here: nothing in this module or
//! in the environment interprets it. Only [`crate::system::inspect`] splits it into the
//! durable and volatile parts for properties and descriptions.

mod budget;
mod ghost;
mod network;
mod node;
mod packet;
mod payload;
mod provenance;

use cmc_model::{DecodeError, Decoder, Encode};

pub use budget::{Budget, BUDGETS, BUDGET_NAMES};
pub use ghost::{Ghost, GhostEntry, GhostKind};
pub(crate) use network::RenameScratch;
pub(crate) use network::Slot;
pub use network::{Network, PacketRef, PacketRefs, Packets};
pub use node::{Choice, Deadline, NodeState, Persist};
pub use packet::Packet;
pub use payload::Payload;

use node::copy_into;
use provenance::{DecodedLayout, Lineage, Provenance};

/// The World's state. Its [`Encode`] bytes are its identity: the fields in
/// order, each node as [`NodeState`] encodes it.
///
/// Its fields are the World's own: outside this crate, a state is read
/// through [`World::inspect`](crate::World::inspect), the inspection view.
///
/// # Example
///
/// Walking the World by hand, as a property or a test sees it:
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::action::{Action, ClientAction};
/// use cmc_world::system::state::{Budget, GhostKind};
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "drops=1"])?;
/// let world = World::new(spec);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// let [start] = &init[..] else { panic!("one initial state") };
/// let view = world.inspect(start);
/// assert_eq!(view.nodes(), 2);
/// assert!(view.messages().next().is_none() && view.ghost().is_empty());
/// assert_eq!(view.budget(Budget::Drops), 1);
///
/// let request = Action::Client(ClientAction::Request { request: 0, node: 0, op: 0 });
/// let next = world.next_state(start, &request).expect("enabled");
/// let view = world.inspect(&next);
/// assert_eq!(view.issued(), 1);
/// assert_eq!(view.ghost()[0].kind, GhostKind::Invoke);
/// // The sender made the request durable: one persist waits for FLUSH.
/// assert_eq!(view.node(0).env.persists.len(), 1);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Debug, Default)]
pub struct WorldState {
    /// The nodes, by id.
    pub(crate) nodes: Vec<NodeState>,
    /// Messages in flight: sorted by (src, dst, bytes) with counts, or, in FIFO
    /// mode, sorted by (src, dst) and in send order within a link.
    pub(crate) net: Network,
    /// Cut directions of links, sorted: `(src, dst)` when messages from
    /// `src` to `dst` are not delivered (a pair cut is both directions).
    pub(crate) cut_links: Vec<(u8, u8)>,
    /// Remaining fault budgets, indexed by [`Budget`].
    pub(crate) budgets: [u8; BUDGETS],
    /// Client requests issued so far (request ids `0..issued`).
    pub(crate) issued: u8,
    /// Client invocations and replies, in order.
    pub(crate) ghost: Ghost,
    /// Requests, sorted, that were open (invoked, not answered) at their
    /// node when that node crashed: the client saw its connection break, so
    /// the request may never be answered (see [`crate::system::quiescence::answered`]).
    pub(crate) lost_in_crash: Vec<u8>,
    /// Where the state came from: bookkeeping, not part of the state.
    provenance: Provenance,
}

/// A state's fields in declaration order.
type WorldFields<'a> = (
    &'a [NodeState],
    &'a Network,
    &'a [(u8, u8)],
    &'a [u8; BUDGETS],
    u8,
    &'a Ghost,
    &'a [u8],
);

/// Whether `a` and `b` hold the same items, empty ones compared without a
/// call. `==` on byte slices calls the C library's `memcmp` even when they
/// are empty, and an empty `Vec`'s pointer is dangling: the AVX-512
/// `memcmp` reads it with a masked load that the processor completes only
/// through a microcode assist, hundreds of cycles (21% of reqack's cycles,
/// measured with `perf`, when the successor's fields were compared so).
#[inline]
fn same_items<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// Field by field, in declaration order, each sequence
/// compared with `same_items` (the cut links and the crash-lost requests
/// are nearly always empty); the bookkeeping is not compared.
impl PartialEq for WorldState {
    fn eq(&self, other: &Self) -> bool {
        let (nodes, net, cut_links, budgets, issued, ghost, lost_in_crash) = self.fields();
        let (
            their_nodes,
            their_net,
            their_cuts,
            their_budgets,
            their_issued,
            their_ghost,
            their_lost,
        ) = other.fields();
        issued == their_issued
            && budgets == their_budgets
            && same_items(nodes, their_nodes)
            && net == their_net
            && same_items(cut_links, their_cuts)
            && ghost == their_ghost
            && same_items(lost_in_crash, their_lost)
    }
}

impl Eq for WorldState {}

/// Appends `items` encoded as a `Vec` of them is (a `u32` count, then each).
fn encode_sequence<T: Encode>(items: &[T], out: &mut Vec<u8>) {
    let count = u32::try_from(items.len()).expect("at most u32::MAX items");
    out.extend_from_slice(&count.to_le_bytes());
    T::encode_slice(items, out);
}

/// Cloning into an existing state reuses its memory (`clone_from`): how
/// the World makes successors without allocating (see
/// the environment's step).
impl Clone for WorldState {
    fn clone(&self) -> Self {
        let mut copy = WorldState::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        debug_assert!(source.is_whole(), "a partial state copied");
        source.nodes.clone_into(&mut self.nodes);
        self.copy_environment(source);
        self.provenance.partial = None;
    }
}

impl WorldState {
    /// Makes every field of `self` but the nodes a copy of `source`'s, in
    /// the memory `self` holds, and forgets its layout and lineage (a copy
    /// was neither decoded nor stepped).
    #[inline(always)]
    fn copy_environment(&mut self, source: &WorldState) {
        let (_, net, cut_links, budgets, issued, ghost, lost_in_crash) = source.fields();
        self.net.clone_from(net);
        copy_into(cut_links, &mut self.cut_links);
        self.budgets = *budgets;
        self.issued = issued;
        self.ghost.clone_from(ghost);
        copy_into(lost_in_crash, &mut self.lost_in_crash);
        self.provenance.layout.clear();
        self.provenance.lineage = Lineage::Unknown;
        self.provenance.renaming = None;
        self.forget_recording();
    }
}

impl Encode for WorldState {
    fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.is_whole(), "a partial state encoded");
        self.nodes.encode(out);
        self.encode_environment(out);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut state = WorldState::default();
        state.decode_in_place(decoder)?;
        Ok(state)
    }

    /// Every node, packet and history entry is decoded into the memory the
    /// state already holds; the fields in the order of `WorldState::fields`,
    /// which names them all.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let start = decoder.offset();
        let offset =
            |decoder: &Decoder<'_>| u32::try_from(decoder.offset() - start).unwrap_or(u32::MAX);
        self.provenance.layout.clear();
        self.provenance.lineage = Lineage::Unknown;
        self.provenance.renaming = None;
        self.provenance.partial = None;
        self.forget_recording();
        let count = u32::decode(decoder)? as usize;
        // Each node takes at least a byte: a count beyond the input is refused
        // by the decoding of the nodes it does not hold.
        let mut node_ends = std::mem::take(&mut self.provenance.layout.node_ends);
        for index in 0..count {
            match self.nodes.get_mut(index) {
                Some(node) => node.decode_in_place(decoder)?,
                None => self.nodes.push(NodeState::decode(decoder)?),
            }
            node_ends.push(offset(decoder));
        }
        self.nodes.truncate(count);
        self.net.decode_in_place(decoder)?;
        let net_end = offset(decoder);
        self.cut_links.decode_in_place(decoder)?;
        // One copy (a generic array's decoding builds a `Vec`).
        self.budgets.copy_from_slice(decoder.take(BUDGETS)?);
        self.issued.decode_in_place(decoder)?;
        self.ghost.decode_in_place(decoder)?;
        self.lost_in_crash.decode_in_place(decoder)?;
        self.provenance.layout = DecodedLayout {
            node_ends,
            net_end,
            end: offset(decoder),
        };
        Ok(())
    }
}

impl WorldState {
    /// Every field, in declaration (and encoding) order.
    fn fields(&self) -> WorldFields<'_> {
        // Every field named: a new field must be added here too.
        let WorldState {
            nodes,
            net,
            cut_links,
            budgets,
            issued,
            ghost,
            lost_in_crash,
            provenance: _,
        } = self;
        (
            nodes,
            net,
            cut_links,
            budgets,
            *issued,
            ghost,
            lost_in_crash,
        )
    }

    /// Remaining budget of `kind`.
    pub(crate) fn budget(&self, kind: Budget) -> u8 {
        self.budgets[kind as usize]
    }

    /// Whether messages from `src` reach `dst` (the link's direction is not cut).
    pub(crate) fn link_up(&self, src: u8, dst: u8) -> bool {
        src == dst || self.cut_links.binary_search(&(src, dst)).is_err()
    }

    /// Whether both directions between `a` and `b` are up.
    pub(crate) fn pair_up(&self, a: u8, b: u8) -> bool {
        self.link_up(a, b) && self.link_up(b, a)
    }

    /// Cuts (`cut`) or heals the direction `src -> dst`; whether it changed.
    pub(crate) fn set_cut(&mut self, src: u8, dst: u8, cut: bool) -> bool {
        self.forget_recording();
        match (self.cut_links.binary_search(&(src, dst)), cut) {
            (Err(at), true) if src != dst => self.cut_links.insert(at, (src, dst)),
            (Ok(at), false) => {
                self.cut_links.remove(at);
            }
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests;
