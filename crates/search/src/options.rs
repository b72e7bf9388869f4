//! What to search and how.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use crate::Strategy;

/// Where and how often a breadth-first search saves checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointOptions {
    /// The checkpoint directory (it also holds the trace log).
    pub dir: PathBuf,
    /// Time between two checkpoints (one is also saved on interrupt).
    pub interval: Duration,
    /// Whether to continue the search saved in `dir` instead of starting anew.
    pub resume: bool,
    /// Whether a new search may delete a checkpoint already in `dir` (else
    /// it refuses the directory).
    pub overwrite: bool,
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
    /// Memory the search may use, in bytes (`None`: no bound). Half is the
    /// most the fingerprint table may grow to, a quarter goes to the BFS
    /// frontier, beyond which it spills to disk; with fingerprints on disk,
    /// an eighth holds the candidates of a pass (and as much again settles
    /// them, see `disk_batch`).
    pub max_memory_bytes: Option<u64>,
    /// Whether the visited set keeps a bounded table in memory (its share of
    /// `max_memory_bytes`, or `table_capacity` slots) in front of a sorted
    /// run of fingerprints on disk, so that it can outgrow memory.
    pub fingerprints_on_disk: bool,
    /// Most distinct states a breadth-first search stores before it stops,
    /// reported as cut short (`None`: no bound). It stops at the first pause
    /// at or past the bound, so it may store a few thousand more; a level
    /// in which a violation was found is still finished.
    pub max_states: Option<u64>,
    /// Whether parent links are kept (32 bytes a distinct state, on disk) so
    /// that a counterexample can be rebuilt. Without them a breadth-first
    /// search still finds and reports a violation and its length, but not
    /// its trace (as TLC without a trace file).
    pub keep_trace: bool,
    /// Checkpoints of a breadth-first search, and resuming from one.
    pub checkpoint: Option<CheckpointOptions>,
    /// When this flag becomes true (e.g. from a SIGINT handler), the search
    /// stops at the next state boundary, saving a checkpoint if configured.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Longest the search may run: past it, the search stops at its next
    /// state boundary as if interrupted (saving a checkpoint if configured)
    /// and reports [`crate::Verdict::TimeLimit`] (`None`: no limit).
    pub time_limit: Option<Duration>,
    /// Whether every successor is computed twice and the two encodings
    /// compared, so that a model whose steps depend on anything but the state
    /// is reported as non-deterministic at the step that showed it; and
    /// whether every new state's encoding is decoded and checked to give the
    /// state back (always done in builds with debug assertions).
    pub check_determinism: bool,
    /// Random walks draw their own fault densities ([`crate::swarm`]).
    pub swarm: bool,
    /// Random walks draw their own weight for every action kind and choose
    /// among enabled actions in proportion to them (`kind_mix`); with
    /// `swarm` too, these weights decide.
    pub swarm_kinds: bool,
    /// Count, per action kind, how often it was enabled and taken.
    pub coverage: bool,
    /// Partial-order reduction (breadth-first search only): from each
    /// state, explore the persistent set of steps the model names (see
    /// [`cmc_model::Model::persistent_set`]) instead of every step, unless
    /// none of them leads one level deeper (the proviso). Verdicts of a
    /// complete search are kept; counts drop, a counterexample may be
    /// longer than the shortest (so a depth bound may cut it off), and with
    /// more than one worker the counts may vary from run to run (the
    /// proviso reads what the other workers stored).
    pub reduction: bool,
    /// Sleep sets (breadth-first search only): a step that an interleaving
    /// already explored covers is left asleep, neither computed nor
    /// followed (see [`cmc_model::Model::sleep_key`]). Every state is
    /// found, at the same depth: counts of distinct states, verdicts and
    /// counterexamples are those of the search without them; fewer steps
    /// are generated.
    pub sleep_sets: bool,
    /// After a breadth-first search stopped by `max_depth` without a
    /// violation, random walks from its frontier (the states of its last
    /// level); other strategies ignore it.
    pub frontier_walks: Option<FrontierWalks>,
    /// Random walks start from the last state of this trace (replayed
    /// first), not from an initial state.
    pub walks_from: Option<WalksFrom>,
    /// Random walks: only walk number `N` of the campaign is run, exactly
    /// as it runs among all (the same generator, start and mix), to find
    /// one walk again (see [`crate::current_walk`]).
    pub only_walk: Option<u64>,
}

