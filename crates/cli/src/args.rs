//! The command line's grammar.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

// Without the `timely` feature, the engine's defaults come from the stand-in.
#[cfg(not(feature = "timely"))]
use crate::without_timely::DEFAULT_PEER_TIMEOUT;
#[cfg(feature = "timely")]
use cmc_distributed::DEFAULT_PEER_TIMEOUT;

/// cmc: a model checker for implementation code.
///
/// Exit codes: 0 every property holds; 1 a property failed; 2 bad usage,
/// bad input, a faulty core, or a search that could not be completed (one
/// that reached its --time-limit included);
/// 3 interrupted (resumable with --resume when --checkpoint was given).
#[derive(Debug, Parser)]
#[command(name = "cmc", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the models, one per line, name first, with their parameters;
    /// then the registered cores, with their planted bugs and defaults.
    List,
    /// Explore a model's states and check its properties.
    Check(Box<CheckArgs>),
    /// Run a replay file through its model (or its cores) again.
    Replay(ReplayArgs),
    /// Check that a C core's object file references only allowed symbols.
    Purity(PurityArgs),
    /// Print a C core library's name, ABI version, state sizes and the
    /// properties it declares (CMC_PROPERTIES in include/cmc.h); or a
    /// registered Rust core's (rust:NAME) sizes, planted bugs and default
    /// World parameters.
    Describe(DescribeArgs),
    /// The planted-bug gate of a gate file: every control run must pass and
    /// every planted bug must be caught by its expected property.
    Gate(GateArgs),
    /// Serve a web UI on 127.0.0.1 to step through a model's states by hand.
    Explore(ExploreArgs),
    /// Replay a product's glue log (include/cmc_glue_log.h) through the same
    /// cores and check that its glue did what the steps asked and what a
    /// network, a disk and timers can do.
    Validate(ValidateArgs),
    /// Re-run the pinned failing traces of a seed corpus (DIR/corpus.toml):
    /// each must still fail on its buggy build and pass on its fixed one.
    Corpus(CorpusArgs),
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The glue log the product wrote.
    pub log: PathBuf,
    /// The cores the product runs, as for `cmc check`; node N runs the core
    /// of its role (roles=..).
    #[arg(long = "core", value_name = "PATH", required = true)]
    pub cores: Vec<String>,
    /// Number of nodes in the product, 1 to 64.
    #[arg(long, default_value_t = 2, value_parser = nodes)]
    pub nodes: usize,
    /// The product's network may deliver a message more often than it was sent.
    #[arg(long)]
    pub allow_duplicates: bool,
    /// Core parameters as for `cmc check` (cfg0=.. to cfg7=.., roles=..).
    pub words: Vec<String>,
    /// Longest a core's step may take before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    pub step_timeout: f64,
}

#[derive(Debug, Args)]
pub struct CorpusArgs {
    /// The corpus directory: corpus.toml and the replay files it pins.
    pub dir: PathBuf,
    /// Longest a core's step may take before it is reported as hung.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    pub step_timeout: f64,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The gate file (TOML) [default: the reference cores' gate,
    /// crates/protocols/gate.toml in cmc's sources].
    pub file: Option<PathBuf>,
    /// Run only the [[core]] configurations of these names.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Folder for the evidence: reports, logs, replay files, built
    /// libraries and summary.txt.
    #[arg(long, value_name = "DIR", default_value = "gate-evidence")]
    pub evidence: PathBuf,
    /// Worker threads [default: all cores].
    #[arg(long, value_parser = workers)]
    pub workers: Option<usize>,
}

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The core's shared library, or rust:NAME for a registered Rust core.
    pub library: PathBuf,
}

#[derive(Debug, Args)]
pub struct PurityArgs {
    /// The core's object file (.o) or shared library.
    pub file: PathBuf,
}

