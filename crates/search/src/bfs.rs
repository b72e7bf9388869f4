//! Breadth-first search, level by level, with many workers.
//!
//! Each level is a [`Frontier`] of segments; workers take segments from a
//! shared cursor, expand every state and write new states into segments of
//! the next level. Because a level is finished before the next begins, the
//! distinct-state count, the generated count and the depth do not depend on
//! the number of workers, and a violation found while expanding level `d`
//! has the shortest possible length. When a violation is found, the level is
//! still finished and the least violation (by length, property order, then
//! fingerprint) is reported, so the verdict does not depend on timing either.

use std::mem;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use cmc_model::{Encode, Model};
use cmc_store::{FingerprintTable, Frontier, LevelBuilder, Segment, TraceLog};

use crate::expand::{Expander, Scratch, SearchError, ViolationSite};
use crate::progress::Progress;
use crate::properties::PropertySet;
use crate::{Outcome, SearchOptions, Stats};

/// Load factor beyond which workers pause so that the table can grow.
const GROW_AT_LOAD: f64 = 0.75;
/// States a worker expands between two looks at the table's load (reading
/// the length sums per-thread counters, so it is not done per state).
const LOAD_CHECK_EVERY: usize = 32;

/// What one worker produced from its share of a level (its new states went
/// into the next level's builder).
struct WorkerYield {
    unfinished: Vec<Segment>,
    generated: u64,
    violation: Option<ViolationSite>,
    error: Option<SearchError>,
}

/// What a whole level produced.
struct LevelYield {
    next: Frontier,
    spilled_bytes: u64,
    generated: u64,
    violation: Option<ViolationSite>,
}

/// Runs a breadth-first search of `model`.
pub(crate) fn run<M: Model>(model: &M, options: &SearchOptions, log: &TraceLog) -> Outcome<M> {
    let started = Instant::now();
    let properties = PropertySet::new(model.properties());
    let mut table = FingerprintTable::with_capacity(options.initial_table_capacity());
    let progress = Progress::start(options.progress);
    let workers = options.workers.max(1);
    let mut stats = Stats {
        workers,
        ..Stats::default()
    };

    let result = (|| -> Result<Option<ViolationSite>, SearchError> {
        let (mut level, generated, mut violation) =
            initial_level(model, &properties, &table, options, log)?;
        stats.states_generated = generated;
        stats.depth = u64::from(!level.is_empty());
        loop {
            progress
                .counters
                .depth
                .store(stats.depth, Ordering::Relaxed);
            progress
                .counters
                .queued
                .store(level.len(), Ordering::Relaxed);
            progress
                .counters
                .distinct
                .store(table.len(), Ordering::Relaxed);
            let bounded = options.max_depth.is_some_and(|max| stats.depth >= max);
            if violation.is_some() || level.is_empty() || bounded {
                stats.states_left_on_queue = level.len();
                stats.complete = violation.is_none() && level.is_empty();
                return Ok(violation);
            }
            let produced = expand_level(
                model,
                &properties,
                &mut table,
                options,
                log,
                level,
                stats.depth,
                workers,
                &progress,
            )?;
            stats.states_generated += produced.generated;
            stats.frontier_spilled_bytes += produced.spilled_bytes;
            violation = produced.violation;
            level = produced.next;
            if !level.is_empty() {
                stats.depth += 1;
            }
        }
    })();
    drop(progress);
    stats.distinct_states = table.len();
    stats.table_bytes = table.memory_bytes() as u64;
    let outcome = crate::outcome::conclude(model, &properties, log, stats, result);
    Outcome {
        stats: Stats {
            wall: started.elapsed(),
            ..outcome.stats
        },
        ..outcome
    }
}

/// Level 1: the initial states.
fn initial_level<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    table: &FingerprintTable,
    options: &SearchOptions,
    log: &TraceLog,
) -> Result<(Frontier, u64, Option<ViolationSite>), SearchError> {
    let expander = Expander::new(model, properties, table, options);
    let mut scratch = Scratch::new(log);
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    let mut segments = Vec::new();
    let mut segment = Segment::new();
    for (index, state) in initial.into_iter().enumerate() {
        expander.visit_initial(&mut scratch, index, state, &mut |id, bytes, _| {
            segment.push(id, bytes);
            if segment.is_full() {
                segments.push(mem::take(&mut segment));
            }
        })?;
    }
    segments.push(segment);
    scratch.flush()?;
    Ok((
        Frontier::from_segments(segments),
        scratch.generated,
        scratch.violation,
    ))
}

