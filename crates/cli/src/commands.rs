//! What each subcommand does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cmc_search::{
    AnyModel, CheckpointOptions, FrontierWalks, ProgressMode, RandomWalks, ReplayFile, Report,
    SearchOptions, Strategy, WalksFrom,
};
use cmc_world::supervise::{self, Role};
use cmc_world::WorldArgs;

use crate::args::{CheckArgs, Cli, Command, DescribeArgs, ProgressArg, PurityArgs, ReplayArgs};
use crate::catalog::{parse_params, trace_params, world_args_of, Catalog};
use crate::status::{Status, EXIT_USAGE};
use crate::supervised::seconds as positive_seconds;

/// Runs `cli` over what `catalog` knows; `Err` for bad usage or bad
/// input, with the one-line reason.
pub fn run(cli: Cli, catalog: &Catalog) -> Result<Status, String> {
    match cli.command {
        Command::List => {
            for line in catalog.list_lines() {
                println!("{line}");
            }
            Ok(Status::Pass)
        }
        Command::Check(args) => check(*args, catalog),
        Command::Replay(args) => replay(args, catalog),
        Command::Purity(args) => purity(args),
        Command::Describe(args) => describe(args, catalog),
        Command::Gate(args) => crate::gate::command(args, catalog.default_gate.clone()),
        Command::Validate(args) => crate::validate::command(args, catalog),
        Command::Explore(args) => crate::explore::command(args, catalog),
        Command::Corpus(args) => crate::corpus::command(args, catalog),
    }
}

fn search_options(args: &CheckArgs) -> Result<SearchOptions, String> {
    let mut options = SearchOptions::default();
    if args.dfs {
        options.strategy = Strategy::Dfs;
    } else if args.view_bfs {
        options.strategy = Strategy::ViewBfs;
    } else if args.simulate {
        options.strategy = Strategy::Simulate(RandomWalks {
            walks: args.walks,
            walk_length: args.walk_length,
            seed: args.seed,
        });
    }
    if args.swarm && !args.simulate && args.frontier_walks.is_none() {
        return Err(
            "--swarm draws fault densities for random walks: add --simulate or --frontier-walks"
                .into(),
        );
    }
    if args.swarm_kinds && !args.simulate && args.frontier_walks.is_none() {
        return Err(
            "--swarm-kinds draws action-kind weights for random walks: add --simulate or --frontier-walks"
                .into(),
        );
    }
    options.swarm = args.swarm;
    options.swarm_kinds = args.swarm_kinds;
    options.coverage = args.coverage;
    options.reduction = args.reduction;
    options.sleep_sets = args.sleep_sets;
    options.frontier_walks = args.frontier_walks.map(|walk_length| FrontierWalks {
        walk_length,
        rounds: args.frontier_rounds,
        seed: args.seed,
    });
    if let Some(path) = &args.walks_from {
        let text = crate::inputs::read_replay_file(path)?;
        let file = ReplayFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        options.walks_from = Some(WalksFrom {
            label: path.display().to_string(),
            file,
        });
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
    options.max_states = args.max_states;
    options.keep_trace = !args.no_trace;
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
    options.time_limit = args
        .time_limit
        .map(|limit| positive_seconds(limit, "--time-limit"))
        .transpose()?;
    let interval = positive_seconds(args.checkpoint_every, "--checkpoint-every")?;
    options.checkpoint = match (&args.checkpoint, &args.resume) {
        (Some(dir), _) | (None, Some(dir)) => Some(CheckpointOptions {
            dir: dir.clone(),
            interval,
            resume: args.resume.is_some(),
            overwrite: args.checkpoint_overwrite,
        }),
        (None, None) => None,
    };
    if let Some(conflict) = options.conflict() {
        return Err(conflict.into());
    }
    Ok(options)
}

/// The signals that stop a search, and what a second one does.
#[derive(Clone, Copy)]
struct StopSignals {
    signals: &'static [i32],
    /// A second signal, [`SECOND_SIGNAL_AFTER`] or more after the first,
    /// ends the process at once (exit 130). Off in a supervised child:
    /// its supervisor decides, and a child ending itself would read as a
    /// core that exited.
    second_ends_process: bool,
}

/// The signals that stop a search gracefully where it runs (no supervisor).
const STOP_HERE: StopSignals = StopSignals {
    signals: &[signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM],
    second_ends_process: true,
};

/// The signal that stops the search of a supervised child: its supervisor
/// forwards SIGINT and SIGTERM as one SIGTERM.
const STOP_IN_CHILD: StopSignals = StopSignals {
    signals: &[signal_hook::consts::SIGTERM],
    second_ends_process: false,
};

/// How long after the first signal a second one ends the process at once.
/// Sooner, it is the same stop delivered twice: `timeout` signals its
/// command and then the command's whole process group.
const SECOND_SIGNAL_AFTER: Duration = Duration::from_secs(1);

/// Milliseconds on the monotonic clock (async-signal-safe).
fn monotonic_millis() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64).saturating_mul(1000) + now.tv_nsec as u64 / 1_000_000
}

