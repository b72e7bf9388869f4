//! Non-determinism detection by re-running: the schedule of an execution the driver just
//! ran is run again and the two runs are compared step by step and by outcome. Used on a
//! failing execution before it is reported, and on a sample of passing executions in every
//! mode (the first, then every n-th), so that randomized modes and models with a single
//! schedule, which never replay a prefix, are checked too.

use super::replay::Replay;
use super::Model;
use crate::report::{render_columns, stop_headline, trace_rows, Failure};
use crate::rt::{Driver, Event, Stop};

/// The execution the driver just ran, as needed to compare a re-run with it.
pub struct FirstRun {
    trace: Vec<Event>,
    outcome: Option<Stop>,
    table: String,
}

impl FirstRun {
    /// Captures the driver's last execution, which ended with `outcome` (`None`: completed).
    pub fn capture(driver: &Driver, outcome: Option<Stop>) -> Self {
        let st = driver.state();
        FirstRun {
            trace: st.trace.clone(),
            outcome,
            table: render_columns(&trace_rows(&st), st.threads.len()),
        }
    }
}

/// Describes how an execution ended, for the report.
fn ended(outcome: Option<&Stop>) -> String {
    match outcome {
        None => "completed".to_string(),
        Some(stop) => stop_headline(stop),
    }
}

/// Re-runs `first`'s schedule on `driver` and compares. Returns `None` when both runs took
/// the same steps with the same values and ended the same way; otherwise a non-determinism
/// failure naming the first step where they differ, with the second run's interleaving and
/// the first run's in its preamble.
pub fn rerun(
    driver: &mut Driver,
    model: &Model,
    first: FirstRun,
    executions: u64,
    mode: String,
    seed: Option<u64>,
) -> Option<Failure> {
    let schedule = crate::schedule::Schedule::of(&first.trace);
    let outcome = driver.run(model, &mut Replay::new(schedule.0));
    let st = driver.state();
    let same_kind = first.outcome.as_ref().map(std::mem::discriminant)
        == outcome.as_ref().map(std::mem::discriminant);
    let step = match first
        .trace
        .iter()
        .zip(st.trace.iter())
        .position(|(a, b)| !a.same_as(b))
    {
        Some(step) => step,
        None if first.trace.len() != st.trace.len() || !same_kind => {
            first.trace.len().min(st.trace.len())
        }
        None => return None,
    };
    let show = |trace: &[Event], outcome: Option<&Stop>| {
        trace.get(step).map_or_else(
            || format!("the execution ended ({})", ended(outcome)),
            |e| crate::report::describe_event(&st, e),
        )
    };
    let stop = Stop::NonDeterminism {
        step,
        first: show(&first.trace, first.outcome.as_ref()),
        second: show(&st.trace, outcome.as_ref()),
    };
    let mut failure = Failure::new(stop, &st, executions, mode, seed);
    failure.preamble = Some(format!(
        "= The first run ({}) =\n{}\n= The second run of the same schedule follows =\n",
        ended(first.outcome.as_ref()),
        first.table
    ));
    Some(failure)
}
