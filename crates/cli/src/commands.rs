//! What each subcommand does.

use std::path::{Path, PathBuf};

use cmc_search::{ProgressMode, ReplayFile, Report, SearchOptions, Strategy};

use crate::args::{CheckArgs, Cli, Command, ProgressArg, ReplayArgs};
use crate::registry;

/// Runs `cli`; `Ok(true)` when every property held, `Err` for bad usage or input.
pub fn run(cli: Cli) -> Result<bool, String> {
    match cli.command {
        Command::List => {
            for line in registry::list_lines() {
                println!("{line}");
            }
            Ok(true)
        }
        Command::Check(args) => check(args),
        Command::Replay(args) => replay(args),
    }
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
    options.trace_dir = args.trace_dir.clone();
    options.progress = match args.progress {
        // JSON output is for programs: keep stderr quiet unless asked.
        ProgressArg::Auto if args.json => ProgressMode::Off,
        ProgressArg::Auto => ProgressMode::Auto,
        ProgressArg::Plain => ProgressMode::Plain,
        ProgressArg::Off => ProgressMode::Off,
    };
    Ok(options)
}

fn check(args: CheckArgs) -> Result<bool, String> {
    let params = registry::parse_params(&args.params)?;
    let model = registry::build(&args.model, &params)?;
    let options = search_options(&args)?;
    let report = model.check(&options);
    if report.verdict == "error" {
        return Err(report
            .message
            .clone()
            .unwrap_or_else(|| "the search failed".into()));
    }
    let replay_path = match &report.replay_file {
        Some(file) => {
            let path = args
                .replay_out
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.cmc-trace", args.model)));
            write_replay_file(&path, file)?;
            Some(path)
        }
        None => None,
    };
    print_report(&report, args.json, replay_path.as_deref());
    Ok(report.passed())
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

fn replay(args: ReplayArgs) -> Result<bool, String> {
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
    let model = registry::build(&file.model, &params).map_err(in_file)?;
    let report = model.replay(&file).map_err(|e| in_file(e.to_string()))?;
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
    Ok(report.passed())
}
