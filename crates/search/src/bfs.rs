//! Breadth-first search, level by level, with many workers.
//!
//! Each level is a [`Frontier`] of segments; workers take segments from a
//! shared cursor, expand every state and push new states, in segments, into
//! the next level's [`LevelBuilder`]. Because a level is finished before the
//! next begins, the distinct-state count, the generated count and the depth
//! do not depend on the number of workers, and a violation found while
//! expanding level `d` has the shortest possible length. When a violation is
//! found, the level is still finished and the least violation (by length,
//! property order, then fingerprint) is reported, so the verdict does not
//! depend on timing either.
//!
//! Workers pause at state boundaries when the table must grow (it reached
//! its pause threshold, or a state's successors do not fit in the room left
//! for this pass, see [`InsertRoom`]), when a checkpoint is due, or when the
//! search is interrupted; what they had not expanded goes back into the
//! level, so a pause changes nothing that is counted.

use std::mem;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cmc_model::{Encode, Model};
use cmc_store::{Frontier, InsertRoom, LevelBuilder, Segment, TraceLog, VisitedSet, Wanted};

use crate::checkpoint::{CheckpointDir, Counters, NotResumed};
use crate::coverage::{Coverage, KindTally};
use crate::disk_batch::CandidateBatch;
use crate::expand::{Expander, Scratch, SearchError, ViolationSite};
use crate::progress::Progress;
use crate::properties::PropertySet;
use crate::reduction;
use crate::strategy::{Describe, Explore};
use crate::visit::{make_room, new_visited_set, visit_initial_states};
use crate::{Outcome, SearchOptions, Stats, Verdict};

/// States a worker expands between two looks at the pause conditions
/// (reading the table's length sums per-thread counters, so not per state).
const PAUSE_CHECK_EVERY: usize = 32;

/// Expanded segments a worker keeps, emptied, to fill with the next level's
/// states: a segment refilled needs no fresh memory, one grown from empty
/// is reallocated as it grows and touches new pages the kernel must zero.
const SPARE_SEGMENTS: usize = 2;

/// Everything the search is at between two passes of the workers: what a
/// checkpoint saves.
struct Position {
    table: VisitedSet,
    /// States of the current level not yet expanded.
    level: Frontier,
    /// The next level found so far.
    next: LevelBuilder,
    /// Depth of the current level (TLC's convention).
    depth: u64,
    states_generated: u64,
    frontier_spilled_bytes: u64,
    violation: Option<ViolationSite>,
    /// Wall time of earlier runs (before a resume).
    wall_before: Duration,
    /// Counts per action kind (with coverage on; since this run started).
    tally: KindTally,
}

/// What one worker produced in a pass (its new states went into the next
/// level's builder).
struct WorkerYield {
    unfinished: Vec<Segment>,
    generated: u64,
    violation: Option<ViolationSite>,
    error: Option<SearchError>,
    tally: KindTally,
}

/// How a search ended.
enum Ending {
    Finished,
    Interrupted { checkpoint: Option<PathBuf> },
}

/// Breadth-first search: the [`crate::Strategy::Bfs`] strategy.
pub(crate) struct BreadthFirst;

impl Describe for BreadthFirst {
    fn name(&self) -> &'static str {
        "bfs"
    }
}

