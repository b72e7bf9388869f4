//! omnipaxos, from the crate registry and unchanged, checked by cmc.
//!
//! [`OmniPaxosAdapter`] makes an omnipaxos server a heap-state core
//! (`cmc_world::heap`): the World's events drive its sans-IO API, its
//! `Storage` is a fixed layout the World persists and flushes, its messages
//! are encoded in 64 bytes. [`properties`] are the log-replication
//! properties of `cmc-log-properties`, read from the adapter's view.
//!
//! This source is compiled twice: by this package against omnipaxos 0.2.1
//! (the fixed release) and by `v0_2_0/` against 0.2.0, whose leader sends
//! a follower an `AcceptSync` from the longest log of the previous round
//! even when the follower holds less of it (upstream pull request 112).
//!
//! ```
//! use cmc_target_omnipaxos::scenario::{drive, ACCEPT_SYNC_SCHEDULE};
//! use cmc_target_omnipaxos::{world, BUG_CONFIGURATION};
//!
//! let world = world(&BUG_CONFIGURATION).unwrap();
//! let (states, violated) = drive(&world, ACCEPT_SYNC_SCHEDULE).unwrap();
//! assert_eq!(states.len(), ACCEPT_SYNC_SCHEDULE.len());
//! // 0.2.1 keeps every property along the run where 0.2.0 breaks one.
//! assert_eq!(violated, None);
//! ```

pub mod adapter;
pub mod codec;
pub mod scenario;
pub mod storage;

use std::sync::Arc;

use cmc_log_properties::{Entry, Replica};
use cmc_model::Property;
use cmc_search::{Checker, SearchOptions};
use cmc_world::heap::HeapCore;
use cmc_world::system::inspect::NodeView;
use cmc_world::system::spec::SpecError;
use cmc_world::{World, WorldSpec};

pub use adapter::OmniPaxosAdapter;

use crate::storage::{decode_ballot, Disk};

/// Servers in the checked clusters.
pub const SERVERS: usize = 3;

/// The configuration of [`scenario::ACCEPT_SYNC_SCHEDULE`], in which 0.2.0
/// decides different entries and 0.2.1 keeps every property: two client
/// appends (at any server), four ticks of the servers' clocks (each an
/// election round), no faults needed.
pub const BUG_CONFIGURATION: [&str; 3] = ["requests=2", "ticks=4", "clients=0,1,2"];

/// The configuration both releases are searched in: two client appends
/// (at any server), three ticks of the servers' clocks (each an election
/// round), one crash and one restart.
pub const SEARCH_CONFIGURATION: [&str; 5] = [
    "requests=2",
    "ticks=3",
    "crashes=1",
    "restarts=1",
    "clients=0,1,2",
];

/// Random walks from the initial state, pinned: [`WALKS`] walks of at most
/// [`WALK_LENGTH`] steps from seed 0, each weighing every action kind its
/// own way (`--swarm-kinds`), so that some hold heartbeats or one server's
/// clock back for long stretches, as the release with the bug needs.
/// Equivalent to `omnipaxos-check check --simulate --swarm-kinds --walks
/// 20000 --walk-length 80 --seed 0 --workers 1 --no-deadlock`.
pub fn walks(world: World) -> Checker<World> {
    let checker = Checker::new(world)
        .simulate(WALKS, WALK_LENGTH, 0)
        .workers(1)
        .check_deadlock(false);
    let options = SearchOptions {
        swarm_kinds: true,
        ..checker.search_options().clone()
    };
    checker.options(options)
}

/// Walks [`walks`] takes.
pub const WALKS: u64 = 20_000;
/// Most steps of one of [`walks`]' walks.
pub const WALK_LENGTH: u64 = 80;

/// A new core over the adapter (a new journal: one per check).
pub fn core() -> HeapCore<OmniPaxosAdapter> {
    HeapCore::new(OmniPaxosAdapter)
}

/// A World of [`SERVERS`] servers with `words` (`name=value` parameters)
/// and [`properties`].
pub fn world(words: &[&str]) -> Result<World, SpecError> {
    let mut spec = WorldSpec::new(Arc::new(core()), SERVERS)?;
    spec.set_all(words)?;
    Ok(properties()
        .into_iter()
        .fold(World::new(spec), World::with_property))
}

/// The replica live node `node` holds, read from its view.
pub fn replica(node: usize, view: &NodeView<'_>) -> Replica {
    let volatile = view.volatile;
    let disk = Disk::from_image(&volatile[adapter::view::DISK..adapter::view::LEADER]);
    let leader = decode_ballot(&volatile[adapter::view::LEADER..adapter::view::UNFLUSHED]);
    let ballot = |b: omnipaxos::ballot_leader_election::Ballot| {
        u64::from(b.n) << 16 | u64::from(b.priority) << 8 | b.pid
    };
    Replica {
        term: leader.map_or(0, ballot),
        leader: leader.is_some_and(|b| b.pid == codec::server(node as u32)),
        log: disk
            .log
            .iter()
            .map(|value| Entry {
                term: None,
                value: u32::from(value.0),
            })
            .collect(),
        decided: disk.decided_idx as usize,
    }
}

/// The log-replication properties, over [`replica`]. omnipaxos's entries
/// carry no term, so `LogMatching` holds vacuously; a ballot is the term.
pub fn properties() -> Vec<Property<World>> {
    cmc_log_properties::properties(Arc::new(replica))
}
