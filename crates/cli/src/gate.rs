//! `cmc gate`: runs a gate file's variants and judges each one.
//!
//! Every variant is checked by a child `cmc check --core ... --json
//! --check-determinism` of this same executable, with the search the
//! variant names and the time its timeout leaves as its `--time-limit` (so
//! that a variant out of time says how far it got; a child that does not
//! stop shortly after is killed); the child supervises C cores itself
//! (crashes and hung steps), so the gate only reads its JSON report and exit
//! code. A control must pass after a complete search (or one cut only by
//! its own depth bound); a planted bug must violate exactly its expected
//! property within its depth and state budgets, and the trace the check
//! wrote must show that violation again when replayed (a child `cmc replay
//! TRACE --json`, within the variant's timeout). Anything else (a build that
//! fails, a timeout, a faulty core, a nondeterministic step, a wrong
//! property, a trace that does not replay) is a hole.
//!
//! The evidence folder keeps, per variant, the child's JSON report
//! (`CORE-VARIANT.json`), its messages (`.log`), the replay file of a
//! counterexample (`.cmc-trace`) and its replay's report and messages
//! (`.replay.json`, `.replay.log`), the build log and library of a built core
//! (`build/`), and the whole table in `summary.txt`.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::args::GateArgs;
use crate::gate_file::{GateFile, Search, Source, Variant};
use crate::status::Status;

/// How long past its time limit a child may take to stop and report before
/// it is killed (a step that hangs, a report that is slow to write).
const GRACE: Duration = Duration::from_secs(3);

/// `cmc gate [FILE]` (`default_gate`: the program's file when none is
/// named): `Fail` when any line is a hole; `Err` (exit 2) for a gate file
/// that cannot be read or is malformed.
pub fn command(args: GateArgs, default_gate: Option<PathBuf>) -> Result<Status, String> {
    let path = match (args.file, default_gate) {
        (Some(path), _) => path,
        (None, Some(default)) if default.is_file() => default,
        (None, Some(default)) => {
            return Err(format!(
                "name a gate file (the default, {}, is not there)",
                default.display()
            ))
        }
        (None, None) => return Err("name a gate file".into()),
    };
    let mut file = GateFile::load(&path, &args.evidence)?;
    if !args.only.is_empty() {
        if let Some(unknown) = args
            .only
            .iter()
            .find(|name| !file.variants.iter().any(|variant| &variant.core == *name))
        {
            return Err(format!(
                "--only {unknown}: no [[core]] of that name in {}",
                path.display()
            ));
        }
        file.variants
            .retain(|variant| args.only.contains(&variant.core));
    }
    let workers = match args.workers {
        Some(0) => return Err("--workers must be at least 1".into()),
        Some(workers) => workers,
        None => cmc_search::SearchOptions::default().workers,
    };
    let options = Options {
        evidence: std::path::absolute(&args.evidence).unwrap_or(args.evidence),
        workers,
    };
    let lines = run(&file, &options)?;
    println!("{}", conclusion(&lines, &options.evidence));
    Ok(if lines.iter().any(Line::is_hole) {
        Status::Fail
    } else {
        Status::Pass
    })
}

/// How a variant ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A control whose every property held.
    Pass,
    /// A planted bug that violated its expected property within budget.
    Caught,
    /// The variant did not finish within its timeout (a hole).
    Timeout,
    /// Anything else, with the reason.
    Hole(String),
}

/// One line of the gate's table.
#[derive(Debug, Clone)]
pub struct Line {
    /// The configuration's name.
    pub core: String,
    /// `control` or `bugN`.
    pub variant: String,
    /// The expected property (`-` for the control).
    pub expect: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Counterexample length for a violation, depth reached otherwise.
    pub depth: u64,
    /// Distinct states explored.
    pub states: u64,
    /// Random walks run, for a search by walks.
    pub walks: Option<u64>,
    /// Wall time of the variant (build and check).
    pub wall: Duration,
}

impl Line {
    /// Whether this line is a hole (an uncaught bug, a failed control, a timeout).
    pub fn is_hole(&self) -> bool {
        matches!(self.verdict, Verdict::Hole(_) | Verdict::Timeout)
    }