/// A trace whose last state random walks start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalksFrom {
    /// Where the trace came from (a file name), as reports show it.
    pub label: String,
    /// The trace.
    pub file: crate::ReplayFile,
}

/// Random walks from the frontier of a depth-bounded breadth-first search:
/// `rounds` walks of at most `walk_length` steps from every state of the last
/// level; walk `i` starts from frontier state `i % frontier size` and draws
/// its choices from `(seed, i)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontierWalks {
    /// Most steps per walk.
    pub walk_length: u64,
    /// Walks from each frontier state.
    pub rounds: u64,
    /// The seed.
    pub seed: u64,
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
            max_memory_bytes: None,
            fingerprints_on_disk: false,
            max_states: None,
            keep_trace: true,
            checkpoint: None,
            interrupt: None,
            time_limit: None,
            swarm: false,
            swarm_kinds: false,
            coverage: false,
            reduction: false,
            sleep_sets: false,
            frontier_walks: None,
            walks_from: None,
            only_walk: None,
        }
    }
}

/// Bytes of one fingerprint table slot.
const TABLE_SLOT_BYTES: u64 = 16;

impl SearchOptions {
    /// Bytes the fingerprint table may take, if memory is bounded.
    pub fn table_memory_budget_bytes(&self) -> Option<u64> {
        self.max_memory_bytes.map(|bytes| bytes / 2)
    }

    /// Bytes of BFS frontier kept in memory before spilling to disk.
    pub fn frontier_memory_budget_bytes(&self) -> usize {
        self.max_memory_bytes.map_or(usize::MAX, |bytes| {
            usize::try_from(bytes / 4).unwrap_or(usize::MAX)
        })
    }

    /// Bytes of staged candidate states at which a breadth-first pass over
    /// fingerprints on disk pauses to settle them: an eighth of the memory
    /// budget, at least 1 MiB; 256 MiB when memory is not bounded.
    pub fn candidate_memory_budget_bytes(&self) -> usize {
        self.max_memory_bytes.map_or(256 << 20, |bytes| {
            usize::try_from(bytes / 8)
                .unwrap_or(usize::MAX)
                .max(1 << 20)
        })
    }

    /// Slots the fingerprint table's budget allows, when memory is bounded.
    fn budget_table_capacity(&self) -> Option<usize> {
        self.table_memory_budget_bytes()
            .map(|budget| usize::try_from(budget / TABLE_SLOT_BYTES).unwrap_or(usize::MAX))
    }

    /// Slots the in-memory fingerprint table starts with: `table_capacity`,
    /// or less when the budget allows less (it then grows up to the budget).
    /// A table sized to a large budget up front was measured slower (11.1 s
    /// against 6.7 s on two-phase RM=9): a sparse table spreads every probe
    /// over more memory.
    pub fn initial_table_capacity(&self) -> usize {
        self.budget_table_capacity()
            .map_or(self.table_capacity, |budget| {
                budget.min(self.table_capacity)
            })
    }

    /// Slots of the in-memory table in front of fingerprints kept on disk:
    /// all of the table's budget, or `table_capacity` when memory is not bounded.
    pub fn disk_set_table_capacity(&self) -> usize {
        self.budget_table_capacity().unwrap_or(self.table_capacity)
    }

