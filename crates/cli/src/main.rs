//! `cmc`: the command-line front end of the cmc model checker.
//!
//! Exit codes: 0 every property holds, 1 a property failed (a violation, or
//! a witness never reached), 2 bad usage, bad input, or a search that could
//! not be completed.

mod args;
mod commands;
mod registry;

use std::process::ExitCode;

use clap::Parser;

/// Exit code: every property holds.
const EXIT_PASS: u8 = 0;
/// Exit code: a property failed.
const EXIT_FAIL: u8 = 1;
/// Exit code: bad usage or bad input.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_PASS
            };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    match commands::run(cli) {
        Ok(passed) => ExitCode::from(if passed { EXIT_PASS } else { EXIT_FAIL }),
        Err(message) => {
            eprintln!("cmc: error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
