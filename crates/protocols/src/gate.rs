//! The planted-bug gate: every control run passes, every planted bug is
//! caught by its expected property within its budget.
//!
//! For each [`Reference`] core, the control (no bug) is checked by
//! breadth-first search under the core's gate configuration, to its depth
//! bound; it must pass. Each [`PlantedBug`] is then checked under the same
//! configuration and bound: it is `CAUGHT` when the search reports a violation
//! of exactly the expected property, at a depth and state count within the
//! bug's budget, and its counterexample is written as a replay file under the
//! evidence folder. Anything else is a `HOLE`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cmc_search::{Checker, Outcome, ReplayFile, Verdict};
use cmc_world::World;

/// One planted bug of a core and how the gate must catch it.
#[derive(Clone, Copy, Debug)]
pub struct PlantedBug {
    /// The bug number (`CMC_BUG == n` in C, the const parameter in Rust).
    pub bug: u32,
    /// What the bug does, in a few words.
    pub summary: &'static str,
    /// The property that must catch it.
    pub expected: &'static str,
    /// Deepest counterexample accepted (states, initial state = 1).
    pub max_depth: u64,
    /// Most distinct states the search may explore before catching it.
    pub max_states: u64,
}

/// A reference core as the gate runs it.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// The core's name.
    pub core: &'static str,
    /// `C` or `Rust`.
    pub language: &'static str,
    /// Nodes of the gate configuration.
    pub nodes: usize,
    /// World parameters of the gate configuration (`NAME=VALUE`).
    pub params: &'static [&'static str],
    /// Depth bound of the control run (`None`: exhaustive).
    pub control_depth: Option<u64>,
    /// Whether a hang (non-terminal state without actions) is a violation.
    pub check_deadlock: bool,
    /// The planted bugs.
    pub bugs: &'static [PlantedBug],
    /// Builds the World of variant `bug` (0: the control) for `nodes` and `params`.
    pub world: fn(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String>,
}

impl Reference {
    /// The gate configuration as one line, e.g. `nodes=3 requests=1 crashes=1`.
    pub fn config(&self) -> String {
        let mut text = format!("nodes={}", self.nodes);
        for param in self.params {
            let _ = write!(text, " {param}");
        }
        text
    }
}

/// How one run of the gate ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineResult {
    /// Control: every property held (to the depth bound).
    Pass,
    /// Planted bug: violated the expected property within budget.
    Caught,
    /// A control that did not pass, or a bug that was not caught as declared.
    Hole(String),
}

/// One line of the gate's report.
#[derive(Clone, Debug)]
pub struct GateLine {
    /// The core's name.
    pub core: &'static str,
    /// `control` or `bugN`.
    pub variant: String,
    /// The expected property (`-` for the control).
    pub expected: &'static str,
    /// The verdict for this line.
    pub result: LineResult,
    /// Counterexample length for a violation; BFS levels reached otherwise.
    pub depth: u64,
    /// Distinct states explored.
    pub states: u64,
    /// Wall time of the search.
    pub wall: Duration,
    /// The replay file written for a caught bug.
    pub evidence: Option<PathBuf>,
}

impl GateLine {
    /// The line as the gate prints it: core, variant, expected property,
    /// CAUGHT / PASS / HOLE, depth, states explored, time.
    pub fn render(&self) -> String {
        let status = match &self.result {
            LineResult::Pass => "PASS".to_string(),
            LineResult::Caught => "CAUGHT".to_string(),
            LineResult::Hole(why) => format!("HOLE ({why})"),
        };
        format!(
            "{:<15} {:<8} {:<26} {:<8} depth={:<3} states={:<9} time={:.2}s",
            self.core,
            self.variant,
            self.expected,
            status,
            self.depth,
            self.states,
            self.wall.as_secs_f64(),
        )
    }
}

/// Everything the gate found.
#[derive(Clone, Debug, Default)]
pub struct GateReport {
    /// One line per control and per planted bug, in order.
    pub lines: Vec<GateLine>,
}

impl GateReport {
    /// Whether every control passed and every planted bug was caught.
    pub fn success(&self) -> bool {
        self.lines
            .iter()
            .all(|line| !matches!(line.result, LineResult::Hole(_)))
    }

    /// The lines that are holes.
    pub fn holes(&self) -> impl Iterator<Item = &GateLine> {
        self.lines
            .iter()
            .filter(|line| matches!(line.result, LineResult::Hole(_)))
    }
}

/// Options of a gate run.
#[derive(Clone, Copy, Debug)]
pub struct GateOptions {
    /// BFS worker threads.
    pub workers: usize,
    /// Print each line to stdout as soon as it is known.
    pub print: bool,
}

impl Default for GateOptions {
    fn default() -> GateOptions {
        GateOptions {
            workers: 2,
            print: true,
        }
    }
}