/// Makes `stop`'s signals set the returned flag, which stops the search
/// gracefully. Registered once per process, however many runs (the
/// signals of the first call count).
fn interrupt_flag(stop: StopSignals) -> Result<Arc<AtomicBool>, String> {
    static REGISTERED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    if let Some(flag) = REGISTERED.get() {
        return Ok(Arc::clone(flag));
    }
    let flag = Arc::clone(REGISTERED.get_or_init(|| Arc::new(AtomicBool::new(false))));
    // When the first signal came, in monotonic milliseconds (0: none yet).
    let first = Arc::new(AtomicU64::new(0));
    let after = SECOND_SIGNAL_AFTER.as_millis() as u64;
    for &signal in stop.signals {
        let (flag, first) = (Arc::clone(&flag), Arc::clone(&first));
        let handler = move || {
            let now = monotonic_millis().max(1);
            if let Err(then) = first.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
                if stop.second_ends_process && now.saturating_sub(then) >= after {
                    signal_hook::low_level::exit(130);
                }
            }
            flag.store(true, Ordering::SeqCst);
        };
        // SAFETY: the handler only reads the monotonic clock, uses atomics
        // and may call _exit: all async-signal-safe.
        unsafe { signal_hook::low_level::register(signal, handler) }
            .map_err(|problem| format!("cannot install the signal handler: {problem}"))?;
    }
    Ok(flag)
}

/// The World `args` name (with `--core`, or the checkpoint being resumed
/// holds one), if any.
fn world_of(args: &CheckArgs) -> Result<Option<WorldArgs>, String> {
    if let Some(dir) = &args.resume {
        if !args.words.is_empty() {
            return Err(
                "--resume takes the model from the checkpoint: give no model or parameters".into(),
            );
        }
        let (_, params) = crate::distributed::checkpoint_model(&args.engine, dir)?;
        return world_args_of(&params);
    }
    Ok((!args.cores.is_empty()).then(|| world_args(args)))
}

/// The model `args` name: a bundled model, a World of cores, or the model of
/// the checkpoint being resumed.
fn open_model(args: &CheckArgs, catalog: &Catalog) -> Result<Box<dyn AnyModel>, String> {
    if let Some(world) = world_of(args)? {
        return catalog.cores.build_model(&world);
    }
    if let Some(dir) = &args.resume {
        let (name, params) = crate::distributed::checkpoint_model(&args.engine, dir)?;
        return catalog.build_named(&name, &params);
    }
    let (name, words) = args
        .words
        .split_first()
        .ok_or("name a model to check (see `cmc list`), or give cores with --core PATH")?;
    catalog.build_named(name, &parse_params(words)?)
}