    /// The line as the table prints it.
    pub fn render(&self) -> String {
        let status = match &self.verdict {
            Verdict::Pass => "PASS".to_string(),
            Verdict::Caught => "CAUGHT".to_string(),
            Verdict::Timeout => "TIMEOUT".to_string(),
            Verdict::Hole(why) => format!("HOLE ({why})"),
        };
        let walks = self
            .walks
            .map_or_else(String::new, |walks| format!(" walks={walks}"));
        format!(
            "{:<16} {:<8} {:<26} {:<8} depth={:<3} states={:<9} time={:.2}s{walks}",
            self.core,
            self.variant,
            self.expect,
            status,
            self.depth,
            self.states,
            self.wall.as_secs_f64()
        )
    }
}

/// What the gate run needs besides the file.
#[derive(Debug, Clone)]
pub struct Options {
    /// The evidence folder.
    pub evidence: PathBuf,
    /// Worker threads of each check.
    pub workers: usize,
}

/// Runs every variant of `file` in order, printing each line as it is known,
/// and writes `summary.txt` (the table, with what each bug does) in the
/// evidence folder.
pub fn run(file: &GateFile, options: &Options) -> Result<Vec<Line>, String> {
    let exe = std::env::current_exe()
        .map_err(|problem| format!("cannot find the cmc executable: {problem}"))?;
    std::fs::create_dir_all(options.evidence.join("build")).map_err(|problem| {
        format!(
            "cannot create the evidence folder {}: {problem}",
            options.evidence.display()
        )
    })?;
    let mut lines = Vec::new();
    for variant in &file.variants {
        let started = Instant::now();
        let mut line = Line {
            core: variant.core.clone(),
            variant: variant.variant.clone(),
            expect: variant.expect.clone().unwrap_or_else(|| "-".into()),
            verdict: Verdict::Pass,
            depth: 0,
            states: 0,
            walks: None,
            wall: Duration::ZERO,
        };
        let deadline = started + variant.timeout;
        match prepare(variant, file, options, deadline)
            .and_then(|()| check(&exe, variant, file, options, deadline))
        {
            Ok(report) => {
                judge(variant, &report, &mut line);
                if line.verdict == Verdict::Caught {
                    if let Err(verdict) = replay(&exe, variant, file, options, deadline) {
                        line.verdict = verdict;
                    }
                }
            }
            Err(verdict) => line.verdict = verdict,
        }
        line.wall = started.elapsed();
        println!("{}", line.render());
        lines.push(line);
    }
    // The file's words on what each bug does, after its line.
    let mut summary: Vec<String> = lines
        .iter()
        .zip(&file.variants)
        .map(|(line, variant)| match &variant.summary {
            Some(what) => format!("{}  # {what}", line.render()),
            None => line.render(),
        })
        .collect();
    summary.push(conclusion(&lines, &options.evidence));
    let path = options.evidence.join("summary.txt");
    std::fs::write(&path, summary.join("\n") + "\n")
        .map_err(|problem| format!("cannot write {}: {problem}", path.display()))?;
    Ok(lines)
}

/// The gate's last line: no holes, or how many.
pub fn conclusion(lines: &[Line], evidence: &Path) -> String {
    match lines.iter().filter(|line| line.is_hole()).count() {
        0 => format!("gate: no holes; evidence in {}", evidence.display()),
        holes => format!("gate: {holes} hole(s); evidence in {}", evidence.display()),
    }
}

/// Evidence file `CORE-VARIANT.EXT`.
fn evidence_file(options: &Options, variant: &Variant, ext: &str) -> PathBuf {
    options
        .evidence
        .join(format!("{}-{}.{ext}", variant.core, variant.variant))
}

/// Builds the variant's library, or checks that the prebuilt one exists.
fn prepare(
    variant: &Variant,
    file: &GateFile,
    options: &Options,
    deadline: Instant,
) -> Result<(), Verdict> {
    match &variant.source {
        Source::Rust(_) => Ok(()),
        Source::Library(library) if library.is_file() => Ok(()),
        Source::Library(library) => Err(Verdict::Hole(format!(
            "no library at {}",
            library.display()
        ))),
        Source::Build { command, library } => {
            let log_path = options
                .evidence
                .join("build")
                .join(format!("{}-{}.log", variant.core, variant.variant));
            let log = File::create(&log_path).map_err(|problem| {
                Verdict::Hole(format!("cannot write {}: {problem}", log_path.display()))
            })?;
            let _ = std::fs::remove_file(library);
            let mut build = Command::new("sh");
            build.arg("-c").arg(command).current_dir(&file.dir);
            let status = run_until(build, None, log, deadline)?;
            if !status.success() {
                return Err(Verdict::Hole(format!(
                    "build failed ({status}), see {}",
                    log_path.display()
                )));
            }
            if !library.is_file() {
                return Err(Verdict::Hole(format!(
                    "the build did not write {}",
                    library.display()
                )));
            }
            Ok(())
        }
    }
}