impl Explore for BreadthFirst {
    /// Runs a breadth-first search of `model` (resuming from a checkpoint
    /// when the options say so).
    fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M> {
        let started = Instant::now();
        let properties =
            PropertySet::new(model.properties()).evaluating_twice(options.check_determinism);
        let workers = options.workers.max(1);
        // The outcome of a search that ended before it began.
        let ended_before = |verdict: Verdict| Outcome {
            verdict,
            stats: Stats {
                workers,
                wall: started.elapsed(),
                ..Stats::default()
            },
            counterexample: None,
        };
        let resume = options.checkpoint.as_ref().is_some_and(|c| c.resume);
        let opened = match &options.checkpoint {
            Some(c) if c.resume => match resume_position(model, &properties, options, &c.dir) {
                Ok((dir, position, log)) => Ok((Some(dir), position, log)),
                Err(NotResumed::Refused(message)) => Err(message),
                // Interrupted while loading: the checkpoint is untouched.
                Err(NotResumed::Stopped) => {
                    return ended_before(Verdict::Interrupted {
                        checkpoint: Some(c.dir.clone()),
                    })
                }
            },
            Some(c) => CheckpointDir::start(&c.dir, model, options, c.overwrite).and_then(|dir| {
                let log = TraceLog::create_at(&dir.trace_log_path())
                    .map_err(|p| format!("cannot create the trace log: {p}"))?;
                let (position, log) = fresh_position(model, &properties, options, log)?;
                Ok((Some(dir), position, log))
            }),
            None => options
                .new_trace_log()
                .map_err(|p| {
                    format!(
                        "cannot create the trace log in {}: {p}",
                        options.spill_dir().display()
                    )
                })
                .and_then(|log| fresh_position(model, &properties, options, log))
                .map(|(position, log)| (None, position, log)),
        };
        let (checkpoints, mut position, log) = match opened {
            Ok(opened) => opened,
            Err(message) => return ended_before(Verdict::Error { message }),
        };

        let progress = Progress::start(options.progress);
        let plan = reduction::Plan::of(model, options);
        let search = Search {
            model,
            properties: &properties,
            reduction: plan.reduction(),
            options,
            log: &log,
            workers,
            progress: &progress,
            checkpoints: checkpoints.as_ref(),
            started,
        };
        // A first checkpoint right away: a run killed at any moment after its
        // initial states are stored can be resumed.
        let first_checkpoint = match checkpoints.as_ref().filter(|_| !resume) {
            Some(dir) => search.save_checkpoint(dir, &mut position),
            None => Ok(()),
        };
        let ended = first_checkpoint.and_then(|()| search.explore(&mut position));
        drop(progress);

        let mut stats = Stats {
            workers,
            distinct_states: position.table.len(),
            states_generated: position.states_generated,
            depth: position.depth,
            frontier_spilled_bytes: position.frontier_spilled_bytes + position.next.spilled_bytes(),
            table_bytes: position.table.memory_bytes() as u64,
            fingerprint_disk_bytes: position.table.disk_bytes(),
            coverage: options
                .coverage
                .then(|| Coverage::new(mem::take(&mut position.tally), model.action_kinds())),
            reduction: plan.stats(),
            ..Stats::default()
        };
        let wall = position.wall_before + started.elapsed();
        match ended {
            Ok(Ending::Interrupted { checkpoint }) => {
                stats.states_left_on_queue = position.level.len() + position.next.len();
                stats.wall = wall;
                Outcome {
                    verdict: Verdict::Interrupted { checkpoint },
                    stats,
                    counterexample: None,
                }
            }
            Ok(Ending::Finished) | Err(_) => {
                if position.violation.is_some() && !position.next.is_empty() {
                    stats.depth += 1;
                }
                stats.states_left_on_queue = position.level.len() + position.next.len();
                stats.complete = position.violation.is_none()
                    && stats.states_left_on_queue == 0
                    && ended.is_ok();
                if let (Some(frontier), Ok(_), None, false) = (
                    options.frontier_walks,
                    &ended,
                    &position.violation,
                    position.level.is_empty(),
                ) {
                    stats.wall = wall;
                    let level = std::mem::take(&mut position.level);
                    return walk_frontier(
                        model,
                        &properties,
                        options,
                        &log,
                        level,
                        frontier,
                        stats,
                    );
                }
                let result = ended.map(|_| position.violation.take());
                let outcome = crate::outcome::conclude(model, &properties, &log, stats, result);
                Outcome {
                    stats: Stats {
                        wall,
                        ..outcome.stats
                    },
                    ..outcome
                }
            }
        }
    }
}

/// Random walks from every state of `level`, the frontier of a search
/// stopped by its depth bound (`stats`); a failing walk is shown after the
/// shortest path to its start state.
fn walk_frontier<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    options: &SearchOptions,
    log: &TraceLog,
    level: Frontier,
    frontier: crate::FrontierWalks,
    mut stats: Stats,
) -> Outcome<M> {
    let started = Instant::now();
    let mut states = Vec::new();
    let mut trace_ids = Vec::new();
    let read = (|| -> Result<(), SearchError> {
        for index in 0..level.segment_count() {
            let Some(segment) = level.take(index)? else {
                continue;
            };
            for entry in segment.iter() {
                states.push(M::State::decode_exact(entry.state)?);
                trace_ids.push(entry.trace_id);
            }
        }
        Ok(())
    })();
    if let Err(problem) = read {
        return Outcome {
            verdict: Verdict::Error {
                message: format!("cannot read the frontier for its walks: {problem}"),
            },
            stats,
            counterexample: None,
        };
    }
    let campaign = crate::simulate::Campaign {
        model,
        properties,
        options,
        walks: (states.len() as u64).saturating_mul(frontier.rounds),
        walk_length: frontier.walk_length,
        seed: frontier.seed,
    };
    let progress = Progress::start(options.progress);
    let end = campaign.run(crate::simulate::Starts::Each(&states), &progress);
    drop(progress);
    stats.states_generated += end.generated;
    stats.depth += end.stats.deepest;
    stats.wall += started.elapsed();
    crate::simulate::walk_outcome(model, options, properties, end, stats, |start| {
        crate::counterexample::path_to(model, log, trace_ids[start])
    })
}