/// Expands every state of `level` (at `depth`) into the next level, pausing
/// the workers to grow the table whenever it fills up.
#[allow(clippy::too_many_arguments)]
fn expand_level<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    table: &mut FingerprintTable,
    options: &SearchOptions,
    log: &TraceLog,
    level: Frontier,
    depth: u64,
    workers: usize,
    progress: &Progress,
) -> Result<LevelYield, SearchError> {
    let next = LevelBuilder::new(options.frontier_memory_budget_bytes(), &options.spill_dir());
    let mut pending = level;
    let mut generated = 0;
    let mut violation = None;
    while !pending.is_empty() {
        let pause = AtomicBool::new(false);
        let cursor = AtomicUsize::new(0);
        let expander = Expander::new(model, properties, table, options);
        let share = Share {
            expander: &expander,
            log,
            pending: &pending,
            next: &next,
            cursor: &cursor,
            pause: &pause,
            depth,
            progress,
        };
        let yields: Vec<WorkerYield> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| scope.spawn(|| share.expand()))
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("a search worker panicked"))
                .collect()
        });
        let mut unfinished = Vec::new();
        for worker in yields {
            if let Some(error) = worker.error {
                return Err(error);
            }
            generated += worker.generated;
            if let Some(found) = worker.violation {
                ViolationSite::keep_least(&mut violation, found);
            }
            unfinished.extend(worker.unfinished);
        }
        if pause.load(Ordering::Relaxed) {
            grow(table, options)?;
        }
        pending = pending.remaining_with(unfinished);
    }
    Ok(LevelYield {
        spilled_bytes: next.spilled_bytes(),
        next: next.finish(),
        generated,
        violation,
    })
}

/// Doubles the table, within the memory budget.
pub(crate) fn grow(
    table: &mut FingerprintTable,
    options: &SearchOptions,
) -> Result<(), SearchError> {
    let capacity = table.capacity() * 2;
    if let Some(budget) = options.table_memory_budget_bytes() {
        if FingerprintTable::bytes_for(capacity) as u64 > budget {
            return Err(SearchError::MemoryBudget {
                needed_bytes: FingerprintTable::bytes_for(capacity) as u64,
                budget_bytes: budget,
            });
        }
    }
    table.grow(capacity);
    Ok(())
}

/// What the workers of one pass over a level share.
struct Share<'a, M: Model> {
    expander: &'a Expander<'a, M>,
    log: &'a TraceLog,
    pending: &'a Frontier,
    next: &'a LevelBuilder,
    cursor: &'a AtomicUsize,
    pause: &'a AtomicBool,
    depth: u64,
    progress: &'a Progress,
}

impl<M: Model> Share<'_, M> {
    /// One worker's loop: take segments until none is left or the table must
    /// grow; states not expanded when pausing are returned as unfinished.
    fn expand(&self) -> WorkerYield {
        let mut scratch = Scratch::new(self.log);
        let mut worker = WorkerYield {
            unfinished: Vec::new(),
            generated: 0,
            violation: None,
            error: None,
        };
        let mut out = Segment::new();
        let table = self.expander.table;
        let grow_at = (table.capacity() as f64 * GROW_AT_LOAD) as u64;
        let result = (|| -> Result<(), SearchError> {
            while !self.pause.load(Ordering::Relaxed) {
                let index = self.cursor.fetch_add(1, Ordering::Relaxed);
                if index >= self.pending.segment_count() {
                    break;
                }
                let Some(segment) = self.pending.take(index)? else {
                    continue;
                };
                let mut entries = segment.iter();
                let mut expanded = 0usize;
                let mut full = Vec::new();
                while let Some(entry) = entries.next() {
                    let state = M::State::decode_exact(entry.state)?;
                    self.expander.expand(
                        &mut scratch,
                        &state,
                        entry.trace_id,
                        self.depth,
                        &mut |id, bytes, _| {
                            out.push(id, bytes);
                            if out.is_full() {
                                full.push(mem::take(&mut out));
                            }
                        },
                    )?;
                    for segment in full.drain(..) {
                        self.next.push(segment)?;
                    }
                    expanded += 1;
                    if expanded.is_multiple_of(LOAD_CHECK_EVERY) && table.len() >= grow_at {
                        self.pause.store(true, Ordering::Relaxed);
                    }
                    if self.pause.load(Ordering::Relaxed) {
                        let mut rest = Segment::new();
                        entries.for_each(|entry| rest.push(entry.trace_id, entry.state));
                        worker.unfinished.push(rest);
                        break;
                    }
                }
                let counters = &self.progress.counters;
                counters
                    .generated
                    .fetch_add(scratch.generated, Ordering::Relaxed);
                worker.generated += mem::take(&mut scratch.generated);
                counters.distinct.store(table.len(), Ordering::Relaxed);
            }
            self.next.push(mem::take(&mut out))?;
            scratch.flush()
        })();
        worker.violation = scratch.violation.take();
        worker.error = result.err();
        worker
    }
}
