//! Reference protocol cores of cmc, their properties, planted bugs, and the
//! planted-bug gate.
//!
//! - [`two_phase`]: two-phase commit, in C (`c/two_phase.c`), loaded from its
//!   shared library;
//! - [`paxos`]: single-decree Paxos with register clients, in Rust;
//! - [`primary_backup`]: a primary-backup log with view change, in Rust;
//! - [`abd`]: a replicated read/write register (multi-writer ABD), in Rust;
//! - [`gate`]: the gate that runs every control and every planted bug.
//!
//! [`references`] lists the cores with their gate configurations and budgets.

pub mod abd;
mod after_flush;
pub mod gate;
pub mod paxos;
pub mod primary_backup;
pub mod two_phase;
mod wire;

use std::sync::Arc;

use cmc_world::Core;

use gate::{PlantedBug, Reference};

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
            references()
                .iter()
                .filter(|reference| reference.language == "Rust")
                .flat_map(|reference| {
                    std::iter::once(0)
                        .chain(reference.bugs.iter().map(|bug| bug.bug))
                        .map(|bug| rust_core_name(reference.core, bug)["rust:".len()..].to_string())
                })
                .collect()
        },
        properties_for,
    }
}

/// The properties of the reference protocol that every node of `spec` runs,
/// recognised by the core's name and state sizes; empty for other cores.
pub fn properties_for(spec: &cmc_world::WorldSpec) -> Vec<cmc_model::Property<cmc_world::World>> {
    let runs = |name: &str, reference: Option<Arc<dyn Core>>| {
        spec.cores.iter().all(|core| {
            core.name() == name
                && reference.as_ref().is_none_or(|r| {
                    r.durable_size() == core.durable_size()
                        && r.volatile_size() == core.volatile_size()
                })
        })
    };
    if runs("paxos", paxos::properties::core(0)) {
        paxos::properties::properties()
    } else if runs("primary_backup", primary_backup::core(0)) {
        primary_backup::properties()
    } else if runs("abd", abd::core(0)) {
        abd::properties()
    } else if runs("two_phase", None) {
        two_phase::properties()
    } else {
        Vec::new()
    }
}

/// Every reference core with its gate configuration and planted bugs.
pub fn references() -> Vec<Reference> {
    vec![
        Reference {
            core: "two_phase",
            language: "C",
            nodes: 3,
            params: &["requests=1", "crashes=1", "restarts=1"],
            control_depth: None,
            check_deadlock: false,
            bugs: &[
                PlantedBug {
                    bug: 1,
                    summary: "replies COMMITTED before the decision is flushed",
                    expected: "NoCommitReplyBeforeFlush",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 2,
                    summary: "commits on one YES vote too few",
                    expected: "Validity",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 3,
                    summary: "RM votes YES before PREPARED is flushed",
                    expected: "Validity",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 4,
                    summary: "restarted coordinator answers STATUS from memory",
                    expected: "Agreement",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
            ],
            world: two_phase::world,
        },
        Reference {
            core: "paxos",
            language: "Rust",
            nodes: 5,
            params: &["crash_nodes=0,1,2", "crashes=1", "restarts=1"],
            control_depth: Some(16),
            check_deadlock: false,
            bugs: &[
                PlantedBug {
                    bug: 1,
                    summary: "acceptor replies before its promise is flushed",
                    expected: "PromiseDurable",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 2,
                    summary: "restarted acceptor forgets its promised ballot",
                    expected: "PromiseDurable",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 3,
                    summary: "accept quorum off by one",
                    expected: "LearnedIsChosen",
                    max_depth: 30,
                    max_states: 1_000_000,
                },
                PlantedBug {
                    bug: 4,
                    summary: "leader ignores accepted proposals in Prepared",
                    expected: "AtMostOneChosen",
                    max_depth: 40,
                    max_states: 3_000_000,
                },
            ],
            world: paxos::world,
        },
        Reference {
            core: "primary_backup",
            language: "Rust",
            nodes: 3,
            params: &["requests=1", "crashes=1", "restarts=1"],
            control_depth: None,
            check_deadlock: false,
            bugs: &[
                PlantedBug {
                    bug: 1,
                    summary: "backup acks before its log is flushed",
                    expected: "CommittedSurvives",
                    max_depth: 20,
                    max_states: 100_000,
                },
                PlantedBug {
                    bug: 2,
                    summary: "commit quorum off by one",
                    expected: "CommittedSurvives",
                    max_depth: 20,
                    max_states: 100_000,
                },
                PlantedBug {
                    bug: 3,
                    summary: "election quorum off by one",
                    expected: "OnePrimaryPerView",
                    max_depth: 20,
                    max_states: 100_000,
                },
                PlantedBug {
                    bug: 4,
                    summary: "new primary keeps its own log",
                    expected: "CommittedSurvives",
                    max_depth: 30,
                    max_states: 500_000,
                },
            ],
            world: primary_backup::world,
        },
        Reference {
            core: "abd",
            language: "Rust",
            nodes: 5,
            params: &[
                "requests=2",
                "crash_nodes=0,1,2",
                "crashes=1",
                "restarts=1",
                "symmetry=0,1,2",
            ],
            control_depth: Some(17),
            check_deadlock: false,
            bugs: &[
                PlantedBug {
                    bug: 2,
                    summary: "quorum off by one",
                    expected: "Linearizable",
                    max_depth: 17,
                    max_states: 200_000,
                },
                PlantedBug {
                    bug: 3,
                    summary: "a read keeps the first reply, not the highest",
                    expected: "Linearizable",
                    max_depth: 17,
                    max_states: 200_000,
                },
                PlantedBug {
                    bug: 5,
                    summary: "replica acks a store before its flush",
                    expected: "ReplyAfterFlush",
                    max_depth: 17,
                    max_states: 200_000,
                },
            ],
            world: abd::world,
        },
    ]
}