/// The position before level 1: the initial states, checked and stored.
fn fresh_position<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    options: &SearchOptions,
    log: TraceLog,
) -> Result<(Position, TraceLog), String> {
    let mut table = new_visited_set(options);
    let mut scratch = Scratch::new(&log);
    let mut segments = Vec::new();
    let mut segment = Segment::new();
    visit_initial_states(
        model,
        properties,
        &mut table,
        options,
        &mut scratch,
        &mut |id, bytes, _| {
            segment.push(id, bytes);
            if segment.is_full() {
                segments.push(mem::take(&mut segment));
            }
        },
    )
    .map_err(|e| e.to_string())?;
    segments.push(segment);
    scratch.flush().map_err(|e| e.to_string())?;
    let level = Frontier::from_segments(segments);
    let position = Position {
        depth: u64::from(!level.is_empty()),
        states_generated: scratch.generated,
        violation: scratch.violation.take(),
        next: LevelBuilder::new(options.frontier_memory_budget_bytes(), &options.spill_dir()),
        level,
        table,
        frontier_spilled_bytes: 0,
        wall_before: Duration::ZERO,
        tally: KindTally::default(),
    };
    drop(scratch);
    Ok((position, log))
}

/// The position saved in the checkpoint directory `dir`, with the
/// directory taken for this run.
fn resume_position<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    options: &SearchOptions,
    dir: &std::path::Path,
) -> Result<(CheckpointDir, Position, TraceLog), NotResumed> {
    let (dir, restored, log) = CheckpointDir::resume(dir, model, options)?;
    let counters = restored.counters;
    properties.mark_reached(&counters.witnesses_reached);
    let position = Position {
        table: restored.table,
        level: restored.level,
        next: restored.next,
        depth: counters.depth,
        states_generated: counters.states_generated,
        frontier_spilled_bytes: counters.frontier_spilled_bytes,
        violation: None,
        wall_before: Duration::from_secs_f64(counters.wall_seconds),
        tally: KindTally::default(),
    };
    Ok((dir, position, log))
}

/// The read-only context of one breadth-first search.
struct Search<'a, M: Model> {
    model: &'a M,
    properties: &'a PropertySet<M>,
    reduction: Option<&'a reduction::Reduction>,
    options: &'a SearchOptions,
    log: &'a TraceLog,
    workers: usize,
    progress: &'a Progress,
    checkpoints: Option<&'a CheckpointDir>,
    started: Instant,
}