/// How to explore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    /// A live line on a terminal, plain lines every 10 s otherwise.
    Auto,
    /// Plain lines every 10 s.
    Plain,
    /// No progress output.
    Off,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The model's name (see `cmc list`) followed by its parameters as
    /// NAME=VALUE (e.g. `two-phase RM=5`); with --core, only World parameters
    /// (e.g. `requests=2 drops=1 net=fifo`); with --resume, nothing.
    pub words: Vec<String>,
    /// A core to run on the World's nodes: a shared library (./libcore.so) or
    /// a built-in Rust core (rust:reqack). Repeat for several roles.
    #[arg(long = "core", value_name = "PATH")]
    pub cores: Vec<String>,
    /// Number of World nodes (with --core), 1 to 64.
    #[arg(long, default_value_t = 2, value_parser = nodes)]
    pub nodes: usize,
    /// Longest a core's step may take before it is reported as hung (with --core).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    pub step_timeout: f64,
    /// Save a checkpoint of the breadth-first search in DIR periodically and
    /// on SIGINT/SIGTERM.
    #[arg(long, value_name = "DIR")]
    pub checkpoint: Option<PathBuf>,
    /// Let --checkpoint delete a checkpoint already in DIR (else DIR is refused).
    #[arg(long, requires = "checkpoint")]
    pub checkpoint_overwrite: bool,
    /// Seconds between two checkpoints.
    #[arg(long, value_name = "SECS", default_value_t = 300.0, value_parser = seconds)]
    pub checkpoint_every: f64,
    /// Continue the search checkpointed in DIR (the model comes from there).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["checkpoint", "cores"])]
    pub resume: Option<PathBuf>,
    /// Stop the search after SECS seconds (at its next state boundary, with a
    /// checkpoint if --checkpoint is given): reported as bounded by time,
    /// with how far it got, exit code 2 (a violation found before is reported
    /// as usual).
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub time_limit: Option<f64>,
    /// Breadth-first search (the default): exact counts, shortest counterexample.
    #[arg(long, group = "strategy")]
    pub bfs: bool,
    /// Depth-first search (one worker); bound it with --max-depth.
    #[arg(long, group = "strategy")]
    pub dfs: bool,
    /// Random walks (see --walks, --walk-length, --seed).
    #[arg(long, group = "strategy")]
    pub simulate: bool,
    /// Breadth-first over coarse views (one worker): a state is expanded
    /// only if no state with its view (the World: all but the messages in
    /// flight) was; finds deep bugs, proves nothing when it finds none.
    #[arg(long, group = "strategy")]
    pub view_bfs: bool,
    /// Worker threads [default: all cores], 1 to 1024.
    #[arg(long, value_parser = workers)]
    pub workers: Option<usize>,
    /// Deepest level to explore (initial states are depth 1).
    #[arg(long, value_parser = max_depth)]
    pub max_depth: Option<u64>,
    /// Stop a breadth-first search once it has stored N distinct states
    /// (reported as cut short, never as complete).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_states: Option<u64>,
    /// Keep no parent links (32 bytes a state on disk): a violation is
    /// reported with its counterexample's length but without its trace.
    #[arg(long)]
    pub no_trace: bool,
    /// Do not report states without enabled actions as deadlocks.
    #[arg(long)]
    pub no_deadlock: bool,
    /// Compute every step twice and compare: reports a model or core whose
    /// steps depend on anything but the state (statics, time, uninitialised memory);
    /// also decode every new state's encoding and check it gives the state back.
    #[arg(long)]
    pub check_determinism: bool,
    /// Seed of the random walks.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Number of random walks.
    #[arg(long, default_value_t = 1000, value_parser = walks)]
    pub walks: u64,
    /// Most steps per random walk (a walk keeps its states in memory).
    #[arg(long, default_value_t = 100, value_parser = walk_length)]
    pub walk_length: u64,
    /// Each random walk (--simulate, --frontier-walks) draws its own fault densities (per step, for every
    /// fault kind with a budget: left out one time in three, else from 1/64
    /// to 1/2) from its seed, instead of choosing uniformly among enabled actions.
    #[arg(long)]
    pub swarm: bool,
    /// Each random walk (--simulate, --frontier-walks) draws a weight for
    /// every action kind, the protocol's own included (from 1/256 to 1; a
    /// fault kind left out one time in three), and chooses among enabled
    /// actions in proportion: walks that hold one kind of step back for long
    /// stretches, as deep bugs need.
    #[arg(long)]
    pub swarm_kinds: bool,
    /// Random walks start from the last state of this replay file (replayed
    /// first; a failing walk's trace includes it), not from an initial state.
    #[arg(long, value_name = "FILE", requires = "simulate")]
    pub walks_from: Option<PathBuf>,
    /// After the breadth-first search to --max-depth, random walks of at
    /// most L steps from every state of its last level (the frontier).
    #[arg(long, value_name = "L", requires = "max_depth", conflicts_with_all = ["dfs", "simulate", "view_bfs", "resume", "checkpoint"], value_parser = walk_length)]
    pub frontier_walks: Option<u64>,
    /// Walks from each frontier state (with --frontier-walks).
    #[arg(long, value_name = "R", default_value_t = 1, requires = "frontier_walks", value_parser = frontier_rounds)]
    pub frontier_rounds: u64,
    /// Count, per action kind (for a World: each environment action kind),
    /// how often it was enabled and taken; name the kinds never taken, and
    /// warn about a fault with a budget that never occurred.
    #[arg(long, conflicts_with = "resume")]
    pub coverage: bool,
    /// Partial-order reduction (breadth-first search): from each state,
    /// explore only a persistent set of steps that commute with every other
    /// action, unless none leads one level deeper. A complete search still
    /// finds every invariant and step-property violation; counts drop and a
    /// counterexample may be longer than the shortest (a --max-depth bound
    /// may then cut it off). The report says whether it was applied,
    /// or why not (for a World: only when every property reads the client
    /// history alone, without symmetry, quiescence or link faults).
    #[arg(long, conflicts_with_all = ["dfs", "simulate", "resume", "checkpoint"])]
    pub reduction: bool,
    /// Sleep sets (breadth-first search): a step of one node that an
    /// interleaving already explored covers (it commutes with the steps of
    /// other nodes taken since) is neither computed nor followed. Every
    /// state is still found at its depth: distinct states, verdicts and
    /// counterexamples are those of the search without them, with fewer
    /// steps generated. Refused with step properties, symmetry and the
    /// quiescence check (the report says why).
    #[arg(long, conflicts_with_all = ["dfs", "simulate", "resume", "checkpoint", "reduction"])]
    pub sleep_sets: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Where to write the replay file of a counterexample
    /// [default: MODEL.cmc-trace in the current directory].
    #[arg(long)]
    pub replay_out: Option<PathBuf>,
    /// Memory budget of the search, e.g. 8G or 512M: half for the fingerprint
    /// table, a quarter for the frontier, which spills to disk beyond it.
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Keep the visited set's fingerprints on disk behind a bounded table
    /// (its share of --max-memory), so that it can outgrow memory.
    #[arg(long)]
    pub disk_fingerprints: bool,
    /// Where the trace log of parent links is kept [default: the temp dir].
    #[arg(long)]
    pub trace_dir: Option<PathBuf>,
    /// Progress output on stderr.
    #[arg(long, value_enum, default_value_t = ProgressArg::Auto)]
    pub progress: ProgressArg,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Also write the report as one self-contained HTML file (summary,
    /// properties, counterexample with diffs, a World's sequence chart).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Also write the reachable state graph in Graphviz DOT (explored again
    /// after the check, for small models; a counterexample in bold red).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dfs", "simulate", "resume"])]
    pub dump_dot: Option<PathBuf>,
    /// Most states --dump-dot writes: past it, no file and exit code 2.
    #[arg(long, value_name = "STATES", default_value_t = 10_000, requires = "dump_dot", value_parser = dump_dot_max)]
    pub dump_dot_max: usize,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The replay file (written by `cmc check` next to a counterexample).
    pub file: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as one self-contained HTML file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// The core library to replay with, in place of the one the file names
    /// (the same library built at another path: its digest must be the
    /// recorded one). Repeat for a World of several cores, in their order.
    #[arg(long = "core", value_name = "PATH")]
    pub cores: Vec<String>,
}