    /// Where the trace log and frontier spill files go.
    pub fn spill_dir(&self) -> PathBuf {
        self.trace_dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// A fresh trace log for a search without checkpoints: a temporary file
    /// in [`spill_dir`](Self::spill_dir), or one that keeps no record when
    /// the trace is not kept.
    pub(crate) fn new_trace_log(&self) -> std::io::Result<cmc_store::TraceLog> {
        if self.keep_trace {
            cmc_store::TraceLog::create_in(&self.spill_dir())
        } else {
            Ok(cmc_store::TraceLog::discarding())
        }
    }

    /// Why these options cannot be searched together, if they cannot.
    pub fn conflict(&self) -> Option<&'static str> {
        let bfs = self.strategy == Strategy::Bfs;
        if self.checkpoint.is_some() && !bfs {
            Some("checkpoints are supported for breadth-first search only")
        } else if self.max_states.is_some() && !bfs {
            Some("a distinct-state budget (--max-states) bounds breadth-first search only")
        } else if !self.keep_trace && !bfs {
            Some("discarding the trace (--no-trace) is for breadth-first search only")
        } else if !self.keep_trace && self.checkpoint.is_some() {
            Some("a checkpoint holds the trace: --no-trace and --checkpoint do not go together")
        } else if self.reduction && !bfs {
            Some("partial-order reduction (--reduction) is for breadth-first search only")
        } else if self.reduction && (self.fingerprints_on_disk || self.max_memory_bytes.is_some()) {
            Some("partial-order reduction (--reduction) needs the visited set in memory: it does not go with --max-memory or fingerprints on disk")
        } else if self.reduction && self.checkpoint.is_some() {
            Some("partial-order reduction (--reduction) does not go with checkpoints")
        } else if self.sleep_sets && !bfs {
            Some("sleep sets (--sleep-sets) are for breadth-first search only")
        } else if self.sleep_sets && self.reduction {
            Some("sleep sets (--sleep-sets) and persistent sets (--reduction) are not combined: choose one")
        } else if self.sleep_sets
            && (self.fingerprints_on_disk
                || self.max_memory_bytes.is_some()
                || self.checkpoint.is_some())
        {
            Some("sleep sets (--sleep-sets) keep their sets in memory by level: they do not go with --max-memory, fingerprints on disk or checkpoints")
        } else if !self.keep_trace && self.frontier_walks.is_some() {
            Some("walks from the frontier start from its states' traces: --no-trace and --frontier-walks do not go together")
        } else {
            None
        }
    }
}

impl SearchOptions {
    /// The settings that can change a verdict, as `NAME` or `NAME=VALUE`
    /// (`max-depth=N`, `no-deadlock`, `check-determinism`, and for random
    /// walks `walks=N`, `walk-length=N`, `seed=N`): what a report's header
    /// line and a replay file record beside the model and its parameters.
    pub fn verdict_settings(&self) -> Vec<String> {
        let mut settings = Vec::new();
        self.strategy.describe().verdict_settings(&mut settings);
        if let Some(frontier) = self.frontier_walks {
            settings.push(format!("frontier-walks={}", frontier.walk_length));
            settings.push(format!("frontier-rounds={}", frontier.rounds));
            settings.push(format!("seed={}", frontier.seed));
        }
        if self.swarm {
            settings.push("swarm".into());
        }
        if self.swarm_kinds {
            settings.push("swarm-kinds".into());
        }
        if let Some(from) = &self.walks_from {
            settings.push(format!("walks-from={}", from.label));
        }
        if let Some(depth) = self.max_depth {
            settings.push(format!("max-depth={depth}"));
        }
        if let Some(states) = self.max_states {
            settings.push(format!("max-states={states}"));
        }
        if !self.check_deadlock {
            settings.push("no-deadlock".into());
        }
        if self.check_determinism {
            settings.push("check-determinism".into());
        }
        settings
    }

    /// What stops a search short of every reachable state, if anything
    /// does: random walks, a depth bound, a distinct-state budget.
    pub fn bound(&self) -> Option<String> {
        let depth = self.depth_bound();
        match (depth, self.max_states) {
            (depth, None) => depth,
            (None, Some(states)) => Some(format!("{states} distinct states")),
            (Some(depth), Some(states)) => Some(format!("{depth}, {states} distinct states")),
        }
    }

    /// What stops a search short of every reachable state other than a
    /// distinct-state budget: random walks, or a depth bound.
    fn depth_bound(&self) -> Option<String> {
        self.strategy.describe().bound(self)
    }

    /// The strategy's name as reports print it.
    pub fn strategy_name(&self) -> &'static str {
        self.strategy.describe().name()
    }

    /// Worker threads the strategy runs.
    pub fn strategy_workers(&self) -> usize {
        self.strategy.describe().workers(self)
    }
}

/// Whether the search's interrupt flag (a signal, a time limit) asks it to stop.
pub(crate) fn stop_asked(options: &SearchOptions) -> bool {
    options
        .interrupt
        .as_deref()
        .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
}
