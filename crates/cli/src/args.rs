//! The command line's grammar.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// cmc: a model checker for implementation code.
///
/// Exit codes: 0 every property holds; 1 a property failed; 2 bad usage,
/// bad input, or a search that could not be completed.
#[derive(Debug, Parser)]
#[command(name = "cmc", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the bundled models, one per line, name first, with their parameters.
    List,
    /// Explore a model's states and check its properties.
    Check(CheckArgs),
    /// Run a replay file through its model again.
    Replay(ReplayArgs),
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
    /// The model's name (see `cmc list`).
    pub model: String,
    /// Model parameters as NAME=VALUE, e.g. RM=5.
    pub params: Vec<String>,
    /// Breadth-first search (the default): exact counts, shortest counterexample.
    #[arg(long, group = "strategy")]
    pub bfs: bool,
    /// Depth-first search (one worker); bound it with --max-depth.
    #[arg(long, group = "strategy")]
    pub dfs: bool,
    /// Random walks (see --walks, --walk-length, --seed).
    #[arg(long, group = "strategy")]
    pub simulate: bool,
    /// Worker threads [default: all cores].
    #[arg(long)]
    pub workers: Option<usize>,
    /// Deepest level to explore (initial states are depth 1).
    #[arg(long)]
    pub max_depth: Option<u64>,
    /// Do not report states without enabled actions as deadlocks.
    #[arg(long)]
    pub no_deadlock: bool,
    /// Compute every step twice and compare: reports a model or core whose
    /// steps depend on anything but the state (statics, time, uninitialised memory).
    #[arg(long)]
    pub check_determinism: bool,
    /// Seed of the random walks.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Number of random walks.
    #[arg(long, default_value_t = 1000)]
    pub walks: u64,
    /// Most steps per random walk.
    #[arg(long, default_value_t = 100)]
    pub walk_length: u64,
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
    /// Where the trace log of parent links is kept [default: the temp dir].
    #[arg(long)]
    pub trace_dir: Option<PathBuf>,
    /// Progress output on stderr.
    #[arg(long, value_enum, default_value_t = ProgressArg::Auto)]
    pub progress: ProgressArg,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The replay file (written by `cmc check` next to a counterexample).
    pub file: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Parses a size such as `512M`, `8G` or `1048576` (bytes).
fn parse_bytes(text: &str) -> Result<u64, String> {
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
        _ => return Err(format!("`{text}` is not a size (use e.g. 512M or 8G)")),
    };
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (use e.g. 512M or 8G)"))?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("8G"), Ok(8 << 30));
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
    }
}
