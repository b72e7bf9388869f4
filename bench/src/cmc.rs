//! Runs cmc's breadth-first checkers on a model: the native engine, and
//! the timely dataflow engine in one process.

use std::sync::Arc;
use std::time::Instant;

use cmc_model::Model;
use cmc_search::{Checker, SearchOptions};

use crate::sample::Sample;

/// Checks `model` with cmc on `workers` workers, with deadlock checking as
/// `check_deadlock` says (stateright has no such check; TLC has it on).
pub fn check<M: Model>(model: M, workers: usize, check_deadlock: bool) -> Sample {
    let checker = Checker::new(model)
        .workers(workers)
        .check_deadlock(check_deadlock);
    run(checker)
}

/// Runs a configured `checker` and measures it.
pub fn run<M: Model>(checker: Checker<M>) -> Sample {
    let started = Instant::now();
    let outcome = checker.run();
    let wall = started.elapsed();
    Sample {
        distinct: outcome.stats.distinct_states,
        generated: outcome.stats.states_generated,
        depth: outcome.stats.depth,
        wall,
        table_bytes: outcome.stats.table_bytes,
        peak_rss_bytes: 0,
        verdict: outcome.verdict.as_str().into(),
    }
}

/// Checks `model` with cmc's timely engine: one process, `workers` timely
/// workers (the wall time includes starting them).
pub fn check_timely<M: Model + Send + 'static>(
    model: M,
    workers: usize,
    check_deadlock: bool,
) -> Sample {
    let options = SearchOptions {
        workers,
        check_deadlock,
        ..SearchOptions::default()
    };
    let started = Instant::now();
    let run = cmc_distributed::check(Arc::new(model), &options, None);
    let wall = started.elapsed();
    match run {
        Ok(run) => Sample {
            distinct: run.outcome.stats.distinct_states,
            generated: run.outcome.stats.states_generated,
            depth: run.outcome.stats.depth,
            wall,
            table_bytes: 0,
            peak_rss_bytes: 0,
            verdict: run.outcome.verdict.as_str().into(),
        },
        Err(problem) => {
            eprintln!("cmc-bench: the timely engine failed: {problem}");
            Sample::failed(wall)
        }
    }
}