fn world_args(args: &CheckArgs) -> WorldArgs {
    WorldArgs {
        cores: args.cores.clone(),
        nodes: args.nodes,
        params: args.words.clone(),
        check_determinism: args.check_determinism,
    }
}

fn check(args: CheckArgs, catalog: &Catalog) -> Result<Status, String> {
    match cmc_world::supervise::child_from_env()? {
        Some(Role::Check) => check_in_child(&args, catalog),
        Some(Role::Explain) => {
            let world = world_of(&args)?.ok_or("the explainer is for Worlds only")?;
            let world = catalog.cores.build_world(&world)?;
            let mut options = search_options(&args)?;
            relocate_walks_from(&mut options, &world.params())?;
            supervise::explain(&world, &options)
        }
        None => {}
    }
    let options = search_options(&args)?;
    let inputs = crate::inputs::check_inputs(&args);
    crate::inputs::check_replay_out(&replay_path(&args), &inputs)?;
    let mut taken = inputs;
    taken.push(replay_path(&args));
    for (path, flag) in [(&args.report, "--report"), (&args.dump_dot, "--dump-dot")] {
        if let Some(path) = path {
            check_output(path, flag, &taken)?;
            taken.push(path.clone());
        }
    }
    if world_of(&args)?.is_some() {
        // Cores may crash, hang or exit: the check runs in a supervised
        // child, and the verdict comes from its report only.
        let timeout = positive_seconds(args.step_timeout, "--step-timeout")?;
        // Whatever the strategy: a child stopped by the signal forwarded
        // to it is an interrupted run, never a core fault.
        let interrupt = interrupt_flag(STOP_HERE)?;
        let supervision = supervise::Supervision {
            call_timeout: timeout,
            threads: options.workers,
            interrupt: Some(&interrupt),
        };
        let code =
            supervise::check_supervised(&supervision, &replay_path(&args), options.time_limit);
        return Ok(Status::Exit(code));
    }
    let mut out = String::new();
    let status = check_here(
        &args,
        catalog,
        options,
        STOP_HERE,
        HeaderTo::Stdout,
        &mut out,
    );
    print!("{out}");
    status
}

/// The check in a supervised child: its report goes to the supervisor,
/// never to standard output (which the supervisor sends to standard error).
fn check_in_child(args: &CheckArgs, catalog: &Catalog) -> ! {
    // The supervisor forwards SIGINT and SIGTERM as one SIGTERM; a terminal's
    // SIGINT, sent to the whole process group, must not count twice.
    // SAFETY: ignoring a signal before any thread is started has no other effect.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    let mut out = String::new();
    let status = search_options(args).and_then(|options| {
        check_here(
            args,
            catalog,
            options,
            STOP_IN_CHILD,
            HeaderTo::Stderr,
            &mut out,
        )
    });
    let code = match status {
        Ok(status) => status.exit_code(),
        Err(message) => {
            eprintln!("{}: error: {message}", catalog.program);
            EXIT_USAGE
        }
    };
    cmc_world::supervise::finish(i32::from(code), out.as_bytes())
}

/// Whether this supervised child's standard error is the file or terminal
/// where its supervisor prints the report (the supervisor's standard
/// output), as when both go to one terminal. `false` when it cannot tell, so
/// the report keeps its header.
fn stderr_is_report_destination() -> bool {
    use std::os::unix::fs::MetadataExt;
    let file = |path: String| {
        std::fs::metadata(path)
            .ok()
            .map(|meta| (meta.dev(), meta.ino()))
    };
    let supervisor = std::os::unix::process::parent_id();
    match (
        file("/proc/self/fd/2".into()),
        file(format!("/proc/{supervisor}/fd/1")),
    ) {
        (Some(stderr), Some(report)) => stderr == report,
        _ => false,
    }
}