/// Runs the gate over `references`, writing evidence under `evidence_dir`
/// (created if missing). Every problem (a World that cannot be built, a core
/// fault, an evidence file that cannot be written) is a hole with its reason.
pub fn run_references(
    references: &[Reference],
    evidence_dir: &Path,
    options: GateOptions,
) -> GateReport {
    let mut report = GateReport::default();
    let mut emit = |line: GateLine| {
        if options.print {
            println!("{}", line.render());
        }
        report.lines.push(line);
    };
    if let Err(error) = std::fs::create_dir_all(evidence_dir) {
        for reference in references {
            emit(hole_line(
                reference,
                "control",
                "-",
                format!("cannot create {}: {error}", evidence_dir.display()),
            ));
        }
        return report;
    }
    for reference in references {
        emit(run_control(reference, options));
        for bug in reference.bugs {
            emit(run_bug(reference, bug, evidence_dir, options));
        }
    }
    report
}

/// The gate over every reference core of this crate ([`crate::references`]).
pub fn run_gate(evidence_dir: &Path, options: GateOptions) -> GateReport {
    run_references(&crate::references(), evidence_dir, options)
}

fn hole_line(
    reference: &Reference,
    variant: &str,
    expected: &'static str,
    why: String,
) -> GateLine {
    GateLine {
        core: reference.core,
        variant: variant.to_string(),
        expected,
        result: LineResult::Hole(why),
        depth: 0,
        states: 0,
        wall: Duration::ZERO,
        evidence: None,
    }
}

/// Runs variant `bug` of `reference` to `max_depth`; the World (for replay
/// files and faults) and the outcome.
fn search(
    reference: &Reference,
    bug: u32,
    max_depth: Option<u64>,
    options: GateOptions,
) -> Result<(Checker<World>, Outcome<World>, Duration), String> {
    let world = (reference.world)(bug, reference.nodes, reference.params)?;
    let mut checker = Checker::new(world)
        .workers(options.workers)
        .check_deadlock(reference.check_deadlock);
    if let Some(depth) = max_depth {
        checker = checker.max_depth(depth);
    }
    let started = Instant::now();
    let outcome = checker.run();
    let wall = started.elapsed();
    if let Some(fault) = checker.model().fault() {
        return Err(format!("core fault: {fault}").replace('\n', " "));
    }
    Ok((checker, outcome, wall))
}

fn run_control(reference: &Reference, options: GateOptions) -> GateLine {
    match search(reference, 0, reference.control_depth, options) {
        Err(why) => hole_line(reference, "control", "-", why),
        Ok((_, outcome, wall)) => GateLine {
            core: reference.core,
            variant: "control".into(),
            expected: "-",
            result: match &outcome.verdict {
                Verdict::Pass => LineResult::Pass,
                other => LineResult::Hole(format!("control run ended {}", describe(other))),
            },
            depth: outcome.stats.depth,
            states: outcome.stats.distinct_states,
            wall,
            evidence: None,
        },
    }
}

fn run_bug(
    reference: &Reference,
    bug: &PlantedBug,
    evidence_dir: &Path,
    options: GateOptions,
) -> GateLine {
    let variant = format!("bug{}", bug.bug);
    let (checker, outcome, wall) = match search(reference, bug.bug, Some(bug.max_depth), options) {
        Err(why) => return hole_line(reference, &variant, bug.expected, why),
        Ok(found) => found,
    };
    let states = outcome.stats.distinct_states;
    let depth = outcome
        .counterexample
        .as_ref()
        .map_or(outcome.stats.depth, |cx| cx.len() as u64);
    let mut line = GateLine {
        core: reference.core,
        variant: variant.clone(),
        expected: bug.expected,
        result: LineResult::Caught,
        depth,
        states,
        wall,
        evidence: None,
    };
    let caught_property = match &outcome.verdict {
        Verdict::Violated { property, .. } => property.as_str(),
        other => {
            line.result =
                LineResult::Hole(format!("not caught: the run ended {}", describe(other)));
            return line;
        }
    };
    if caught_property != bug.expected {
        line.result = LineResult::Hole(format!(
            "violated {caught_property}, not the expected {}",
            bug.expected
        ));
    } else if depth > bug.max_depth || states > bug.max_states {
        line.result = LineResult::Hole(format!(
            "caught beyond its budget (depth {} / states {})",
            bug.max_depth, bug.max_states
        ));
    }
    if let Some(counterexample) = &outcome.counterexample {
        let file =
            ReplayFile::from_counterexample(checker.model(), counterexample, Some(caught_property));
        let path = evidence_dir.join(format!("{}-{variant}.replay", reference.core));
        match std::fs::write(&path, file.to_text()) {
            Ok(()) => line.evidence = Some(path),
            Err(error) => {
                line.result = LineResult::Hole(format!("cannot write {}: {error}", path.display()))
            }
        }
    }
    line
}

fn describe(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => "passing".into(),
        Verdict::Violated { property, .. } => format!("violating {property}"),
        Verdict::Vacuous { properties } => format!("vacuous ({})", properties.join(", ")),
        Verdict::Interrupted { .. } => "interrupted".into(),
        Verdict::Error { message } => format!("in error: {message}"),
    }
}
