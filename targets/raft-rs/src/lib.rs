//! raft-rs (the `raft` crate 0.7), from the crate registry and unchanged,
//! checked by cmc as a heap-state core.
//!
//! [`RaftAdapter`] drives a `RawNode` over `MemStorage` from the World's
//! events and maps its `Ready` to PERSIST/FLUSH with the library's
//! asynchronous contract (see [`adapter`]). [`properties`] are the
//! log-replication properties of `cmc-log-properties`.
//!
//! raft 0.5.0, whose `must_sync` ignored newly appended entries (raft-rs
//! #128 upstream, fixed in 0.6.0), cannot be a dependency on this toolchain:
//! Cargo rejects its index entry ("version 0.5.0's index entry is
//! invalid"). [`RaftAdapter::sync_ignores_entries`] plants the same mistake
//! in the adapter's sync handling instead.

pub mod adapter;
pub mod codec;

use std::sync::Arc;

use cmc_log_properties::{Entry, Replica};
use cmc_model::Property;
use cmc_world::heap::HeapCore;
use cmc_world::system::inspect::NodeView;
use cmc_world::system::spec::SpecError;
use cmc_world::{World, WorldSpec};

pub use adapter::RaftAdapter;

/// Peers in the checked clusters.
pub const PEERS: usize = 3;

/// A new core over `adapter` (a new journal: one per check).
pub fn core(adapter: RaftAdapter) -> HeapCore<RaftAdapter> {
    HeapCore::new(adapter)
}

/// A World of [`PEERS`] peers running `adapter`, with `words` and
/// [`properties`].
pub fn world(adapter: RaftAdapter, words: &[&str]) -> Result<World, SpecError> {
    let mut spec = WorldSpec::new(Arc::new(core(adapter)), PEERS)?;
    spec.set_all(words)?;
    Ok(World::new(spec).with_properties(properties()))
}

/// The replica a live node holds: its client entries (a leader's no-op
/// entries carry no request and are left out), how many of them are
/// committed, its term and whether it leads.
pub fn replica(_node: usize, view: &NodeView<'_>) -> Replica {
    let volatile = view.volatile;
    let (hs, entries) = adapter::from_image(&volatile[adapter::view::DISK..adapter::view::LEADER]);
    let client = |entries: &[raft::eraftpb::Entry]| {
        entries
            .iter()
            .filter_map(|e| {
                codec::request_of(e).map(|request| Entry {
                    term: Some(e.term),
                    value: u32::from(request),
                })
            })
            .collect::<Vec<_>>()
    };
    let committed = (hs.commit as usize).min(entries.len());
    Replica {
        term: hs.term,
        leader: volatile[adapter::view::LEADER] == 1,
        log: client(&entries),
        decided: client(&entries[..committed]).len(),
    }
}

/// The log-replication properties, over [`replica`].
pub fn properties() -> Vec<Property<World>> {
    cmc_log_properties::properties(Arc::new(replica))
}
