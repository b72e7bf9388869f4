//! `cmc-bench`: cmc and its anchors on the same models in one run, and the
//! floor under the checker, printed as one table (see `bench/README.md`).
//!
//! ```text
//! cargo run --release -p cmc-bench -- [--quick]
//! ```
//!
//! Every timed run happens in a child process (this binary re-run with a
//! hidden subcommand) so that each has its own peak RSS.

mod analysis;
mod cmc;
mod floor;
mod job;
mod measure;
mod paxos;
mod sample;
mod specialised;
mod stateright;
mod suite;
mod table;
mod targets;
mod world;
mod world_floor;

use std::process::ExitCode;

use job::{Job, ModelCase};
use suite::Config;

const USAGE: &str = "usage: cmc-bench [--quick | --world | --floor]\n\
    \n  Runs cmc (1 and 2 workers) and stateright (2 threads) on two-phase commit\n  \
    RM=3..9 and Paxos (2 and 3 clients), then the floor micro-benchmarks, best of 3 each, and\n  \
    prints one Markdown table. --quick: one run each, RM=3..7.\n  \
    --world: the World rows (reqack, two-phase C, Paxos, ABD cores) against the\n  \
    model engine on two-phase RM=8 and stateright's Paxos, median of 3 each.\n  \
    --floor: the model engine (2 workers) against a specialised single-thread\n  \
    BFS on two-phase RM=8 and RM=9, runs interleaved, median of 3 each.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(measure::CHILD_SUBCOMMAND) => {
            match Job::parse(&args[1..]).and_then(measure::run_as_child) {
                Ok(()) => ExitCode::SUCCESS,
                Err(problem) => {
                    eprintln!("cmc-bench: {problem}");
                    ExitCode::FAILURE
                }
            }
        }
        None => run_suite(&Config::full()),
        Some("--quick") if args.len() == 1 => run_suite(&Config::quick()),
        Some("--world") if args.len() == 1 => run_world_suite(),
        Some("--floor") if args.len() == 1 => run_floor_suite(),
        Some(_) => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Runs the suite and prints the table and the targets; fails if any row
/// failed.
fn run_suite(config: &Config) -> ExitCode {
    let measured = suite::run(config);
    let largest = ModelCase::TwoPhase {
        rm_count: config.rm_max,
    };
    let paxos: Vec<ModelCase> = config
        .paxos_clients
        .iter()
        .map(|&client_count| ModelCase::Paxos { client_count })
        .collect();
    let table = table::render(&measured, largest);
    println!("{table}");
    println!("{}", targets::render(&measured, largest, &paxos));
    if table.contains("FAIL") {
        eprintln!("cmc-bench: some rows FAILED (see the check column)");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the World suite, median of 3, and prints its table and
/// targets; fails if any row failed.
fn run_world_suite() -> ExitCode {
    let measured = suite::run_world(3);
    let reference = ModelCase::TwoPhase {
        rm_count: suite::WORLD_REFERENCE_RM,
    };
    let table = table::render(&measured, reference);
    println!("{table}");
    println!("{}", targets::render_world(&measured, reference));
    if table.contains("FAIL") {
        eprintln!("cmc-bench: some rows FAILED (see the check column)");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the floor suite, median of 3, and prints its
/// table and target; fails if any row failed.
fn run_floor_suite() -> ExitCode {
    let (measured, cpu) = suite::run_floor(3);
    let models: Vec<ModelCase> = suite::FLOOR_RMS
        .into_iter()
        .map(|rm_count| ModelCase::TwoPhase { rm_count })
        .collect();
    let table = table::render(&measured, models[0]);
    println!("{table}");
    println!("{}", targets::render_floor(&measured, &models, &cpu));
    if table.contains("FAIL") {
        eprintln!("cmc-bench: some rows FAILED (see the check column)");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
