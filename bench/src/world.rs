//! The World rows of issue 15: cores composed with the hostile environment,
//! checked by cmc's BFS, in the configurations the World's tests and the
//! reference gate use.

use std::sync::Arc;

use cmc_search::Checker;
use cmc_world::cores::reqack::{self, ReqAck};
use cmc_world::{World, WorldSpec};

use crate::sample::Sample;

/// A World configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldCase {
    /// The built-in request/acknowledge core, 3 nodes, as
    /// `crates/world/examples/throughput.rs` runs it.
    ReqAck,
    /// Two-phase commit in C (`cmc-protocols`), the gate's control
    /// configuration: 3 nodes, one request, a crash and a restart.
    TwoPhaseC,
    /// Paxos in Rust (`cmc-protocols`), the gate's control configuration:
    /// 5 nodes, a crash and a restart among the servers, depth 16.
    Paxos,
    /// ABD in Rust with its linearizability history (`cmc-protocols`), the
    /// gate's control configuration: 5 nodes, a write and a read, a replica
    /// crash and restart, symmetric replicas, depth 17.
    Abd,
}

/// Every World configuration, in table order.
pub const WORLD_CASES: [WorldCase; 4] = [
    WorldCase::ReqAck,
    WorldCase::TwoPhaseC,
    WorldCase::Paxos,
    WorldCase::Abd,
];

impl WorldCase {
    /// The word naming the case on a child's command line.
    pub fn word(self) -> &'static str {
        match self {
            WorldCase::ReqAck => "reqack",
            WorldCase::TwoPhaseC => "two-phase-c",
            WorldCase::Paxos => "paxos",
            WorldCase::Abd => "abd",
        }
    }

    /// The case a command-line word names.
    pub fn from_word(word: &str) -> Option<WorldCase> {
        WORLD_CASES.into_iter().find(|case| case.word() == word)
    }

    /// The configuration as the table shows it.
    pub fn params(self) -> String {
        let (nodes, params, depth) = self.configuration();
        let depth = depth.map_or(String::new(), |depth| format!(" max-depth={depth}"));
        format!("{} nodes {}{depth}", nodes, params.join(" "))
    }

    /// Nodes, World parameters and depth bound.
    fn configuration(self) -> (usize, &'static [&'static str], Option<u64>) {
        match self {
            WorldCase::ReqAck => (
                3,
                &[
                    "requests=2",
                    "dups=1",
                    "crashes=1",
                    "restarts=1",
                    "crash_nodes=1",
                ],
                None,
            ),
            WorldCase::TwoPhaseC => (3, &["requests=1", "crashes=1", "restarts=1"], None),
            WorldCase::Paxos => (
                5,
                &["crash_nodes=0,1,2", "crashes=1", "restarts=1"],
                Some(16),
            ),
            WorldCase::Abd => (
                5,
                &[
                    "requests=2",
                    "crash_nodes=0,1,2",
                    "crashes=1",
                    "restarts=1",
                    "symmetry=0,1,2",
                ],
                Some(17),
            ),
        }
    }

    /// The World with its properties.
    fn world(self) -> Result<World, String> {
        let (nodes, params, _) = self.configuration();
        match self {
            WorldCase::ReqAck => {
                let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), nodes)?;
                spec.set_all(params)?;
                Ok(World::new(spec).with_properties(reqack::properties()))
            }
            WorldCase::TwoPhaseC => cmc_protocols::two_phase::world(0, nodes, params),
            WorldCase::Paxos => cmc_protocols::paxos::properties::world(0, nodes, params),
            WorldCase::Abd => cmc_protocols::abd::properties::world(0, nodes, params),
        }
    }

    /// Whether a state without enabled actions is checked as a deadlock
    /// (as the World's tests and the gate do).
    fn check_deadlock(self) -> bool {
        self == WorldCase::ReqAck
    }
}

/// Checks `case` with cmc's BFS on `workers` workers, in this process (the
/// library path: no supervising parent; C cores run guarded).
pub fn check(case: WorldCase, workers: usize) -> Sample {
    let world = case
        .world()
        .unwrap_or_else(|problem| panic!("cannot build the World {}: {problem}", case.word()));
    let mut checker = Checker::new(world)
        .workers(workers)
        .check_deadlock(case.check_deadlock());
    if let (_, _, Some(depth)) = case.configuration() {
        checker = checker.max_depth(depth);
    }
    crate::cmc::run(checker)
}
