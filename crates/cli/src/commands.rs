//! What each subcommand does.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use cmc_search::{
    AnyModel, CheckpointOptions, ProgressMode, ReplayFile, Report, SearchOptions, Strategy,
};
use cmc_world::WorldArgs;

use crate::args::{CheckArgs, Cli, Command, GateArgs, ProgressArg, PurityArgs, ReplayArgs};
use crate::registry;

/// How a command ended, short of bad usage or input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every property held.
    Pass,
    /// A property failed.
    Fail,
    /// The search was interrupted (and checkpointed, if asked).
    Interrupted,
    /// A supervised child decided the exit code itself.
    Exit(i32),
}

/// Runs `cli`; `Err` for bad usage or bad input, with the one-line reason.
pub fn run(cli: Cli) -> Result<Status, String> {
    match cli.command {
        Command::List => {
            for line in registry::list_lines() {
                println!("{line}");
            }
            Ok(Status::Pass)
        }
        Command::Check(args) => check(*args),
        Command::Replay(args) => replay(args),
        Command::Purity(args) => purity(args),
        Command::Gate(args) => gate(args),
    }
}

fn gate(args: GateArgs) -> Result<Status, String> {
    std::fs::create_dir_all(&args.evidence).map_err(|problem| {
        format!(
            "cannot create the evidence folder {}: {problem}",
            args.evidence.display()
        )
    })?;
    let options = cmc_protocols::gate::GateOptions {
        workers: args
            .workers
            .unwrap_or_else(|| SearchOptions::default().workers)
            .max(1),
        print: true,
    };
    let report = cmc_protocols::gate::run_gate(&args.evidence, options);
    let holes = report.holes().count();
    if report.success() {
        println!("gate: no holes; evidence in {}", args.evidence.display());
        Ok(Status::Pass)
    } else {
        println!(
            "gate: {holes} hole(s); evidence in {}",
            args.evidence.display()
        );
        Ok(Status::Fail)
    }
}

fn positive_seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value).map_err(|_| format!("{flag} takes a number of seconds"))
}

fn search_options(args: &CheckArgs) -> Result<SearchOptions, String> {
    let mut options = SearchOptions::default();
    if args.dfs {
        options.strategy = Strategy::Dfs;
    } else if args.simulate {
        options.strategy = Strategy::Simulate {
            walks: args.walks,
            walk_length: args.walk_length,
            seed: args.seed,
        };
    }
    if let Some(workers) = args.workers {
        if workers == 0 {
            return Err("--workers must be at least 1".into());
        }
        options.workers = workers;
    }
    if args.max_depth == Some(0) {
        return Err("--max-depth must be at least 1 (initial states are depth 1)".into());
    }
    options.max_depth = args.max_depth;
    options.check_deadlock = !args.no_deadlock;
    options.check_determinism = args.check_determinism;
    options.max_memory_bytes = args.max_memory;
    options.fingerprints_on_disk = args.disk_fingerprints;
    options.trace_dir = args.trace_dir.clone();
    options.progress = match args.progress {
        // JSON output is for programs: keep stderr quiet unless asked.
        ProgressArg::Auto if args.json => ProgressMode::Off,
        ProgressArg::Auto => ProgressMode::Auto,
        ProgressArg::Plain => ProgressMode::Plain,
        ProgressArg::Off => ProgressMode::Off,
    };
    let interval = positive_seconds(args.checkpoint_every, "--checkpoint-every")?;
    options.checkpoint = match (&args.checkpoint, &args.resume) {
        (Some(dir), _) | (None, Some(dir)) => Some(CheckpointOptions {
            dir: dir.clone(),
            interval,
            resume: args.resume.is_some(),
        }),
        (None, None) => None,
    };
    Ok(options)
}

/// Makes SIGINT and SIGTERM stop the search gracefully (a second one ends
/// the process at once).
fn interrupt_flag() -> Result<Arc<AtomicBool>, String> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&flag))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&flag)))
            .map_err(|problem| format!("cannot install the signal handler: {problem}"))?;
    }
    Ok(flag)
}

/// The model `args` name: a bundled model, a World of cores, or the model of
/// the checkpoint being resumed.
fn open_model(args: &CheckArgs) -> Result<Box<dyn AnyModel>, String> {
    if let Some(dir) = &args.resume {
        if !args.words.is_empty() {
            return Err(
                "--resume takes the model from the checkpoint: give no model or parameters".into(),
            );
        }
        let (name, params) = cmc_search::checkpoint_model(dir)?;
        return match world_args_of(&params)? {
            Some(world) => cmc_world::build_model(&world),
            None => registry::build(&name, &params),
        };
    }
    if !args.cores.is_empty() {
        return cmc_world::build_model(&world_args(args));
    }
    let (name, words) = args
        .words
        .split_first()
        .ok_or("name a model to check (see `cmc list`), or give cores with --core PATH")?;
    registry::build(name, &registry::parse_params(words)?)
}