/// What the gate reads from a child's report.
#[derive(Debug, Default)]
struct Report {
    verdict: String,
    property: Option<String>,
    message: Option<String>,
    depth: u64,
    states: u64,
    counterexample_length: Option<u64>,
    /// Whether the search explored every reachable state.
    complete: bool,
    /// What kept the search short of every reachable state, as the report
    /// words it.
    bound: Option<String>,
    /// Random walks run.
    walks: Option<u64>,
    /// What partial-order reduction did, when it was asked for.
    reduction: Option<String>,
}

/// Runs the child check of `variant` and reads its JSON report.
fn check(
    exe: &Path,
    variant: &Variant,
    file: &GateFile,
    options: &Options,
    deadline: Instant,
) -> Result<Report, Verdict> {
    let json_path = evidence_file(options, variant, "json");
    let log_path = evidence_file(options, variant, "log");
    let trace_path = evidence_file(options, variant, "cmc-trace");
    let _ = std::fs::remove_file(&trace_path);
    let (json, log) = (create(&json_path)?, create(&log_path)?);
    let time_left = deadline.saturating_duration_since(Instant::now());
    if time_left.is_zero() {
        return Err(Verdict::Timeout);
    }
    let mut child = Command::new(exe);
    child
        .current_dir(&file.dir)
        .arg("check")
        .arg("--core")
        .arg(variant.source.core_arg())
        .arg("--nodes")
        .arg(variant.nodes.to_string())
        .args(&variant.params)
        .args(["--json", "--check-determinism", "--progress", "off"])
        .arg("--workers")
        .arg(options.workers.to_string())
        .arg("--replay-out")
        .arg(&trace_path)
        .arg("--time-limit")
        .arg(format!(
            "{:.3}",
            time_left.as_secs_f64().clamp(0.001, 31_536_000.0)
        ))
        .args(variant.search.check_args(variant.max_depth));
    if !variant.deadlock {
        child.arg("--no-deadlock");
    }
    if reduces(variant) {
        child.arg("--reduction");
    }
    let status = run_until(child, Some(json), log, deadline + GRACE)?;
    let text = std::fs::read_to_string(&json_path).unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => Ok(read_report(&value)),
        Err(_) => Err(Verdict::Hole(format!(
            "the check ended {status} without a report: {}",
            first_line(&log_path)
        ))),
    }
}

/// An evidence file, created empty.
fn create(path: &Path) -> Result<File, Verdict> {
    File::create(path)
        .map_err(|problem| Verdict::Hole(format!("cannot write {}: {problem}", path.display())))
}

/// Replays the counterexample a caught variant's check wrote, as its user
/// would (`cmc replay TRACE --json`), and judges the replay's report.
fn replay(
    exe: &Path,
    variant: &Variant,
    file: &GateFile,
    options: &Options,
    deadline: Instant,
) -> Result<(), Verdict> {
    let json_path = evidence_file(options, variant, "replay.json");
    let log_path = evidence_file(options, variant, "replay.log");
    let (json, log) = (create(&json_path)?, create(&log_path)?);
    let mut child = Command::new(exe);
    child
        .current_dir(&file.dir)
        .arg("replay")
        .arg(evidence_file(options, variant, "cmc-trace"))
        .arg("--json");
    let status = run_until(child, Some(json), log, deadline + GRACE)?;
    let text = std::fs::read_to_string(&json_path).unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => judge_replay(variant, &read_report(&value)),
        Err(_) => Err(Verdict::Hole(format!(
            "its trace does not replay: the replay ended {status}: {}",
            first_line(&log_path)
        ))),
    }
}

/// `Ok` when the replay of a caught variant's trace violated its expected
/// property again.
fn judge_replay(variant: &Variant, replayed: &Report) -> Result<(), Verdict> {
    match (replayed.verdict.as_str(), &replayed.property) {
        ("violated", Some(property)) if variant.expect.as_ref() == Some(property) => Ok(()),
        (verdict, _) => Err(Verdict::Hole(format!(
            "its trace does not replay to it: the replay {}",
            describe(replayed, verdict)
        ))),
    }
}

