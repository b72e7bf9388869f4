//! What a World state knows of where it came from (its provenance): the
//! layout of the bytes it was decoded from, its lineage as a step's
//! successor, whether it is a partial successor, its flight-recorder stamp
//! and its renaming. Bookkeeping that lets a successor's encoding copy what
//! a step left unchanged; never part of the state's identity.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use cmc_model::Encode;

use super::{encode_sequence, same_items, NodeState, WorldState};

/// What a state knows of where it came from, which lets
/// [`WorldState::encode_successor`] copy what a step left unchanged instead
/// of encoding it, and the flight recorder skip a pre-state it holds
/// already. Bookkeeping, not part of the state: never encoded or compared,
/// and not copied (a copy was neither decoded nor stepped nor recorded).
#[derive(Default)]
pub(super) struct Provenance {
    /// Where the parts of its encoding ended in the bytes it was last
    /// decoded from.
    pub(super) layout: DecodedLayout,
    /// What it has of its parent's, when it is a step's successor.
    pub(super) lineage: Lineage,
    /// Set when it is a partial successor: see [`WorldState::copy_for_step`].
    pub(super) partial: Option<PartialNodes>,
    /// See [`WorldState::recorded_as`] (0: none); atomic only to keep the
    /// state `Sync` (a stamp is read and written by the thread stepping it).
    pub(super) recorded_as: AtomicU64,
    /// See [`WorldState::renaming`].
    pub(super) renaming: Option<u16>,
}

/// A partial successor's nodes: only `kept` (if any) was copied from the
/// parent and may have been stepped; the others hold whatever their memory
/// held, and stand for the parent's nodes of the same ids.
#[derive(Clone, Copy)]
pub(super) struct PartialNodes {
    pub(super) kept: Option<u8>,
}

impl std::fmt::Debug for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(bookkeeping)")
    }
}

/// What a state has of its parent's, when it is a step's successor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Lineage {
    /// Nothing known: the state is not known to be a step's successor, or
    /// its nodes were renamed since.
    #[default]
    Unknown,
    /// A step's successor: every node but `changed` (if any) is the
    /// parent's unchanged, and the parent's history entries are the first
    /// of its own (a step only appends entries; the summary may change).
    Step {
        /// The one node the step may have changed.
        changed: Option<u8>,
    },
}

/// Where the parts of a state's encoding end in the bytes it was last
/// decoded from, as offsets from the start of the state's encoding.
#[derive(Default)]
pub(super) struct DecodedLayout {
    /// The end of each node's encoding; empty when the state was not decoded.
    pub(super) node_ends: Vec<u32>,
    /// The end of the network's encoding: the environment's other fields follow.
    pub(super) net_end: u32,
    /// The end of the state's encoding.
    pub(super) end: u32,
}

impl DecodedLayout {
    /// Forgets the bytes: the state no longer matches them.
    pub(super) fn clear(&mut self) {
        self.node_ends.clear();
    }
}

impl WorldState {
    /// Records that `self` is a step's successor: its nodes but `changed`
    /// (if any) are its parent's unchanged, and its history is the parent's
    /// with entries appended (see [`Lineage::Step`]), which
    /// [`WorldState::encode_successor`] then relies on instead of comparing.
    /// Forgotten by a copy, a decoding or a renaming of the nodes
    /// ([`WorldState::forget_lineage`]).
    pub(crate) fn mark_step_successor(&mut self, changed: Option<u8>) {
        self.provenance.lineage = Lineage::Step { changed };
    }

    /// Which renaming of its nodes made `self` canonical under symmetry (an
    /// index into the World's renamings, 0 being the identity), when `self`
    /// is a successor the World just made; `None` when not known (a copy, a
    /// decoding). What lets a step property see a step's two states under
    /// the same names.
    pub(crate) fn renaming(&self) -> Option<u16> {
        self.provenance.renaming
    }

    /// Records that renaming `index` made `self` canonical.
    pub(crate) fn set_renaming(&mut self, index: u16) {
        self.provenance.renaming = Some(index);
    }

    /// Forgets what `self` has of its parent's.
    pub(crate) fn forget_lineage(&mut self) {
        debug_assert!(self.provenance.partial.is_none(), "a partial state renamed");
        self.provenance.lineage = Lineage::Unknown;
    }