/// Where the replay file of a violation or fault goes.
fn replay_path(args: &CheckArgs) -> PathBuf {
    args.replay_out.clone().unwrap_or_else(|| {
        let stem = match args.words.first() {
            Some(name) if args.cores.is_empty() && args.resume.is_none() => name.clone(),
            _ => "world".to_string(),
        };
        PathBuf::from(format!("{stem}.cmc-trace"))
    })
}

/// Where a check prints its header line as it starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HeaderTo {
    /// Standard output, at once; the report then leaves it out.
    Stdout,
    /// Standard error (a supervised child, whose report reaches standard
    /// output only at the end); the report then repeats it.
    Stderr,
}

/// Makes the prefix of `options`' walks (`--walks-from`), which may name
/// this check's core library at another path, name it as `params` do.
fn relocate_walks_from(
    options: &mut SearchOptions,
    params: &[cmc_model::ModelParam],
) -> Result<(), String> {
    if let Some(from) = options.walks_from.as_mut() {
        from.file.params = cmc_world::world_args::relocate_cores(&from.file.params, params)
            .map_err(|problem| format!("{}: {problem}", from.label))?;
    }
    Ok(())
}

/// Runs the check in this process, appending what goes to standard output to
/// `out`; `stop`'s signals interrupt the search gracefully, whatever its
/// strategy.
fn check_here(
    args: &CheckArgs,
    catalog: &Catalog,
    mut options: SearchOptions,
    stop: StopSignals,
    header_to: HeaderTo,
    out: &mut String,
) -> Result<Status, String> {
    let model = open_model(args, catalog)?;
    relocate_walks_from(&mut options, &model.params())?;
    // Every strategy stops gracefully at a signal: its report says it was
    // interrupted (exit 3).
    options.interrupt = Some(interrupt_flag(stop)?);
    if !args.json {
        // Before the search, so that a long run shows at once what it checks.
        let header = cmc_search::run_header(&*model, &options);
        match header_to {
            HeaderTo::Stdout => println!("{header}"),
            HeaderTo::Stderr => eprintln!("{header}"),
        }
    }
    // A supervised child's report repeats the header it printed at the start,
    // unless that line already went where the report goes.
    let with_header = header_to == HeaderTo::Stderr && !stderr_is_report_destination();
    let native = args.engine.native()?;
    if !native
        && (args.coverage || args.frontier_walks.is_some() || args.reduction || args.sleep_sets)
    {
        return Err(
            "--coverage, --frontier-walks, --reduction and --sleep-sets run on the native engine: leave out --engine timely"
                .into(),
        );
    }
    if !native && args.dump_dot.is_some() {
        return Err(
            "--dump-dot explores the graph with the native engine: leave out --engine timely"
                .into(),
        );
    }
    let (mut report, model) = if native {
        (model.check(&options), Some(model))
    } else {
        let registered = catalog.timely(&model.name());
        let report =
            crate::distributed::check(&args.engine, model, &options, registered, &catalog.program)?;
        (report, None)
    };
    let program = catalog.program.as_str();
    report.name_program(program);
    match report.verdict.as_str() {
        "error" => {
            // The search's own error is the one to report; the page is extra.
            let _ = html_report_if_asked(args, catalog, &report);
            if args.json {
                // A reader of the JSON gets the error as JSON too.
                render_report(program, &report, true, None, with_header, out);
            }
            return Err(report
                .message
                .clone()
                .unwrap_or_else(|| "the search failed".into()));
        }
        "interrupted" => {
            render_report(program, &report, args.json, None, with_header, out);
            html_report_if_asked(args, catalog, &report)?;
            return Ok(Status::Interrupted);
        }
        "time-limit" => {
            render_report(program, &report, args.json, None, with_header, out);
            html_report_if_asked(args, catalog, &report)?;
            return Ok(Status::TimeLimit);
        }
        _ => {}
    }
    let path = replay_path(args);
    let written = match &report.replay_file {
        Some(file) => match write_replay_file(program, &path, file) {
            Ok(()) => Some(path),
            Err(problem) => {
                // The violation is reported all the same, with the trace in full.
                render_report(program, &report, args.json, None, with_header, out);
                eprintln!("{program}: error: {problem}; the trace above is the only copy");
                html_report_if_asked(args, catalog, &report)?;
                dot_if_asked(args, model.as_deref(), &report)?;
                return Ok(Status::Fail);
            }
        },
        None => None,
    };
    render_report(
        program,
        &report,
        args.json,
        written.as_deref(),
        with_header,
        out,
    );
    html_report_if_asked(args, catalog, &report)?;
    dot_if_asked(args, model.as_deref(), &report)?;
    Ok(Status::of(report.passed()))
}

