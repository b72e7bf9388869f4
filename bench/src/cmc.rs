//! Runs cmc's own breadth-first checker on a model.

use std::time::Instant;

use cmc_model::Model;
use cmc_search::Checker;

use crate::sample::Sample;

/// Checks `model` with cmc on `workers` workers, with deadlock checking as
/// `check_deadlock` says (stateright has no such check; TLC has it on).
pub fn check<M: Model>(model: M, workers: usize, check_deadlock: bool) -> Sample {
    let checker = Checker::new(model)
        .workers(workers)
        .check_deadlock(check_deadlock);
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
