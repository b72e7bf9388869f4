//! The search layer of cmc: strategies, verdicts, counterexamples and reports (see `ARCHITECTURE.md`).
//!
//! A [`Checker`] explores any [`cmc_model::Model`]:
//! - breadth-first with many workers ([`Strategy::Bfs`]): exact distinct-state
//!   counts and a shortest counterexample for every worker count;
//! - depth-first with a depth bound ([`Strategy::Dfs`]);
//! - random walks from a seed ([`Strategy::Simulate`]);
//! - and [`replay`] of a recorded action sequence ([`ReplayFile`]).
//!
//! Each strategy implements one interface in a file of its own
//! (`strategy.rs` has the interface and the list).
//!
//! ```
//! use cmc_model::{Encode, Model, Property};
//! use cmc_search::{Checker, Verdict};
//!
//! /// A counter that may be incremented up to a limit.
//! struct Counter { limit: u8 }
//! #[derive(Clone, Debug, PartialEq, Encode)]
//! struct Count { value: u8 }
//!
//! impl Model for Counter {
//!     type State = Count;
//!     type Action = ();
//!     fn name(&self) -> String { "counter".into() }
//!     fn init_states(&self, out: &mut Vec<Count>) { out.push(Count { value: 0 }) }
//!     fn actions(&self, _: &Count, out: &mut Vec<()>) { out.push(()) }
//!     fn next_state(&self, s: &Count, _: &()) -> Option<Count> {
//!         (s.value < self.limit).then(|| Count { value: s.value + 1 })
//!     }
//!     fn is_terminal(&self, s: &Count) -> bool { s.value == self.limit }
//!     fn properties(&self) -> Vec<Property<Self>> {
//!         vec![Property::always("below 3", |_, s: &Count| s.value < 3)]
//!     }
//! }
//!
//! let outcome = Checker::new(Counter { limit: 5 }).run();
//! assert!(matches!(outcome.verdict, Verdict::Violated { .. }));
//! assert_eq!(outcome.counterexample.unwrap().len(), 4); // 0, 1, 2, 3
//! ```

mod any_model;
mod bfs;
mod checker;
mod checkpoint;
mod counterexample;
mod coverage;
mod dfs;
mod disk_batch;
mod dot;
mod expand;
mod html;
mod kind_mix;
mod options;
mod outcome;
mod progress;
mod properties;
mod reduction;
mod render;
mod replay;
mod replay_file;
mod report;
mod round_trip;
pub mod sealed;
mod simulate;
mod sleep;
mod strategy;
mod swarm;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod time_limit;
mod view_bfs;
mod visit;

/// The examples of `docs/rust-models.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/rust-models.md")]
#[cfg(doctest)]
pub struct RustModelsDoctests;

pub use any_model::AnyModel;
pub use checker::Checker;

/// The model name and parameters of the checkpoint in `dir`, so that a
/// front end can build the model before resuming it.
pub fn checkpoint_model(dir: &std::path::Path) -> Result<(String, Vec<(String, String)>), String> {
    checkpoint::CheckpointDir::model_of(dir)
}
pub use counterexample::{Counterexample, PathStep, TraceStep};
pub use coverage::{Coverage, KindCount};
pub use dot::{state_graph_dot, DotError};
pub use expand::same_bytes;
pub use html::escape_html;
pub use options::{CheckpointOptions, FrontierWalks, ProgressMode, SearchOptions, WalksFrom};
pub use outcome::{Outcome, ReductionStats, Stats, Verdict, ViolationKind, WalkStats};
pub use properties::{Failure, PropertySet};
pub use render::run_header;
pub use replay::replay;
pub use replay_file::{
    escape, unescape, ReplayError, ReplayFile, REPLAY_FORMAT_VERSION, REPLAY_LINE_MAX_BYTES,
    REPLAY_WRITTEN_BY,
};
pub use report::{
    CounterexampleReport, CoverageReport, FieldChangeReport, KindCoverageReport, Report,
    StepReport, WalksReport,
};
pub use simulate::current_walk;
pub use strategy::{RandomWalks, Strategy};
pub use time_limit::within_time_limit;