/// Writes the HTML report of a check if `--report` asked for one (after the
/// text report, so that a file that cannot be written loses nothing); with
/// a World's counterexample, it holds the SVG message sequence chart.
fn html_report_if_asked(
    args: &CheckArgs,
    catalog: &Catalog,
    report: &Report,
) -> Result<(), String> {
    let Some(path) = &args.report else {
        return Ok(());
    };
    let chart = match (world_of(args)?, &report.replay_file) {
        (Some(world), Some(file)) => Some(world_chart(catalog, &world, file)?),
        _ => None,
    };
    write_html_report(path, report, chart.as_deref())
}

/// Writes the state graph in DOT if `--dump-dot` asked for it, the
/// counterexample of `report` highlighted; past `--dump-dot-max` states,
/// an error and no file.
fn dot_if_asked(
    args: &CheckArgs,
    model: Option<&dyn AnyModel>,
    report: &Report,
) -> Result<(), String> {
    let (Some(path), Some(model)) = (&args.dump_dot, model) else {
        return Ok(());
    };
    let dot = model
        .state_graph_dot(args.dump_dot_max, report.replay_file.as_ref())
        .map_err(|problem| format!("--dump-dot {}: {problem}", path.display()))?;
    std::fs::write(path, dot)
        .map_err(|problem| format!("cannot write the DOT file {}: {problem}", path.display()))
}

/// The SVG message sequence chart of the World trace `file`, replayed
/// through the cores of `world`.
fn world_chart(catalog: &Catalog, world: &WorldArgs, file: &ReplayFile) -> Result<String, String> {
    let world = catalog.cores.build_world(world)?;
    cmc_world::report::chart_svg::replay_chart_svg(&world, file)
        .map_err(|problem| format!("cannot draw the sequence chart of the trace: {problem}"))
}

/// Writes `report` (and a World's `chart`) as a self-contained HTML page.
fn write_html_report(path: &Path, report: &Report, chart: Option<&str>) -> Result<(), String> {
    std::fs::write(path, report.render_html(chart))
        .map_err(|problem| format!("cannot write the HTML report {}: {problem}", path.display()))
}

/// The program named by a replay file's opening comment (see
/// [`write_replay_file`]), if it has one.
fn written_by(text: &str) -> Option<&str> {
    text.lines()
        .take_while(|line| line.starts_with('#'))
        .find_map(|line| line.strip_prefix(cmc_search::REPLAY_WRITTEN_BY))
        .and_then(|rest| rest.split_once(':'))
        .map(|(program, _)| program.trim())
}

/// Writes `file` at `path`, opened by a comment naming this program (which
/// knows the file's model and cores), so that another program that does not
/// can say which one does.
fn write_replay_file(program: &str, path: &Path, file: &ReplayFile) -> Result<(), String> {
    let text = file.to_text_written_by(program);
    std::fs::write(path, text)
        .map_err(|problem| format!("cannot write the replay file {}: {problem}", path.display()))
}