fn world_args(args: &CheckArgs) -> WorldArgs {
    WorldArgs {
        cores: args.cores.clone(),
        nodes: args.nodes,
        params: args.words.clone(),
        check_determinism: args.check_determinism,
    }
}

/// The World arguments a recorded model name and parameters stand for, if
/// they are a World's (they name cores). The World's name is implied by them.
fn world_args_of(params: &[(String, String)]) -> Result<Option<WorldArgs>, String> {
    if !params.iter().any(|(param, _)| param == "core") {
        return Ok(None);
    }
    let params: Vec<cmc_model::ModelParam> = params
        .iter()
        .map(|(param, value)| cmc_model::ModelParam::new(param, value))
        .collect();
    WorldArgs::from_params(&params).map(Some)
}

fn check(args: CheckArgs) -> Result<Status, String> {
    let options = search_options(&args)?;
    let default_trace = || {
        let stem = match args.words.first() {
            Some(name) if args.cores.is_empty() && args.resume.is_none() => name.clone(),
            _ => "world".to_string(),
        };
        PathBuf::from(format!("{stem}.cmc-trace"))
    };
    let replay_path = args.replay_out.clone().unwrap_or_else(default_trace);
    if !args.cores.is_empty() && std::env::var_os(cmc_world::recorder::RECORDER_ENV).is_none() {
        // A core may crash or hang: run the search in a supervised child.
        let timeout = positive_seconds(args.step_timeout, "--step-timeout")?;
        let code =
            cmc_world::supervise::check_supervised(&world_args(&args), timeout, &replay_path);
        return Ok(Status::Exit(code));
    }
    let model = open_model(&args)?;
    let mut options = options;
    if options.strategy == Strategy::Bfs {
        options.interrupt = Some(interrupt_flag()?);
    }
    let report = if args.engine.native()? {
        model.check(&options)
    } else {
        crate::distributed::check(&args.engine, model, &options)?
    };
    match report.verdict.as_str() {
        "error" => {
            return Err(report
                .message
                .clone()
                .unwrap_or_else(|| "the search failed".into()))
        }
        "interrupted" => {
            print_report(&report, args.json, None);
            return Ok(Status::Interrupted);
        }
        _ => {}
    }
    let written = match &report.replay_file {
        Some(file) => {
            write_replay_file(&replay_path, file)?;
            Some(replay_path)
        }
        None => None,
    };
    print_report(&report, args.json, written.as_deref());
    Ok(if report.passed() {
        Status::Pass
    } else {
        Status::Fail
    })
}

fn write_replay_file(path: &Path, file: &ReplayFile) -> Result<(), String> {
    std::fs::write(path, file.to_text())
        .map_err(|problem| format!("cannot write the replay file {}: {problem}", path.display()))
}

fn print_report(report: &Report, json: bool, replay_path: Option<&Path>) {
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_text());
        if let Some(path) = replay_path {
            println!(
                "The trace is saved in {}; run it again with: cmc replay {}",
                path.display(),
                path.display()
            );
        }
    }
}

fn replay(args: ReplayArgs) -> Result<Status, String> {
    let path = &args.file;
    let text = std::fs::read_to_string(path)
        .map_err(|problem| format!("cannot read the replay file {}: {problem}", path.display()))?;
    let in_file = |problem: String| format!("{}: {problem}", path.display());
    let file = ReplayFile::parse(&text).map_err(|e| in_file(e.to_string()))?;
    let params: Vec<(String, String)> = file
        .params
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect();
    let report = match world_args_of(&params).map_err(in_file)? {
        Some(world_args) => {
            // Through the real cores: each event, its outputs and the core's
            // own description of its state, then the message sequence chart.
            let world = cmc_world::build_world(&world_args).map_err(in_file)?;
            let steps = cmc_world::replay::run(&world, &file).map_err(in_file)?;
            let mut report = AnyModel::replay(&world, &file).map_err(|e| in_file(e.to_string()))?;
            if !args.json {
                // The steps above already show the trace, in the cores' own words.
                print!("{steps}");
                report.counterexample = None;
            }
            report
        }
        None => {
            let model = registry::build(&file.model, &params).map_err(in_file)?;
            model.replay(&file).map_err(|e| in_file(e.to_string()))?
        }
    };
    print_report(&report, args.json, None);
    match (&file.violates, &report.property) {
        (Some(expected), Some(found)) if expected != found => {
            eprintln!(
                "cmc: note: the file says it violates {expected}, the replay violated {found}"
            );
        }
        (Some(expected), None) => {
            eprintln!("cmc: note: the file says it violates {expected}, but the replay found no violation");
        }
        _ => {}
    }
    Ok(if report.passed() {
        Status::Pass
    } else {
        Status::Fail
    })
}

fn purity(args: PurityArgs) -> Result<Status, String> {
    let report = cmc_world::purity::check(&args.file)?;
    print!("{report}");
    Ok(if report.is_pure() {
        Status::Pass
    } else {
        Status::Fail
    })
}