fn read_report(value: &serde_json::Value) -> Report {
    let text = |key: &str| value[key].as_str().map(str::to_string);
    Report {
        verdict: text("verdict").unwrap_or_default(),
        property: text("property"),
        message: text("message"),
        depth: value["depth"].as_u64().unwrap_or(0),
        states: value["distinct_states"].as_u64().unwrap_or(0),
        counterexample_length: value["counterexample"]["length"].as_u64(),
        complete: value["complete"].as_bool().unwrap_or(false),
        bound: text("bound"),
        walks: value["walks"]["walks"].as_u64(),
        reduction: text("reduction"),
    }
}

/// The first non-empty line of the file at `path` (what a child said first).
fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string()
}

/// Runs `command` in its own process group with stdout to `stdout` (or the
/// log) and stderr to `log`; past `deadline` the whole group is killed and
/// the result is [`Verdict::Timeout`].
fn run_until(
    mut command: Command,
    stdout: Option<File>,
    log: File,
    deadline: Instant,
) -> Result<ExitStatus, Verdict> {
    let stdout = match stdout {
        Some(file) => Stdio::from(file),
        None => Stdio::from(
            log.try_clone()
                .map_err(|problem| Verdict::Hole(format!("cannot share the log: {problem}")))?,
        ),
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|problem| Verdict::Hole(format!("cannot start {command:?}: {problem}")))?;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                // SAFETY: kill(2) on the child's own process group (its pid,
                // negated) affects only processes this gate started.
                unsafe {
                    libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
                }
                let _ = child.wait();
                return Err(Verdict::Timeout);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(problem) => return Err(Verdict::Hole(format!("waiting for a child: {problem}"))),
        }
    }
}

/// Whether a control's passing search covered what the gate asked of it:
/// every reachable state, or every state within its own depth bound (and
/// nothing else, such as a state budget, cut it short).
fn control_search_complete(variant: &Variant, report: &Report) -> bool {
    let asked = cmc_search::SearchOptions {
        max_depth: variant.max_depth,
        ..cmc_search::SearchOptions::default()
    }
    .bound();
    report.complete || (asked.is_some() && report.bound == asked)
}

/// Whether `variant`'s search is one that reduces (breadth-first, with
/// `reduction = true`).
fn reduces(variant: &Variant) -> bool {
    variant.reduction && variant.search == Search::Bfs
}

/// Sets `line`'s verdict and counts from the child's `report`.
fn judge(variant: &Variant, report: &Report, line: &mut Line) {
    line.states = report.states;
    line.walks = report.walks;
    line.depth = report.counterexample_length.unwrap_or(report.depth);
    let over_budget = |line: &Line| {
        variant.max_states.is_some_and(|max| line.states > max)
            || variant.max_depth.is_some_and(|max| line.depth > max)
    };
    line.verdict = match (&variant.expect, report.verdict.as_str()) {
        (_, "time-limit") => Verdict::Timeout,
        (_, "error") => Verdict::Hole(format!(
            "error: {}",
            report.message.as_deref().unwrap_or("the search failed")
        )),
        (None, "pass") if over_budget(line) => {
            Verdict::Hole("passed beyond its state budget".into())
        }
        (None, "pass") if !control_search_complete(variant, report) => Verdict::Hole(format!(
            "the control's search was not complete ({})",
            report.bound.as_deref().unwrap_or("cut short")
        )),
        (None, "pass") => Verdict::Pass,
        (None, other) => Verdict::Hole(format!("control ended {}", describe(report, other))),
        (Some(expect), "violated") if report.property.as_deref() == Some(expect) => {
            if over_budget(line) {
                Verdict::Hole("caught beyond its budget".into())
            } else {
                Verdict::Caught
            }
        }
        (Some(_), other) => Verdict::Hole(format!("not caught: {}", describe(report, other))),
    };
    let reduced = report
        .reduction
        .as_deref()
        .is_some_and(|text| text.starts_with("on"));
    if reduces(variant) && !reduced && matches!(line.verdict, Verdict::Pass | Verdict::Caught) {
        line.verdict = Verdict::Hole(format!(
            "reduction = true, but the run did not reduce: {}",
            report
                .reduction
                .as_deref()
                .unwrap_or("no reduction reported")
        ));
    }
}

