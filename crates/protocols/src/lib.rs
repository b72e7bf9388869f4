//! Reference protocol cores of cmc, their properties and planted bugs.
//!
//! - [`two_phase`]: two-phase commit, in C (`c/two_phase.c`), loaded from its
//!   shared library;
//! - [`paxos`]: single-decree Paxos with register clients, in Rust;
//! - [`primary_backup`]: a primary-backup log with view change, in Rust;
//! - [`abd`]: a replicated read/write register (multi-writer ABD), in Rust;
//! - [`raft`]: Raft's leader election and log replication, in Rust.
//!
//! The planted-bug gate of these cores is the gate file `gate.toml` next to
//! this crate's manifest (`cmc gate crates/protocols/gate.toml`): each
//! configuration, its control and every planted bug with the property that
//! must catch it and its budgets.

pub mod abd;
mod leader;
mod node_parts;
pub mod paxos;
pub mod primary_backup;
mod quorum;
pub mod raft;
pub mod two_phase;
mod variants;
mod wire;

pub use wire::Replies;

use std::sync::Arc;

use cmc_world::catalog::{CoreCatalog, CoreEntry};
use cmc_world::core::abi::Config;
use cmc_world::Core;

/// Servers (Paxos servers, ABD replicas) when `cfg1` is 0.
pub const SERVERS_DEFAULT: u32 = 3;

/// The number of servers configured in `params` (`cfg1`, default
/// [`SERVERS_DEFAULT`]); the nodes after them are clients.
pub fn servers(params: &[u64]) -> u32 {
    match params[1] {
        0 => SERVERS_DEFAULT,
        servers => servers as u32,
    }
}

/// Whether this node is a server: the first [`servers`] nodes are, the rest
/// are clients.
pub fn is_server(config: &Config) -> bool {
    config.node < servers(&config.params)
}

/// The Rust reference cores and their number of planted bugs.
pub const RUST_CORES: &[(&str, u32)] = &[
    ("paxos", paxos::BUGS),
    ("primary_backup", primary_backup::BUGS),
    ("abd", abd::BUGS),
    ("raft", raft::BUGS),
];

/// The name a Rust core variant goes by in replay files and `--core`:
/// `rust:NAME` for the control, `rust:NAME-bugN` for planted bug `N`.
pub fn rust_core_name(core: &str, bug: u32) -> String {
    match bug {
        0 => format!("rust:{core}"),
        bug => format!("rust:{core}-bug{bug}"),
    }
}

/// The Rust core variant called `name` (as [`rust_core_name`] spells it).
pub fn rust_core(name: &str) -> Option<Arc<dyn Core>> {
    let name = name.strip_prefix("rust:")?;
    let (core, bug) = match name.split_once("-bug") {
        Some((core, bug)) => (core, bug.parse().ok().filter(|bug| *bug > 0)?),
        None => (name, 0),
    };
    match core {
        "paxos" => paxos::properties::core(bug),
        "primary_backup" => primary_backup::core(bug),
        "abd" => abd::core(bug),
        "raft" => raft::core(bug),
        _ => None,
    }
}

/// These reference cores as a catalog for the World's command line
/// (`--core rust:paxos-bug2`, replay files of gate evidence), each with
/// the properties of its protocol (ABD's with the summary of the client
/// history they read, as [`abd::world`] builds it), and the C two-phase
/// commit core's properties for its library (`two_phase`).
pub fn catalog() -> CoreCatalog {
    let rust = |name: &str, bugs: u32, make: fn(u32) -> Option<Arc<dyn Core>>| {
        CoreEntry::shared(name, bugs, move |bug| {
            make(bug).expect("every planted bug up to BUGS has a core")
        })
    };
    CoreCatalog::new()
        .with(
            rust("paxos", paxos::BUGS, paxos::properties::core)
                .summary("single-decree Paxos with register clients")
                .properties(paxos::properties::properties),
        )
        .with(
            rust("primary_backup", primary_backup::BUGS, primary_backup::core)
                .summary("a primary-backup log with view change")
                .properties(primary_backup::properties),
        )
        .with(
            rust("abd", abd::BUGS, abd::core)
                .summary("a replicated read/write register (multi-writer ABD)")
                .equip(abd::equip),
        )
        .with(
            rust("raft", raft::BUGS, raft::core)
                .summary("Raft's leader election and log replication")
                .properties(raft::properties)
                .equip(raft::votes::with_vote_once),
        )
        .with(
            CoreEntry::library("two_phase")
                .summary("two-phase commit in C (crates/protocols/c/two_phase.c)")
                .properties(two_phase::properties),
        )
}
