//! `cmc`: the command-line front end of the cmc model checker (see
//! [`cmc_cli::run`] for the exit codes).

use std::process::ExitCode;

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes
    // away (`cmc check ... | head`) instead of failing on the next write.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread
    // is started has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cmc_world::cores::register_catalog(cmc_protocols::catalog());
    ExitCode::from(cmc_cli::run(std::env::args_os()))
}