fn describe(report: &Report, verdict: &str) -> String {
    match (verdict, &report.property) {
        ("violated", Some(property)) => format!("violated {property}"),
        ("pass", _) => "every property held".into(),
        (other, _) => match &report.message {
            Some(message) => format!("{other}: {message}"),
            None => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(max_depth: Option<u64>) -> Variant {
        Variant {
            core: "c".into(),
            variant: "control".into(),
            expect: None,
            summary: None,
            source: Source::Rust("rust:reqack".into()),
            nodes: 2,
            params: Vec::new(),
            deadlock: true,
            max_depth,
            max_states: None,
            timeout: Duration::from_secs(60),
            search: Search::Bfs,
            reduction: false,
        }
    }

    fn passing(complete: bool, bound: Option<&str>) -> Report {
        Report {
            verdict: "pass".into(),
            depth: 7,
            states: 100,
            complete,
            bound: bound.map(str::to_string),
            ..Report::default()
        }
    }

    fn verdict(variant: &Variant, report: &Report) -> Verdict {
        let mut line = Line {
            core: variant.core.clone(),
            variant: variant.variant.clone(),
            expect: "-".into(),
            verdict: Verdict::Pass,
            depth: 0,
            states: 0,
            walks: None,
            wall: Duration::ZERO,
        };
        judge(variant, report, &mut line);
        line.verdict
    }

    /// A configuration that asks for reduction must get it: a run that
    /// says it explored every step is a hole, not a pass.
    #[test]
    fn a_variant_asking_for_reduction_passes_only_when_the_run_reduced() {
        let reducing = Variant {
            reduction: true,
            ..control(None)
        };
        let with = |reduction: &str| Report {
            reduction: Some(reduction.into()),
            ..passing(true, None)
        };
        let on = with("on (persistent sets): 12 states expanded through a persistent set");
        assert_eq!(verdict(&reducing, &on), Verdict::Pass);
        let off = with("asked for but off, every step was explored: symmetry is on");
        assert!(
            matches!(verdict(&reducing, &off), Verdict::Hole(why) if why.contains("symmetry is on")),
            "{:?}",
            verdict(&reducing, &off)
        );
        assert!(matches!(
            verdict(&reducing, &passing(true, None)),
            Verdict::Hole(_)
        ));
        assert_eq!(verdict(&control(None), &off), Verdict::Pass);
    }

    #[test]
    fn a_control_passes_after_a_complete_search_or_one_cut_by_its_own_depth() {
        assert_eq!(verdict(&control(None), &passing(true, None)), Verdict::Pass);
        assert_eq!(
            verdict(&control(Some(16)), &passing(false, Some("depth 16"))),
            Verdict::Pass
        );
    }

    #[test]
    fn a_control_cut_short_by_anything_else_is_a_hole() {
        for (max_depth, bound) in [
            (None, "5 distinct states"),
            (Some(16), "depth 16, 5 distinct states"),
            (Some(16), "depth 3"),
            (None, "1000 random walks of at most 100 steps"),
        ] {
            let judged = verdict(&control(max_depth), &passing(false, Some(bound)));
            assert!(
                matches!(&judged, Verdict::Hole(why) if why.contains("not complete")),
                "{bound}: {judged:?}"
            );
        }
    }

    #[test]
    fn a_caught_bug_holds_only_if_its_trace_replays_to_the_same_violation() {
        let bug = Variant {
            variant: "bug1".into(),
            expect: Some("P".into()),
            ..control(None)
        };
        let replayed = |verdict: &str, property: Option<&str>| Report {
            verdict: verdict.into(),
            property: property.map(str::to_string),
            ..Report::default()
        };
        assert_eq!(judge_replay(&bug, &replayed("violated", Some("P"))), Ok(()));
        for (report, why) in [
            (replayed("violated", Some("Q")), "violated Q"),
            (replayed("pass", None), "every property held"),
        ] {
            let judged = judge_replay(&bug, &report);
            assert!(
                matches!(&judged, Err(Verdict::Hole(text)) if text.contains("does not replay") && text.contains(why)),
                "{judged:?}"
            );
        }
    }

    #[test]
    fn a_variant_out_of_time_is_a_timeout_that_says_how_far_it_got() {
        let report = Report {
            verdict: "time-limit".into(),
            depth: 19,
            states: 64_000,
            walks: Some(1200),
            ..Report::default()
        };
        let mut line = Line {
            core: "raft".into(),
            variant: "bug1".into(),
            expect: "P".into(),
            verdict: Verdict::Pass,
            depth: 0,
            states: 0,
            walks: None,
            wall: Duration::from_secs(1),
        };
        judge(&control(None), &report, &mut line);
        assert_eq!(line.verdict, Verdict::Timeout);
        let text = line.render();
        for part in ["TIMEOUT", "depth=19", "states=64000", "walks=1200"] {
            assert!(text.contains(part), "{text}");
        }
    }
}