/// The report as standard output shows it, appended to `out`; `header`:
/// with its header line (left out when the run printed it as it started).
fn render_report(
    program: &str,
    report: &Report,
    json: bool,
    replay_path: Option<&Path>,
    header: bool,
    out: &mut String,
) {
    if json {
        out.push_str(&report.to_json());
        out.push('\n');
    } else if header {
        out.push_str(&report.render_text());
    } else {
        out.push_str(&report.render_outcome());
    }
    if !json {
        if let Some(path) = replay_path {
            out.push_str(&format!(
                "The trace is saved in {}; run it again with: {program} replay {}\n",
                path.display(),
                path.display()
            ));
        }
    }
}

fn print_report(program: &str, report: &Report, json: bool) {
    let mut out = String::new();
    render_report(program, report, json, None, true, &mut out);
    print!("{out}");
}

/// Fails, before any work, if the file `flag` writes at `path` would
/// overwrite a directory or one of `taken` (an input, or another output),
/// or lie inside one.
fn check_output(path: &Path, flag: &str, taken: &[PathBuf]) -> Result<(), String> {
    let refuse = |why: String| Err(format!("refusing {flag} {}: {why}", path.display()));
    if path.is_dir() {
        return refuse("it is a directory".into());
    }
    let target = crate::inputs::resolved(path);
    match taken
        .iter()
        .find(|other| target.starts_with(crate::inputs::resolved(other)))
    {
        Some(other) => refuse(format!("it would overwrite {}", other.display())),
        None => Ok(()),
    }
}

fn replay(args: ReplayArgs, catalog: &Catalog) -> Result<Status, String> {
    let program = catalog.program.as_str();
    let path = &args.file;
    if let Some(report) = &args.report {
        check_output(report, "--report", std::slice::from_ref(path))?;
    }
    let text = crate::inputs::read_replay_file(path)?;
    let in_file = |problem: String| format!("{}: {problem}", path.display());
    let mut file = ReplayFile::parse(&text).map_err(|e| in_file(e.to_string()))?;
    // A model or core this program lacks: name the program that wrote the file.
    let unknown_here = |problem: String| match written_by(&text) {
        Some(writer) if writer != program => in_file(format!(
            "{problem}; the file was written by `{writer}`: replay it with \
             `{writer} replay {}`",
            path.display()
        )),
        _ => in_file(problem),
    };
    // A trace this build cannot follow: stale if it records a violation
    // (as `cmc corpus` counts it), else a mismatched file.
    let not_followed = |problem: cmc_search::ReplayError| match &file.violates {
        Some(expected) => {
            eprintln!(
                "{program}: {}: {problem}: the file says it violates {expected}, but this build no longer follows it: the trace is stale",
                path.display()
            );
            Ok(Status::Stale)
        }
        None => Err(in_file(problem.to_string())),
    };
    let params = trace_params(&file);
    let world_args = world_args_of(&params).map_err(in_file)?;
    if world_args.is_none() && !args.cores.is_empty() {
        return Err(in_file(format!(
            "--core is for traces of a World; this is a trace of model `{}`",
            file.model
        )));
    }
    let report = match world_args {
        Some(mut world_args) => {
            world_args.check_determinism = file.settings.iter().any(|s| s == "check-determinism");
            located_cores(&mut world_args, &args.cores).map_err(in_file)?;
            // Through the real cores: each event, its outputs and the core's
            // own description of its state, then the message sequence chart.
            let _exit_guard = cmc_world::run::exit_guard::ExitGuard::new();
            let world = catalog
                .cores
                .build_world(&world_args)
                .map_err(unknown_here)?;
            file.params = cmc_world::world_args::relocate_cores(&file.params, &world.params())
                .map_err(in_file)?;
            // A core's fault on the way is the error to show, whichever
            // replay met it.
            let fault_or = |problem: String| match world.fault() {
                Some(fault) => in_file(format!("the trace ends in a core fault:\n{fault}")),
                None => in_file(problem),
            };
            let (steps, rows) = match cmc_world::report::replay::run_with_chart(&world, &file) {
                Ok(done) => done,
                Err(problem) if world.fault().is_some() => return Err(fault_or(problem)),
                Err(problem) => match AnyModel::replay(&world, &file) {
                    Err(diverged) if world.fault().is_none() => return not_followed(diverged),
                    _ => return Err(fault_or(problem)),
                },
            };
            let mut report =
                AnyModel::replay(&world, &file).map_err(|e| fault_or(e.to_string()))?;
            if let Some(path) = &args.report {
                let titles = cmc_world::report::chart_svg::lifeline_titles(&world);
                let chart = cmc_world::report::chart_svg::render_svg(&titles, &rows);
                write_html_report(path, &report, Some(&chart))?;
            }
            if !args.json {
                // The steps above already show the trace, in the cores' own words.
                print!("{steps}");
                report.counterexample = None;
            }
            report
        }
        None => {
            let model = catalog
                .build_named(&file.model, &params)
                .map_err(unknown_here)?;
            let report = match model.replay(&file) {
                Ok(report) => report,
                Err(problem) => return not_followed(problem),
            };
            if let Some(path) = &args.report {
                write_html_report(path, &report, None)?;
            }
            report
        }
    };
    print_report(program, &report, args.json);
    match (&file.violates, &report.property) {
        (Some(expected), Some(found)) if expected != found => {
            eprintln!(
                "{program}: note: the file says it violates {expected}, the replay violated {found}"
            );
        }
        (Some(expected), None) if report.passed() => {
            eprintln!(
                "{program}: the file says it violates {expected}, but the replay found no violation: the trace is stale (what it recorded is gone, as on a fixed core)"
            );
            return Ok(Status::Stale);
        }
        _ => {}
    }
    Ok(Status::of(report.passed()))
}