    /// The stamp under which the flight recorder last recorded `self` as a
    /// step's pre-state (see
    /// [`crate::run::recorder::Recorder::begin_step_stamped`]), unless
    /// `self` was made, copied into, decoded into or completed since: the
    /// recorder may then hold its encoding still, and it need be neither
    /// compared nor encoded again. A state changed through its public
    /// fields keeps its stamp: only states changed by the World and the
    /// search are stepped under a recorder.
    pub(crate) fn recorded_as(&self) -> Option<NonZeroU64> {
        NonZeroU64::new(self.provenance.recorded_as.load(Ordering::Relaxed))
    }

    /// Records that the flight recorder holds `self` under `stamp`.
    pub(crate) fn set_recorded_as(&self, stamp: NonZeroU64) {
        self.provenance
            .recorded_as
            .store(stamp.get(), Ordering::Relaxed);
    }

    /// Forgets the recorder's stamp: `self` is about to change.
    pub(super) fn forget_recording(&mut self) {
        *self.provenance.recorded_as.get_mut() = 0;
    }

    /// Makes `self` the start of a *partial* successor of `parent` by a step
    /// that changes node `kept` only (if any): `parent`'s environment and
    /// node `kept` are copied, the other nodes are not (they keep whatever
    /// `self` held; their number is the parent's). Until
    /// [`WorldState::complete_from`] makes it whole, such a state may be
    /// stepped at node `kept`, read by [`WorldState::encode_successor`], or
    /// overwritten, nothing else: its other nodes are not the state's.
    /// Most successors the search makes are states it has seen before,
    /// which it only encodes: their unchanged nodes need not be copied.
    pub(crate) fn copy_for_step(&mut self, parent: &WorldState, kept: Option<u8>) {
        debug_assert!(parent.is_whole(), "a partial state's successor");
        let nodes = &parent.nodes;
        self.nodes.resize_with(nodes.len(), NodeState::default);
        // An action naming no node of the state is refused by the step.
        if let Some(node) = kept.map(usize::from).filter(|&node| node < nodes.len()) {
            self.nodes[node].clone_from(&nodes[node]);
        }
        self.copy_environment(parent);
        self.provenance.partial = Some(PartialNodes { kept });
    }

    /// Makes `self`, a successor of `parent` that may be partial (see
    /// [`WorldState::copy_for_step`]), whole: copies the nodes it does not
    /// hold from `parent`. Nothing for a whole state.
    pub(crate) fn complete_from(&mut self, parent: &WorldState) {
        let Some(PartialNodes { kept }) = self.provenance.partial.take() else {
            return;
        };
        self.forget_recording();
        debug_assert_eq!(
            self.provenance.lineage,
            Lineage::Step { changed: kept },
            "a partial state is a step's successor"
        );
        for (id, (node, theirs)) in self.nodes.iter_mut().zip(&parent.nodes).enumerate() {
            if kept.map(usize::from) != Some(id) {
                node.clone_from(theirs);
            }
        }
    }

    /// Whether `self` is whole: not a partial successor (see
    /// [`WorldState::copy_for_step`]).
    pub(crate) fn is_whole(&self) -> bool {
        self.provenance.partial.is_none()
    }