impl<M: Model> Search<'_, M> {
    /// Expands levels until the search ends, is bounded, or is interrupted.
    fn explore(&self, at: &mut Position) -> Result<Ending, SearchError> {
        let interval = self.options.checkpoint.as_ref().map(|c| c.interval);
        let mut checkpoint_deadline = interval.map(|every| Instant::now() + every);
        let mut honour_interrupt = true;
        if at.violation.is_some() {
            return Ok(Ending::Finished);
        }
        loop {
            if at.level.is_empty() {
                if at.violation.is_some() {
                    return Ok(Ending::Finished);
                }
                let budget = self.options.frontier_memory_budget_bytes();
                let next = mem::replace(
                    &mut at.next,
                    LevelBuilder::new(budget, &self.options.spill_dir()),
                );
                at.frontier_spilled_bytes += next.spilled_bytes();
                let next = next.finish();
                if next.is_empty() {
                    return Ok(Ending::Finished);
                }
                at.level = next;
                at.depth += 1;
                if let Some(reduction) = self.reduction {
                    reduction.begin_level();
                }
            }
            if self.options.max_depth.is_some_and(|max| at.depth >= max)
                || (at.violation.is_none() && self.reached_max_states(&at.table))
            {
                return Ok(Ending::Finished);
            }
            self.show_progress(at);
            let interrupt = self
                .options
                .interrupt
                .as_deref()
                .filter(|_| honour_interrupt);
            let (unfinished, wanted) = self.pass(at, checkpoint_deadline, interrupt)?;
            at.level = mem::take(&mut at.level).remaining_with(unfinished);
            make_room(&mut at.table, self.options, wanted)?;
            let interrupted = interrupt.is_some_and(|flag| flag.load(Ordering::Relaxed));
            let due = checkpoint_deadline.is_some_and(|deadline| Instant::now() >= deadline);
            if at.violation.is_some() {
                // The level is finished regardless; the run ends with it.
                checkpoint_deadline = None;
                honour_interrupt = false;
                continue;
            }
            if due || interrupted {
                let saved = match self.checkpoints {
                    Some(dir) => {
                        self.save_checkpoint(dir, at)?;
                        Some(dir.path().to_path_buf())
                    }
                    None => None,
                };
                checkpoint_deadline = interval.map(|every| Instant::now() + every);
                if interrupted {
                    return Ok(Ending::Interrupted { checkpoint: saved });
                }
            }
        }
    }

    /// Whether the distinct-state budget, if any, is spent.
    fn reached_max_states(&self, table: &VisitedSet) -> bool {
        self.options
            .max_states
            .is_some_and(|max| table.len() >= max)
    }

    fn show_progress(&self, at: &Position) {
        let counters = &self.progress.counters;
        counters.depth.store(at.depth, Ordering::Relaxed);
        counters
            .queued
            .store(at.level.len() + at.next.len(), Ordering::Relaxed);
        counters.distinct.store(at.table.len(), Ordering::Relaxed);
        counters
            .generated
            .store(at.states_generated, Ordering::Relaxed);
    }

    fn save_checkpoint(&self, dir: &CheckpointDir, at: &mut Position) -> Result<(), SearchError> {
        let counters = Counters {
            depth: at.depth,
            states_generated: at.states_generated,
            distinct_states: at.table.len(),
            frontier_spilled_bytes: at.frontier_spilled_bytes,
            wall_seconds: (at.wall_before + self.started.elapsed()).as_secs_f64(),
            trace_next_block: self.log.next_block(),
            table_capacity: at.table.memory_capacity(),
            witnesses_reached: self.properties.reached_witnesses(),
        };
        let level = mem::take(&mut at.level);
        at.level = dir
            .save(&counters, &mut at.table, level, &at.next, self.log)
            .map_err(SearchError::Checkpoint)?;
        Ok(())
    }

    /// One pass of the workers over the current level, until it is expanded
    /// or they pause; returns the states they did not expand and the room
    /// the table must make for them ([`InsertRoom::wanted`]).
    fn pass(
        &self,
        at: &mut Position,
        checkpoint_deadline: Option<Instant>,
        interrupt: Option<&AtomicBool>,
    ) -> Result<(Vec<Segment>, Wanted), SearchError> {
        let pause = AtomicBool::new(false);
        let room = InsertRoom::new(at.table.insert_room());
        let cursor = AtomicUsize::new(0);
        let batch = CandidateBatch::begin(&at.table, self.options);
        let mut expander = Expander::new(self.model, self.properties, &at.table, self.options);
        expander.defer_links = batch.is_some();
        expander.reduction = self.reduction;
        let share = Share {
            expander: &expander,
            log: self.log,
            pending: &at.level,
            next: batch.as_ref().map_or(&at.next, CandidateBatch::staging),
            batch: batch.as_ref(),
            cursor: &cursor,
            pause: &pause,
            depth: at.depth,
            progress: self.progress,
            grow_at: at.table.pause_threshold(),
            // A level in which a violation was found is finished regardless.
            max_states: self.options.max_states.filter(|_| at.violation.is_none()),
            room: &room,
            checkpoint_deadline,
            interrupt,
        };
        let yields: Vec<WorkerYield> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.workers)
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
            at.states_generated += worker.generated;
            at.tally.merge(worker.tally);
            if let Some(found) = worker.violation {
                ViolationSite::keep_least(&mut at.violation, found);
            }
            unfinished.extend(worker.unfinished);
        }
        if let Some(batch) = batch {
            batch.settle(&at.table, &at.next, self.log, self.workers)?;
        }
        Ok((unfinished, room.wanted()))
    }
}

/// What the workers of one pass over a level share.
struct Share<'a, M: Model> {
    expander: &'a Expander<'a, M>,
    log: &'a TraceLog,
    pending: &'a Frontier,
    /// The next level, or with batched disk lookups the pass's candidates.
    next: &'a LevelBuilder,
    batch: Option<&'a CandidateBatch>,
    cursor: &'a AtomicUsize,
    pause: &'a AtomicBool,
    depth: u64,
    progress: &'a Progress,
    grow_at: u64,
    /// The distinct-state budget at which workers pause.
    max_states: Option<u64>,
    /// Room for inserts until the pass ends.
    room: &'a InsertRoom,
    checkpoint_deadline: Option<Instant>,
    interrupt: Option<&'a AtomicBool>,
}