/// Most worker threads.
pub const WORKERS_MAX: u64 = 1024;
/// Largest cap of --dump-dot (a DOT file past it is beyond Graphviz anyway).
pub const DUMP_DOT_MAX_MAX: u64 = 1_000_000;
/// Most random walks.
pub const WALKS_MAX: u64 = 1_000_000_000;
/// Most walks from each frontier state.
pub const FRONTIER_ROUNDS_MAX: u64 = 1_000_000;
/// Most steps of one random walk.
pub const WALK_LENGTH_MAX: u64 = 1_000_000;
/// Deepest depth bound.
pub const MAX_DEPTH_MAX: u64 = u32::MAX as u64;
/// Smallest and largest memory budget, in bytes.
pub const MAX_MEMORY_RANGE: RangeInclusive<u64> = (1 << 20)..=(1 << 50);
/// Shortest and longest time in seconds (a step timeout, a checkpoint interval).
const SECONDS_RANGE: RangeInclusive<f64> = 0.001..=31_536_000.0;

/// Parses an integer in `range`.
fn integer_in(text: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(value) if range.contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not allowed: use an integer from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

fn dump_dot_max(text: &str) -> Result<usize, String> {
    integer_in(text, 1..=DUMP_DOT_MAX_MAX).map(|value| value as usize)
}

fn workers(text: &str) -> Result<usize, String> {
    integer_in(text, 1..=WORKERS_MAX).map(|value| value as usize)
}

pub(crate) fn nodes(text: &str) -> Result<usize, String> {
    integer_in(text, 1..=cmc_world::system::spec::NODES_MAX as u64).map(|value| value as usize)
}

fn max_depth(text: &str) -> Result<u64, String> {
    integer_in(text, 1..=MAX_DEPTH_MAX)
}

fn walks(text: &str) -> Result<u64, String> {
    integer_in(text, 1..=WALKS_MAX)
}

fn frontier_rounds(text: &str) -> Result<u64, String> {
    integer_in(text, 1..=FRONTIER_ROUNDS_MAX)
}

fn walk_length(text: &str) -> Result<u64, String> {
    integer_in(text, 1..=WALK_LENGTH_MAX)
}

/// Parses a number of seconds from a millisecond to a year.
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if SECONDS_RANGE.contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not allowed: use a number of seconds from {} to {}",
            SECONDS_RANGE.start(),
            SECONDS_RANGE.end()
        )),
    }
}