    /// Appends the encoding of `self`, a successor of `parent`, which was
    /// decoded from `parent_bytes` and not changed since: the same bytes as
    /// [`Encode::encode`], but each node equal to the parent's node of the
    /// same id, and the fields after the network when all equal the
    /// parent's, are copied from `parent_bytes` rather than encoded (a step
    /// changes one node at most, and the history or the budgets seldom).
    /// What [`WorldState::mark_step_successor`] says the step left alone is
    /// taken as equal without a comparison.
    pub(crate) fn encode_successor(
        &self,
        parent: &WorldState,
        parent_bytes: &[u8],
        out: &mut Vec<u8>,
    ) {
        let layout = &parent.provenance.layout;
        let decoded_from_these = layout.node_ends.len() == parent.nodes.len()
            && !layout.node_ends.is_empty()
            && layout.end as usize == parent_bytes.len();
        if !decoded_from_these || self.nodes.len() != parent.nodes.len() {
            return match self.provenance.partial {
                None => self.encode(out),
                Some(PartialNodes { kept }) => {
                    let nodes = (0..parent.nodes.len()).map(|id| match kept {
                        Some(node) if usize::from(node) == id => &self.nodes[id],
                        _ => &parent.nodes[id],
                    });
                    let count = u32::try_from(parent.nodes.len()).expect("at most u32::MAX nodes");
                    out.extend_from_slice(&count.to_le_bytes());
                    nodes.for_each(|node| node.encode(out));
                    self.encode_environment(out);
                }
            };
        }
        let count = u32::try_from(self.nodes.len()).expect("at most u32::MAX nodes");
        out.extend_from_slice(&count.to_le_bytes());
        // Runs of unchanged nodes are copied in one piece.
        let mut unchanged_from = None;
        let mut start = size_of::<u32>();
        let nodes = self.nodes.iter().zip(&parent.nodes).zip(&layout.node_ends);
        for (id, ((node, before), &end)) in nodes.enumerate() {
            // A partial successor's other nodes are its parent's.
            let may_differ = match (self.provenance.partial, self.provenance.lineage) {
                (Some(PartialNodes { kept: changed }), _) | (None, Lineage::Step { changed }) => {
                    changed.map(usize::from) == Some(id)
                }
                (None, Lineage::Unknown) => true,
            };
            debug_assert!(
                may_differ || self.provenance.partial.is_some() || node == before,
                "n{id} changed by a step that cannot"
            );
            if !may_differ || node == before {
                unchanged_from.get_or_insert(start);
            } else {
                if let Some(from) = unchanged_from.take() {
                    out.extend_from_slice(&parent_bytes[from..start]);
                }
                node.encode(out);
            }
            start = end as usize;
        }
        if let Some(from) = unchanged_from {
            out.extend_from_slice(&parent_bytes[from..start]);
        }
        self.net.encode(out);
        if self.after_network_equals(parent) {
            out.extend_from_slice(&parent_bytes[layout.net_end as usize..]);
        } else {
            self.encode_environment_after_net(&self.cut_links, |node| node, self.ghost.vars(), out);
        }
    }

    /// Appends the encoding of every field but the nodes: what follows the
    /// nodes in the state's encoding.
    pub(crate) fn encode_environment(&self, out: &mut Vec<u8>) {
        self.net.encode(out);
        self.encode_environment_after_net(&self.cut_links, |node| node, self.ghost.vars(), out);
    }

    /// Appends what follows the network in the encoding of the environment,
    /// with the cut links `cut_links` in place of `self`'s, each ghost
    /// entry's node `n` renamed `node(n)` and `vars` in place of the ghost
    /// variables' bytes (the other fields hold no node ids): the rest of the encoding of the environment so changed, without
    /// changing it.
    pub(crate) fn encode_environment_after_net(
        &self,
        cut_links: &[(u8, u8)],
        node: impl Fn(u8) -> u8 + Copy,
        vars: &[u8],
        out: &mut Vec<u8>,
    ) {
        let (_, _, _, budgets, issued, ghost, lost_in_crash) = self.fields();
        encode_sequence(cut_links, out);
        budgets.encode(out);
        issued.encode(out);
        ghost.encode_renamed(node, vars, out);
        encode_sequence(lost_in_crash, out);
    }

    /// Whether every field after the network equals `parent`'s (the history
    /// entries compared by length alone when `self` is known to be
    /// `parent`'s step successor, see [`Lineage::Step`]; the ghost
    /// variables always byte for byte).
    pub(super) fn after_network_equals(&self, parent: &WorldState) -> bool {
        let (_, _, cut_links, budgets, issued, ghost, lost_in_crash) = self.fields();
        let (_, _, their_cuts, their_budgets, their_issued, their_ghost, their_lost) =
            parent.fields();
        let same_entries = match self.provenance.lineage {
            // Entries are only appended by a step: the same number, the same entries.
            Lineage::Step { .. } => {
                let same = ghost.len() == their_ghost.len();
                debug_assert!(
                    !same || ghost[..] == their_ghost[..],
                    "a step rewrote history entries"
                );
                same
            }
            Lineage::Unknown => ghost[..] == their_ghost[..],
        };
        // Ghost variables may change without an entry appended: compared
        // byte for byte, never by the history's length.
        let same_history =
            ghost.same_summary(their_ghost) && same_entries && ghost.same_vars(their_ghost);
        issued == their_issued
            && budgets == their_budgets
            && same_items(cut_links, their_cuts)
            && same_items(lost_in_crash, their_lost)
            && same_history
    }
}
