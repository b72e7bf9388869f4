//! `cmc explore`: the web explorer of `cmc-explore`, on a model of the
//! program's catalog (bundled, or a front end's own) or a World of cores.

use clap::Args;

use crate::commands::Status;

// Without the `explore` feature, the same names refuse to serve.
#[cfg(not(feature = "explore"))]
use crate::without_explore as cmc_explore;

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The model's name (see `cmc list`) followed by its parameters as
    /// NAME=VALUE; with --core, only World parameters (e.g. `requests=2 drops=1`).
    pub words: Vec<String>,
    /// A core to run on the World's nodes (a shared library, or rust:NAME);
    /// repeat for several roles. Cores run in this process, as in `cmc replay`.
    #[arg(long = "core", value_name = "PATH")]
    pub cores: Vec<String>,
    /// Number of World nodes (with --core), 1 to 64.
    #[arg(long, default_value_t = 2, value_parser = crate::args::nodes)]
    pub nodes: usize,
    /// The port to listen on, on 127.0.0.1 only (0: a free port).
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
}

/// Serves the explorer until the process is stopped; `Err` if the model
/// cannot be built or the port cannot be listened on.
pub fn command(args: ExploreArgs) -> Result<Status, String> {
    // A core that calls exit() ends cmc with a clear message, as in `cmc replay`.
    let _exit_guard = cmc_world::run::exit_guard::ExitGuard::new();
    let server = if args.cores.is_empty() {
        let (name, words) = args
            .words
            .split_first()
            .ok_or("name a model to explore (see `cmc list`), or give cores with --core PATH")?;
        crate::registry::explore(name, &crate::registry::parse_params(words)?, args.port)?
    } else {
        let world = cmc_world::build_model(&cmc_world::WorldArgs {
            cores: args.cores,
            nodes: args.nodes,
            params: args.words,
            check_determinism: false,
        })?;
        cmc_explore::Server::bind(world, args.port)?
    };
    let program = crate::registry::program();
    println!(
        "{program} explore: serving {} (Ctrl-C to stop)",
        server.url()
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    server.run()
}
