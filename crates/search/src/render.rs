//! The human-readable text of a [`Report`], in the shape TLC users know.

use std::fmt::Write;

use crate::report::{CoverageReport, WalksReport};
use crate::{AnyModel, CounterexampleReport, Report, SearchOptions};

/// The first line of a report: the model, its parameters, the strategy, the
/// workers and every setting that can change the verdict.
fn header(
    model: &str,
    params: &[(String, String)],
    strategy: &str,
    workers: usize,
    settings: &[String],
) -> String {
    let mut line = format!("model {model}");
    for (name, value) in params {
        let _ = write!(line, " {name}={value}");
    }
    let _ = write!(
        line,
        " ({strategy}, {workers} worker{}",
        if workers == 1 { "" } else { "s" }
    );
    if !settings.is_empty() {
        let _ = write!(line, "; {}", settings.join(", "));
    }
    line.push(')');
    // A name or value could hold a line break: the header stays one line.
    line.replace(['\n', '\r'], " ")
}

/// The header line of a search of `model` with `options`, as the report of
/// that search will start: what a front end prints before the search starts.
pub fn run_header(model: &dyn AnyModel, options: &SearchOptions) -> String {
    let params = cmc_model::param_pairs(model.params());
    let workers = options.strategy_workers();
    header(
        &model.name(),
        &params,
        options.strategy_name(),
        workers,
        &options.verdict_settings(),
    )
}

impl Report {
    /// The header line, the verdict, the counterexample (if any) and the
    /// summary, as text.
    pub fn render_text(&self) -> String {
        let mut text = header(
            &self.model,
            &self.params,
            &self.strategy,
            self.workers,
            &self.settings,
        );
        text.push('\n');
        text.push_str(&self.render_outcome());
        text
    }

    /// [`render_text`](Report::render_text) without the header line, for a
    /// front end that printed [`run_header`] when the search started.
    pub fn render_outcome(&self) -> String {
        let mut text = String::new();
        match self.verdict.as_str() {
            "pass" if self.strategy == "replay" => {
                let _ = writeln!(
                    text,
                    "Replay completed: no property is violated along the trace."
                );
            }
            "pass" if self.complete => {
                let _ = writeln!(text, "Model checking completed. No error has been found.");
            }
            "pass" => {
                let _ = writeln!(
                    text,
                    "No violation found within the bound ({}); the search was not complete.",
                    self.bound.as_deref().unwrap_or("this run's limits")
                );
            }
            "violated" => {
                let property = self.property.as_deref().unwrap_or("?");
                let _ = match self.violation_kind.as_deref() {
                    Some("deadlock") => writeln!(text, "Error: Deadlock reached."),
                    Some("step") => writeln!(text, "Error: Step property {property} is violated."),
                    _ => writeln!(text, "Error: Invariant {property} is violated."),
                };
            }
            "vacuous" => {
                let within = match (self.complete, &self.bound) {
                    (true, _) => String::new(),
                    (false, Some(bound)) => format!(" within the bound ({bound})"),
                    (false, None) => " within this run's limits".into(),
                };
                let _ = writeln!(
                    text,
                    "Error: the search ended without ever reaching {}{within}: properties that rely on it were checked vacuously.",
                    self.unreached_witnesses.join(", ")
                );
            }
            "time-limit" => {
                let _ = writeln!(
                    text,
                    "Bounded by time: {}. The search was not complete; no violation was found in what it explored.",
                    self.message.as_deref().unwrap_or("the time limit was reached")
                );
            }
            "interrupted" => {
                let _ = writeln!(
                    text,
                    "The search was interrupted: {}",
                    self.message.as_deref().unwrap_or("")
                );
            }
            _ => {
                let _ = writeln!(
                    text,
                    "Error: the search could not be completed: {}",
                    self.message.as_deref().unwrap_or("unknown cause")
                );
            }
        }
        if self.verdict == "pass" {
            let _ = match self.properties.as_slice() {
                [] => writeln!(text, "No property was checked."),
                checked => writeln!(text, "Properties checked: {}.", checked.join(", ")),
            };
        }
        if let Some(counterexample) = &self.counterexample {
            render_counterexample(&mut text, counterexample);
        }
        if let Some(length) = self.untraced_violation_length {
            let _ = writeln!(
                text,
                "The shortest counterexample has {length} states; its trace was not kept (--no-trace). Run again without --no-trace (with --max-depth {length} to stop there) to see it."
            );
        }
        if let Some(explanation) = &self.explanation {
            let _ = writeln!(text, "Why the last {} violates it:", self.violated_by());
            for line in explanation.lines() {
                let _ = writeln!(text, "    {line}");
            }
        }
        self.render_summary(&mut text);
        if let Some(reduction) = &self.reduction {
            let _ = writeln!(text, "Partial-order reduction: {reduction}.");
        }
        if let Some(walks) = &self.walks {
            render_walks(&mut text, walks);
        }
        if let Some(coverage) = &self.coverage {
            render_coverage(&mut text, coverage, self.strategy == "simulate");
        }
        text
    }

