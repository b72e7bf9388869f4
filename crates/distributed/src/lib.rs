//! Distributed breadth-first search of cmc models on timely dataflow.
//!
//! The search of [`cmc_search`]'s native engine, spread over timely workers
//! (threads of one process, or threads of several processes, on one or many
//! machines): every worker owns a shard of the fingerprint space, successors
//! are sent to their owner as canonical bytes ([`cmc_model::Encode`]), and
//! each BFS level is a round of the dataflow. So the distinct-state count,
//! the generated-state count and the depth are exactly the native engine's,
//! for every worker and process count, and the counterexample of a violation
//! is a shortest one, chosen by the native engine's rule (the whole level is
//! finished; the least violation by length, property, then fingerprint),
//! rebuilt from the parent links each shard keeps.
//!
//! Processes start as timely clusters do: the same program on each host with
//! the same hostfile ([`Cluster`]); each connects to its peers within a
//! deadline and refuses a peer that checks another model, other parameters
//! or runs another cmc version. Peers exchange heartbeats on connections of
//! their own; a peer that dies, or stays silent for the cluster's peer
//! timeout (stopped, hung, unreachable), ends the run on every surviving
//! process with [`DistributedError::PeerLost`].
//!
//! With [`cmc_search::SearchOptions::checkpoint`], every process saves its
//! workers' shards and level parts at a level boundary (all at the same
//! one), and a run resumes from there on the same cluster shape
//! ([`checkpoint_model`] names the model saved).
//!
//! # Running on k machines
//!
//! Each machine needs the same `cmc` binary (and, for a user's own model,
//! the same program; for a World, the same core libraries at the same
//! paths: their digests are part of what peers must agree on), a copy of
//! the hostfile listing every process's `host:port` in process order, and
//! that port open to the other machines. Start `cmc check MODEL PARAMS
//! --engine timely --workers T --processes K --process I --hostfile FILE`
//! on each, with I = 0..K-1; each waits `--connect-timeout` seconds for its
//! peers. Every process prints the same report. Each process holds its
//! shards' parent links (40 bytes a slot, at most 60% full) and its part of
//! a level in memory. See the crate's README for what to expect.
//!
//! ```
//! use cmc_model::{Encode, Model};
//! use cmc_search::SearchOptions;
//!
//! struct Counter;
//! #[derive(Clone, Debug, Encode)]
//! struct Count { value: u8 }
//! impl Model for Counter {
//!     type State = Count;
//!     type Action = ();
//!     fn name(&self) -> String { "counter".into() }
//!     fn init_states(&self, out: &mut Vec<Count>) { out.push(Count { value: 0 }) }
//!     fn actions(&self, _: &Count, out: &mut Vec<()>) { out.push(()) }
//!     fn next_state(&self, s: &Count, _: &()) -> Option<Count> {
//!         (s.value < 9).then(|| Count { value: s.value + 1 })
//!     }
//!     fn is_terminal(&self, s: &Count) -> bool { s.value == 9 }
//! }
//!
//! let options = SearchOptions { workers: 2, ..SearchOptions::default() };
//! let run = cmc_distributed::check(std::sync::Arc::new(Counter), &options, None).unwrap();
//! assert_eq!(run.outcome.stats.distinct_states, 10);
//! assert_eq!(run.outcome.stats.depth, 10);
//! ```

mod checkpoint;
mod cluster;
mod liveness;
mod run;
mod shard;
mod wire;
mod worker;

pub use checkpoint::checkpoint_model;
pub use cluster::{Cluster, DEFAULT_PEER_TIMEOUT};
pub use run::{check, identity, DistributedRun, Exchange};

/// Why a distributed search could not be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistributedError {
    /// The options ask for something this engine does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The hostfile, an address or a connection is wrong.
    #[error("{0}")]
    Setup(String),
    /// A peer checks another model, other parameters or another version.
    #[error("process {peer} checks `{theirs}`, but process {process} checks `{ours}`; start every process with the same model, parameters, options and cmc version")]
    Mismatch {
        /// This process.
        process: usize,
        /// The peer refused.
        peer: usize,
        /// What this process checks.
        ours: String,
        /// What the peer checks.
        theirs: String,
    },
    /// A peer process died or its connection broke during the run.
    #[error("{0}")]
    PeerLost(String),
    /// A checkpoint cannot be written, read, or resumed by this run.
    #[error("{0}")]
    Checkpoint(String),
}
