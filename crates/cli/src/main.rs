//! `cmc`: the command-line front end of the cmc model checker.
//!
//! Exit codes: 0 every property holds, 1 a property failed (a violation, or
//! a witness never reached), 2 bad usage, bad input, a faulty core, or a
//! search that could not be completed, 3 interrupted.

mod args;
mod commands;
mod distributed;
mod registry;

use std::process::ExitCode;

use clap::Parser;

/// Exit code: every property holds.
const EXIT_PASS: u8 = 0;
/// Exit code: a property failed.
const EXIT_FAIL: u8 = 1;
/// Exit code: bad usage or bad input.
const EXIT_USAGE: u8 = 2;
/// Exit code: the search was interrupted.
const EXIT_INTERRUPTED: u8 = 3;

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes
    // away (`cmc check ... | head`) instead of failing on the next write.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // is started has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cmc_world::cores::register_catalog(cmc_protocols::catalog());
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
        Ok(commands::Status::Pass) => ExitCode::from(EXIT_PASS),
        Ok(commands::Status::Fail) => ExitCode::from(EXIT_FAIL),
        Ok(commands::Status::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        Ok(commands::Status::Exit(code)) => {
            ExitCode::from(u8::try_from(code).unwrap_or(EXIT_USAGE))
        }
        Err(message) => {
            eprintln!("cmc: error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