    fn render_summary(&self, text: &mut String) {
        if self.strategy == "replay" {
            let _ = writeln!(
                text,
                "Replayed a trace of {} states ({} successors computed on the way).",
                self.depth, self.states_generated
            );
            return;
        }
        let _ = writeln!(
            text,
            "{} states generated, {} distinct states found, {} states left on queue.",
            self.states_generated, self.distinct_states, self.states_left_on_queue
        );
        let _ = writeln!(
            text,
            "The depth of the {} state graph search is {}.",
            if self.complete {
                "complete"
            } else {
                "explored"
            },
            self.depth
        );
        let _ = writeln!(
            text,
            "Finished in {:.3} s: {:.0} distinct states/s, {:.0} generated states/s.",
            self.wall_seconds, self.distinct_states_per_second, self.states_generated_per_second
        );
        let _ = writeln!(
            text,
            "The probability of a fingerprint collision is estimated at {:.1e}.",
            self.collision_probability
        );
    }
}

/// Writes what the random walks did: counts, rates, faults injected.
fn render_walks(text: &mut String, walks: &WalksReport) {
    let _ = writeln!(
        text,
        "Walks: {} walk{}{}, {} step{}, deepest {} step{}, {}{} distinct states; {:.0} walks/s, {:.0} steps/s.",
        walks.walks,
        if walks.walks == 1 { "" } else { "s" },
        if walks.swarm { " (swarm)" } else { "" },
        walks.steps,
        if walks.steps == 1 { "" } else { "s" },
        walks.deepest,
        if walks.deepest == 1 { "" } else { "s" },
        if walks.distinct_capped { "at least " } else { "" },
        walks.distinct_states,
        walks.walks_per_second,
        walks.steps_per_second
    );
    let faults: Vec<String> = walks
        .faults
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    let _ = writeln!(
        text,
        "Faults injected: {}.",
        if faults.is_empty() {
            "none".to_string()
        } else {
            faults.join(", ")
        }
    );
    if walks.stopped_by_fault_mix > 0 {
        let _ = writeln!(
            text,
            "{} walk(s) ended where only faults their swarm mix leaves out were enabled (not a deadlock).",
            walks.stopped_by_fault_mix
        );
    }
    if let Some(walk) = walks.failing_walk {
        let _ = writeln!(text, "The failing walk is walk {walk}.");
    }
}

/// Writes the coverage table: per action kind, how often enabled and taken
/// (by a walk; for an exhaustive search, `walks` false: to a new state), the
/// kinds never taken and the budgeted faults that never occurred.
fn render_coverage(text: &mut String, coverage: &CoverageReport, walks: bool) {
    let taken = if walks { "taken" } else { "to new state" };
    let width = coverage
        .kinds
        .iter()
        .map(|k| k.kind.len())
        .max()
        .unwrap_or(0)
        .max("action kind".len());
    let _ = writeln!(text, "Coverage:");
    let _ = writeln!(
        text,
        "  {:<width$} {:>12} {:>12}",
        "action kind", "enabled", taken
    );
    for kind in &coverage.kinds {
        let _ = writeln!(
            text,
            "  {:<width$} {:>12} {:>12}{}",
            kind.kind,
            kind.enabled,
            kind.taken,
            if kind.fault { "  (fault)" } else { "" }
        );
    }
    if !coverage.never_taken.is_empty() {
        let _ = writeln!(text, "Never taken: {}.", coverage.never_taken.join(", "));
    }
    for fault in &coverage.budgeted_faults_never_taken {
        let _ = writeln!(
            text,
            "Warning: fault {fault} has a budget but never occurred: the search did not exercise it."
        );
    }
}

/// Writes the numbered steps: the first state in full, then for each step
/// its action and the fields it changed.
pub(crate) fn render_counterexample(text: &mut String, counterexample: &CounterexampleReport) {
    let _ = writeln!(
        text,
        "The behavior up to this point is ({} states):",
        counterexample.length
    );
    for step in &counterexample.steps {
        match &step.action {
            None => {
                let _ = writeln!(text, "{}: <initial state>", step.number);
                for (name, value) in &step.state {
                    let _ = writeln!(text, "    {name} = {value}");
                }
            }
            Some(action) => {
                let _ = writeln!(text, "{}: {action}", step.number);
                if step.changes.is_empty() {
                    let _ = writeln!(text, "    (no field changed)");
                }
                for change in &step.changes {
                    let _ = writeln!(
                        text,
                        "    {}: {} -> {}",
                        change.name,
                        change.before.as_deref().unwrap_or("(absent)"),
                        change.after.as_deref().unwrap_or("(absent)")
                    );
                }
            }
        }
    }
}
