//! `cmc explore`: the web explorer of `cmc-explore`, on a model of the
//! program's catalog (bundled, or a front end's own) or a World of cores.

use crate::args::ExploreArgs;
use crate::catalog::{parse_params, Catalog};
use crate::status::{Status, EXIT_USAGE};

// Without the `explore` feature, the same names refuse to serve.
#[cfg(not(feature = "explore"))]
use crate::without_explore as cmc_explore;

/// Serves the explorer until the process is stopped; `Err` if the model
/// cannot be built or the port cannot be listened on. With cores, the
/// explorer runs in a supervised child, started again after a core fault.
pub fn command(args: ExploreArgs, catalog: &Catalog) -> Result<Status, String> {
    if !args.cores.is_empty() {
        return explore_cores(args, catalog);
    }
    let (name, words) = args
        .words
        .split_first()
        .ok_or("name a model to explore (see `cmc list`), or give cores with --core PATH")?;
    let server = catalog.explore(name, &parse_params(words)?, args.port)?;
    announce(&catalog.program, &server.url());
    server.run()
}

/// Prints the explorer's URL on standard output.
fn announce(program: &str, url: &str) {
    use std::io::Write;
    println!("{program} explore: serving {url} (Ctrl-C to stop)");
    let _ = std::io::stdout().flush();
}

/// Explores a World of cores. The supervisor (this process, which runs no
/// core code) listens on the port and starts the explorer, this program
/// again with the same arguments, as a supervised child serving on that
/// socket. A core that crashes, hangs (`--step-timeout`) or exits inside a
/// call is printed as a named fault, and the explorer is started again on
/// the same socket: the request that ran the call gets no answer, every
/// other is served. A fault outside a step, a description or a property
/// (e.g. while loading the cores) ends `cmc explore` with exit 2.
fn explore_cores(args: ExploreArgs, catalog: &Catalog) -> Result<Status, String> {
    use cmc_world::run::child::input_fd;
    use cmc_world::run::recorder::Call;
    use cmc_world::supervise::{self, child_from_env, Ended, Role, Supervision};
    use std::os::fd::{AsRawFd, FromRawFd};
    match child_from_env()? {
        Some(Role::Check) => {
            let served = (|| {
                let fd = input_fd().ok_or("the explorer was given no socket to serve on")?;
                // SAFETY: the supervisor handed this child the listening socket for its sole use.
                let listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
                // A fault a step reports is shown on its page, as without supervision.
                cmc_world::run::child::keep_faults_in_process();
                let world = catalog.cores.build_model(&cmc_world::WorldArgs {
                    cores: args.cores,
                    nodes: args.nodes,
                    params: args.words,
                    check_determinism: false,
                })?;
                cmc_explore::Server::on_listener(world, listener).map(|server| server.run())
            })();
            let Err(problem): Result<std::convert::Infallible, String> = served;
            eprintln!("{}: error: {problem}", catalog.program);
            cmc_world::supervise::finish(i32::from(EXIT_USAGE), b"")
        }
        Some(Role::Explain) => return Err("the explorer has no step to explain".into()),
        None => {}
    }
    let call_timeout = std::time::Duration::try_from_secs_f64(args.step_timeout)
        .map_err(|_| "--step-timeout takes a number of seconds".to_string())?;
    let listener = cmc_explore::listen(args.port)?;
    let address = listener
        .local_addr()
        .map_err(|problem| format!("cannot read the listening address: {problem}"))?;
    announce(&catalog.program, &format!("http://{address}/"));
    let supervision = Supervision {
        call_timeout,
        // The accepting thread, one per connection, and a few more.
        threads: 32,
        interrupt: None,
    };
    let program = &catalog.program;
    loop {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this executable to supervise it: {e}"))?;
        let mut child = std::process::Command::new(exe);
        child.args(std::env::args_os().skip(1));
        let ended = supervise::supervise(child, "check", &supervision, &[listener.as_raw_fd()])?;
        let in_core_call = matches!(
            &ended,
            Ended::Died { slot: Some(slot), .. }
                if matches!(slot.call, Some(Call::Step | Call::Describe | Call::Property))
        );
        match (supervise::fault_of(ended), in_core_call) {
            (Some(fault), true) => {
                eprint!("{fault}");
                eprintln!(
                    "{program} explore: the explorer was started again on {address} (the \
                     request that ran this core call got no answer)"
                );
            }
            (Some(fault), false) => {
                eprint!("{fault}");
                return Ok(Status::Exit(i32::from(EXIT_USAGE)));
            }
            // The child's own error, already on standard error.
            (None, _) => return Ok(Status::Exit(i32::from(EXIT_USAGE))),
        }
    }
}
