//! `cmc`: the command-line front end of the cmc model checker, as a
//! registration of the bundled models and cores (see [`cmc_cli::Cli`] and
//! [`cmc_cli::run`] for the exit codes).

fn main() -> std::process::ExitCode {
    cmc_cli::Cli::bundled().run()
}