/// Makes `world_args` (a trace's) load `given` (`cmc replay --core`) in
/// place of the recorded core libraries, which are then matched by digest
/// (see [`cmc_world::world_args::relocate_cores`]); with none given, a recorded
/// library that is no longer there is an error saying how to name it.
fn located_cores(world_args: &mut WorldArgs, given: &[String]) -> Result<(), String> {
    if given.is_empty() {
        let missing = world_args
            .cores
            .iter()
            .find(|core| !core.starts_with("rust:") && !Path::new(core).exists());
        return match missing {
            Some(core) => Err(format!(
                "the core library {core} the trace was recorded with is not there: \
                 give the same library at its new path with --core PATH"
            )),
            None => Ok(()),
        };
    }
    if given.len() != world_args.cores.len() {
        return Err(format!(
            "the trace names {} core(s), and --core gives {}: give one --core per recorded \
             core, in order",
            world_args.cores.len(),
            given.len()
        ));
    }
    world_args.cores = given.to_vec();
    // The digests are compared with the trace's after loading, naming both paths.
    world_args.params.retain(|param| {
        param
            .split_once('=')
            .is_none_or(|(name, _)| name != cmc_world::world_args::CORE_DIGEST_PARAM)
    });
    Ok(())
}

/// `cmc describe LIB`: the library's entry points run in this process, as
/// in `cmc replay`, behind the same guard against a core that exits.
/// `describe rust:NAME`: what the program registered for that core.
fn describe(args: DescribeArgs, catalog: &Catalog) -> Result<Status, String> {
    if let Some(name) = args.library.to_str().and_then(|l| l.strip_prefix("rust:")) {
        print!("{}", catalog.describe_core(name)?);
        return Ok(Status::Pass);
    }
    let _exit_guard = cmc_world::run::exit_guard::ExitGuard::new();
    let text = cmc_world::properties::c_properties::describe_library(&args.library)?;
    let core = cmc_world::CCore::load(&args.library).map_err(|e| e.to_string())?;
    print!("{text}{}", catalog.registration_of(Arc::new(core)));
    Ok(Status::Pass)
}

fn purity(args: PurityArgs) -> Result<Status, String> {
    let report = cmc_world::core::purity::check(&args.file)?;
    print!("{report}");
    Ok(Status::of(report.is_pure()))
}
