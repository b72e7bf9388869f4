//! What to search and how.

use std::path::PathBuf;

/// The exploration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Breadth-first, level by level: exact counts, shortest counterexamples.
    Bfs,
    /// Depth-first from each initial state (one worker), bounded by
    /// [`SearchOptions::max_depth`] when set. A state first met deep in one
    /// branch is not re-expanded when met shallower in another, so with a
    /// depth bound DFS may miss states that BFS with the same bound finds.
    Dfs,
    /// `walks` random walks of at most `walk_length` steps; walk `i` is drawn
    /// from a generator seeded by `(seed, i)`, so a seed gives the same walks
    /// for every worker count.
    Simulate {
        /// Number of walks.
        walks: u64,
        /// Most steps per walk.
        walk_length: u64,
        /// The seed.
        seed: u64,
    },
}

/// How progress is shown while a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nothing (the default for library use and tests).
    Off,
    /// A live line on a terminal, plain periodic lines otherwise (on stderr).
    Auto,
    /// Plain periodic lines on stderr.
    Plain,
}

/// Options of one search; build them through [`crate::Checker`] or directly.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The exploration order.
    pub strategy: Strategy,
    /// Worker threads (BFS and simulation; DFS uses one). At least 1.
    pub workers: usize,
    /// Deepest level to explore, in TLC's convention (initial states are
    /// depth 1); `None` for no bound.
    pub max_depth: Option<u64>,
    /// Whether a state with no enabled action (and not terminal) is an error.
    pub check_deadlock: bool,
    /// How progress is shown.
    pub progress: ProgressMode,
    /// Where the trace log of parent links is kept (default: the system's
    /// temporary directory).
    pub trace_dir: Option<PathBuf>,
    /// Initial number of slots of the fingerprint table (it grows as needed).
    pub table_capacity: usize,
    /// Whether every successor is computed twice and the two encodings
    /// compared, so that a model whose steps depend on anything but the state
    /// is reported as non-deterministic at the step that showed it.
    pub check_determinism: bool,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            strategy: Strategy::Bfs,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_depth: None,
            check_deadlock: true,
            progress: ProgressMode::Off,
            trace_dir: None,
            table_capacity: 1 << 20,
            check_determinism: false,
        }
    }
}

impl SearchOptions {
    /// The strategy's name as reports print it.
    pub fn strategy_name(&self) -> &'static str {
        match self.strategy {
            Strategy::Bfs => "bfs",
            Strategy::Dfs => "dfs",
            Strategy::Simulate { .. } => "simulate",
        }
    }
}
