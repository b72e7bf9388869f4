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
mod gate;
mod gate_file;
mod inputs;
mod registry;
mod validate;

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches};

pub use catalog::{Cli, CoreEntry, ModelEntry};
pub use cmc_models::params::Params;

/// Exit code: every property holds.
pub const EXIT_PASS: u8 = 0;
/// Exit code: a property failed.
pub const EXIT_FAIL: u8 = 1;
/// Exit code: bad usage or bad input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the search could not be completed (it reached its time limit).
pub const EXIT_INCOMPLETE: u8 = 2;
/// Exit code: the search was interrupted.
pub const EXIT_INTERRUPTED: u8 = 3;

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

/// Runs the command line `args` of `program` over the installed catalog.
fn run_installed<I, T>(program: &str, args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let command = args::Cli::command()
        .name(program.to_string())
        .bin_name(program.to_string());
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|matches| args::Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) if error.kind() == clap::error::ErrorKind::ValueValidation => {
            // A number out of range: one line, like every other bad input.
            let text = error.to_string();
            let line = text.lines().next().unwrap_or_default();
            eprintln!("{program}: error: {}", line.trim_start_matches("error: "));
            return EXIT_USAGE;
        }
        Err(error) if error.use_stderr() => {
            // Through `eprint!` (not `Error::print`), so that a test running
            // `run` in-process captures it like every other message.
            eprint!("{}", error.render());
            return EXIT_USAGE;
        }
        Err(help) => {
            print!("{}", help.render());
            return EXIT_PASS;
        }
    };
    match commands::run(cli) {
        Ok(status) => exit_code(status),
        Err(message) => {
            eprintln!("{program}: error: {message}");
            EXIT_USAGE
        }
    }
}

/// The exit code of a command that ended with `status`.
fn exit_code(status: commands::Status) -> u8 {
    match status {
        commands::Status::Pass => EXIT_PASS,
        commands::Status::Fail => EXIT_FAIL,
        commands::Status::Interrupted => EXIT_INTERRUPTED,
        commands::Status::TimeLimit => EXIT_INCOMPLETE,
        commands::Status::Exit(code) => u8::try_from(code).unwrap_or(EXIT_USAGE),
    }
}
