//! Depth-first search with an optional depth bound (one worker).
//!
//! States are expanded last-found first. Every successor is fingerprinted
//! when generated, as in BFS, so the distinct count of a complete DFS equals
//! BFS's; the counterexample is the DFS path, not necessarily a shortest one.

use std::sync::atomic::Ordering;
use std::time::Instant;

use cmc_model::{Encode, Model};
use cmc_store::{TraceId, TraceLog, Wanted};

use crate::expand::{Expander, Scratch, SearchError, ViolationSite};
use crate::progress::Progress;
use crate::properties::PropertySet;
use crate::strategy::{Describe, Explore};
use crate::visit::{make_room, new_visited_set, visit_initial_states};
use crate::{Outcome, SearchOptions, Stats, Verdict};

/// States expanded between two looks at the interrupt flag.
const INTERRUPT_CHECK_EVERY: u64 = 64;

/// Depth-first search: the [`crate::Strategy::Dfs`] strategy.
pub(crate) struct DepthFirst;

impl Describe for DepthFirst {
    fn name(&self) -> &'static str {
        "dfs"
    }

    fn workers(&self, _: &SearchOptions) -> usize {
        1
    }
}

impl Explore for DepthFirst {
    /// Runs a depth-first search of `model`.
    fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M> {
        let dir = options.spill_dir();
        match TraceLog::create_in(&dir) {
            Ok(log) => search(model, options, &log),
            Err(problem) => Outcome {
                verdict: Verdict::Error {
                    message: format!(
                        "cannot create the trace log in {}: {problem}",
                        dir.display()
                    ),
                },
                stats: Stats::default(),
                counterexample: None,
            },
        }
    }
}

/// Searches `model` depth-first, writing parent links into `log`.
fn search<M: Model>(model: &M, options: &SearchOptions, log: &TraceLog) -> Outcome<M> {
    let started = Instant::now();
    let properties =
        PropertySet::new(model.properties()).evaluating_twice(options.check_determinism);
    let mut table = new_visited_set(options);
    let progress = Progress::start(options.progress);
    let mut stats = Stats {
        workers: 1,
        ..Stats::default()
    };
    let mut stack: Vec<(M::State, TraceId, u64)> = Vec::new();
    let mut interrupted = false;
    let result = (|| -> Result<Option<ViolationSite>, SearchError> {
        let mut scratch = Scratch::new(log);
        visit_initial_states(
            model,
            &properties,
            &mut table,
            options,
            &mut scratch,
            &mut |id, _, state| stack.push((state.clone(), id, 1)),
        )?;
        stack.reverse(); // expand the first initial state first
        let mut expanded: u64 = 0;
        while scratch.violation.is_none() {
            expanded += 1;
            if expanded.is_multiple_of(INTERRUPT_CHECK_EVERY)
                && !stack.is_empty()
                && crate::options::stop_asked(options)
            {
                interrupted = true;
                break;
            }
            let Some((state, trace_id, depth)) = stack.pop() else {
                break;
            };
            stats.depth = stats.depth.max(depth);
            if options.max_depth.is_some_and(|max| depth >= max) {
                stats.states_left_on_queue += 1;
                continue;
            }
            let state_bytes = state.to_bytes();
            let mut wanted = 0;
            loop {
                make_room(&mut table, options, Wanted::exactly(wanted))?;
                let room = table.insert_room();
                let expander = Expander::new(model, &properties, &table, options);
                let first_child = stack.len();
                let done = expander.expand(
                    &mut scratch,
                    &state,
                    &state_bytes,
                    trace_id,
                    depth,
                    &mut |count| {
                        wanted = count as u64;
                        wanted <= room
                    },
                    &mut |id, _, next| stack.push((next.clone(), id, depth + 1)),
                )?;
                if done {
                    stack[first_child..].reverse(); // take the first action first
                    break;
                }
            }
            progress.counters.generated.store(
                stats.states_generated + scratch.generated,
                Ordering::Relaxed,
            );
            progress
                .counters
                .distinct
                .store(table.len(), Ordering::Relaxed);
            progress
                .counters
                .queued
                .store(stack.len() as u64, Ordering::Relaxed);
            progress
                .counters
                .depth
                .store(stats.depth, Ordering::Relaxed);
        }
        scratch.flush()?;
        stats.states_generated += scratch.generated;
        stats.states_left_on_queue += stack.len() as u64;
        if let Some(site) = &scratch.violation {
            stats.depth = stats.depth.max(site.length);
        }
        stats.complete = scratch.violation.is_none() && stats.states_left_on_queue == 0;
        stats.coverage = options.coverage.then(|| {
            crate::Coverage::new(std::mem::take(&mut scratch.tally), model.action_kinds())
        });
        Ok(scratch.violation.take())
    })();
    drop(progress);
    stats.distinct_states = table.len();
    stats.table_bytes = table.memory_bytes() as u64;
    let outcome = match result {
        Ok(None) if interrupted => Outcome {
            verdict: Verdict::Interrupted { checkpoint: None },
            stats,
            counterexample: None,
        },
        result => crate::outcome::conclude(model, &properties, log, stats, result),
    };
    Outcome {
        stats: Stats {
            wall: started.elapsed(),
            ..outcome.stats
        },
        ..outcome
    }
}