impl<M: Model> Share<'_, M> {
    /// Distinct states for the progress line: the set's count, less, in a
    /// batched pass over a set on disk, the candidates staged so far (this
    /// pass's and this worker's `out`), which the set counts as stored until
    /// they are settled (some will be found on disk). Other workers'
    /// unpushed segments may still be counted, so the figure can run ahead
    /// by a few segments; the count at a pass's end is exact.
    fn settled_len(&self, table: &VisitedSet, out: &Segment) -> u64 {
        match self.batch {
            Some(batch) => table
                .len()
                .saturating_sub(batch.staging().len() + out.len() as u64),
            None => table.len(),
        }
    }

    /// Whether the workers should stop at the next state boundary.
    fn should_pause(&self) -> bool {
        self.expander.table.memory_len() >= self.grow_at
            || self.batch.is_some_and(CandidateBatch::is_full)
            || self
                .max_states
                .is_some_and(|max| self.expander.table.len() >= max)
            || self
                .checkpoint_deadline
                .is_some_and(|deadline| Instant::now() >= deadline)
            || self
                .interrupt
                .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// One worker's loop: take segments until none is left or a pause is
    /// called; states not expanded when pausing are returned as unfinished.
    fn expand(&self) -> WorkerYield {
        let mut scratch = Scratch::new(self.log);
        let mut worker = WorkerYield {
            unfinished: Vec::new(),
            generated: 0,
            violation: None,
            error: None,
            tally: KindTally::default(),
        };
        let mut out = Segment::new();
        // Segments expanded, emptied for the next level's states.
        let mut spare: Vec<Segment> = Vec::new();
        let mut room = self.room.worker();
        let table = self.expander.table;
        let result = (|| -> Result<(), SearchError> {
            while !self.pause.load(Ordering::Relaxed) {
                let index = self.cursor.fetch_add(1, Ordering::Relaxed);
                if index >= self.pending.segment_count() {
                    break;
                }
                let Some(mut segment) = self.pending.take(index)? else {
                    continue;
                };
                let mut entries = segment.iter();
                let mut expanded = 0usize;
                let mut full = Vec::new();
                // Each state is prepared (its successors computed, their
                // table slots prefetched) one state ahead of being settled.
                let mut ahead = entries.next();
                if let Some(first) = ahead {
                    self.expander.prepare_ahead(&mut scratch, first.state)?;
                }
                while let Some(entry) = ahead {
                    scratch.advance();
                    ahead = entries.next();
                    if let Some(next) = ahead {
                        self.expander.prepare_ahead(&mut scratch, next.state)?;
                    }
                    let mut inserted = 0;
                    let done = self.expander.settle(
                        &mut scratch,
                        entry.state,
                        entry.trace_id,
                        self.depth,
                        &mut |count| room.claim(count as u64),
                        &mut |link, bytes, _| {
                            inserted += 1;
                            link.push_to(&mut out, bytes);
                            if out.is_full() {
                                let empty = spare.pop().unwrap_or_default();
                                full.push(mem::replace(&mut out, empty));
                            }
                        },
                    )?;
                    for segment in full.drain(..) {
                        self.next.push(segment)?;
                    }
                    let mut rest = Segment::new();
                    if done {
                        room.settle(inserted);
                        expanded += 1;
                        if expanded.is_multiple_of(PAUSE_CHECK_EVERY) && self.should_pause() {
                            self.pause.store(true, Ordering::Relaxed);
                        }
                    } else {
                        // No room for its successors: it waits for the next pass.
                        rest.push(entry.trace_id, entry.state);
                        self.pause.store(true, Ordering::Relaxed);
                    }
                    if self.pause.load(Ordering::Relaxed) {
                        // The state prepared ahead is not settled: it waits too.
                        ahead
                            .into_iter()
                            .chain(entries.by_ref())
                            .for_each(|entry| rest.push(entry.trace_id, entry.state));
                        worker.unfinished.push(rest);
                        break;
                    }
                }
                if spare.len() < SPARE_SEGMENTS {
                    segment.clear();
                    spare.push(segment);
                }
                let counters = &self.progress.counters;
                counters
                    .generated
                    .fetch_add(scratch.generated, Ordering::Relaxed);
                worker.generated += mem::take(&mut scratch.generated);
                counters
                    .distinct
                    .store(self.settled_len(table, &out), Ordering::Relaxed);
            }
            self.next.push(mem::take(&mut out))?;
            scratch.flush()
        })();
        worker.violation = scratch.violation.take();
        worker.tally = std::mem::take(&mut scratch.tally);
        worker.error = result.err();
        worker
    }
}
