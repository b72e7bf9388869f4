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
mod node_parts;
pub mod paxos;
pub mod primary_backup;
pub mod raft;
pub mod two_phase;
mod variants;
mod wire;

pub use wire::Replies;

use std::sync::Arc;

use cmc_world::core::abi::Config;
use cmc_world::cores::Equipped;
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

/// These reference cores for the World's command line (`--core rust:paxos-bug2`,
/// replay files of gate evidence): register it with
/// [`cmc_world::cores::register_catalog`].
pub fn catalog() -> cmc_world::cores::CoreCatalog {
    cmc_world::cores::CoreCatalog {
        rust_core: |name| rust_core(&format!("rust:{name}")),
        rust_core_names: || {
            RUST_CORES
                .iter()
                .flat_map(|(core, bugs)| {
                    (0..=*bugs).map(|bug| rust_core_name(core, bug)["rust:".len()..].to_string())
                })
                .collect()
        },
        equip,
    }
}

/// `world` with the properties of the reference protocol that all its nodes
/// run, recognised by the core's name and state sizes (ABD's with the
/// summary of the client history they read, as [`abd::world`] builds it);
/// `world` unchanged for other cores.
pub fn equip(world: cmc_world::World) -> Equipped {
    let runs = |name: &str, reference: Option<Arc<dyn Core>>| {
        world.spec().cores.iter().all(|core| {
            core.name() == name
                && reference.as_ref().is_none_or(|r| {
                    r.durable_size() == core.durable_size()
                        && r.volatile_size() == core.volatile_size()
                })
        })
    };
    if runs("paxos", paxos::properties::core(0)) {
        Equipped::Known(world.with_properties(paxos::properties::properties()))
    } else if runs("primary_backup", primary_backup::core(0)) {
        Equipped::Known(world.with_properties(primary_backup::properties()))
    } else if runs("raft", raft::core(0)) {
        Equipped::Known(world.with_properties(raft::properties()))
    } else if runs("abd", abd::core(0)) {
        Equipped::Known(abd::equip(world))
    } else if runs("two_phase", None) {
        Equipped::Known(world.with_properties(two_phase::properties()))
    } else {
        Equipped::Unknown(world)
    }
}