/// Parses a size such as `512M`, `8G` or `1048576` (bytes), from 1M to 1P.
fn parse_bytes(text: &str) -> Result<u64, String> {
    let bytes = size(text)?;
    if MAX_MEMORY_RANGE.contains(&bytes) {
        Ok(bytes)
    } else {
        Err(format!("`{text}` is not allowed: use a size from 1M to 1P"))
    }
}

/// Parses a size such as `512M`, `8G` or `1048576` (bytes).
fn size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        "P" => 50,
        _ => return Err(format!("`{text}` is not a size (use e.g. 512M or 8G)")),
    };
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (use e.g. 512M or 8G)"))?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The model's name (see `cmc list`) followed by its parameters as
    /// NAME=VALUE; with --core, only World parameters (e.g. `requests=2 drops=1`).
    pub words: Vec<String>,
    /// A core to run on the World's nodes (a shared library, or rust:NAME);
    /// repeat for several roles. Cores run in a supervised child process.
    #[arg(long = "core", value_name = "PATH")]
    pub cores: Vec<String>,
    /// Number of World nodes (with --core), 1 to 64.
    #[arg(long, default_value_t = 2, value_parser = nodes)]
    pub nodes: usize,
    /// The port to listen on, on 127.0.0.1 only (0: a free port).
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
    /// Longest a core's call may take before it is reported as hung (with
    /// --core); the explorer is then started again.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    pub step_timeout: f64,
}

/// Which search engine runs a breadth-first search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// cmc's own: worker threads of this process sharing one visited set.
    Native,
    /// Timely dataflow: workers (threads times processes) each owning a
    /// shard of the states; across machines with --processes and --hostfile.
    Timely,
}

/// The options of the search engine (`cmc check`).
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Search engine: native, or timely (timely dataflow, across processes
    /// with --processes, --process and --hostfile; bundled models and
    /// Worlds of cores).
    #[arg(long, value_enum, default_value_t = Engine::Native)]
    pub engine: Engine,
    /// Number of processes of a timely run (the same command runs on each).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub processes: usize,
    /// This process's number in a timely run, from 0.
    #[arg(long, default_value_t = 0, value_name = "I")]
    pub process: usize,
    /// The processes of a timely run: one host:port per line, in process order.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Seconds a timely process waits for its peers to connect.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub connect_timeout: f64,
    /// Seconds a timely process waits without a heartbeat from a peer
    /// (stopped, hung or unreachable) before it abandons the run.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_PEER_TIMEOUT.as_secs_f64())]
    pub peer_timeout: f64,
}

impl EngineArgs {
    /// Whether the native engine runs the search (then the other options
    /// must keep their defaults).
    pub fn native(&self) -> Result<bool, String> {
        let cluster_given = self.processes != 1 || self.process != 0 || self.hostfile.is_some();
        match self.engine {
            Engine::Native if cluster_given => {
                Err("--processes, --process and --hostfile need --engine timely".into())
            }
            Engine::Native => Ok(true),
            Engine::Timely => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("8G"), Ok(8 << 30));
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
    }

    #[test]
    fn numbers_out_of_range_are_refused() {
        for huge in ["0", "1025", "18446744073709551616", "-1", "1e3", ""] {
            assert!(workers(huge).is_err(), "{huge}");
        }
        assert_eq!(workers("1024"), Ok(1024));
        assert!(nodes("65").is_err() && nodes("0").is_err());
        assert_eq!(nodes(" 8"), Ok(8));
        assert!(walk_length("1000001").is_err());
        assert!(walks("0").is_err());
        assert!(max_depth("4294967296").is_err());
        for size in ["1K", "1048575", "2P", "18446744073709551615"] {
            assert!(parse_bytes(size).is_err(), "{size}");
        }
        for bad in ["0", "-1", "NaN", "inf", "1e30", "0.0001"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("2.5"), Ok(2.5));
    }
}
