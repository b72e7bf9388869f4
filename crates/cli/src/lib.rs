//! The `cmc` command line as a library: for tests that run it in-process,
//! and for programs that register their own models and Rust cores and get
//! every command for them ([`Cli`]; `crates/cli/README.md`).
//!
//! [`run`] parses the arguments, runs the command and returns the exit code:
//! 0 every property holds, 1 a property failed (a violation, or a witness
//! never reached), 2 bad usage, bad input, a faulty core, or a search that
//! could not be completed (one that reached its `--time-limit` included),
//! 3 interrupted.

pub mod args;
mod catalog;
mod commands;
mod corpus;
mod distributed;
mod explore;
mod front_end;
mod gate;
mod gate_file;
mod inputs;
mod status;
mod supervised;
mod validate;
#[cfg(not(feature = "explore"))]
mod without_explore;
#[cfg(not(feature = "timely"))]
mod without_timely;

use std::ffi::OsString;

pub use catalog::ModelEntry;
pub use cmc_models::params::Params;
pub use cmc_world::catalog::CoreEntry;
pub use front_end::Cli;
pub use status::{EXIT_FAIL, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_PASS, EXIT_STALE, EXIT_USAGE};

/// Runs the `cmc` command line `args` (the program's name first, as in
/// [`std::env::args_os`]) over the bundled models and cores
/// ([`Cli::bundled`]) and returns its exit code. Errors are printed on
/// stderr as one `cmc: error: ...` line.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::bundled().run_args(args)
}
