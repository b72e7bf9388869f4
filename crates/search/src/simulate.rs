//! Random simulation: many random walks, each reproducible from the seed and
//! its walk number.
//!
//! Walk `i` draws its choices from a PCG generator seeded with `(seed, i)`, so
//! the walks do not depend on the number of workers. When walks fail, the one
//! with the smallest number is reported, so the verdict and counterexample do
//! not depend on timing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cmc_model::{Encode, Fingerprint, Model};
use cmc_store::FingerprintTable;
use rand::{Rng, SeedableRng};

use crate::progress::Progress;
use crate::properties::{Failure, PropertySet};
use crate::{Counterexample, Outcome, SearchOptions, Stats, TraceStep, Verdict};

/// A failed walk.
struct FailedWalk<M: Model> {
    walk: u64,
    failure: Failure,
    steps: Vec<TraceStep<M>>,
}

/// What one worker saw.
struct WorkerYield<M: Model> {
    generated: u64,
    deepest: u64,
    failed: Option<FailedWalk<M>>,
}

/// The generator of walk number `walk` under `seed`.
fn walk_rng(seed: u64, walk: u64) -> rand_pcg::Pcg64 {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    seed_bytes[8..16].copy_from_slice(&walk.to_le_bytes());
    seed_bytes[16..24].copy_from_slice(b"cmc-walk");
    rand_pcg::Pcg64::from_seed(seed_bytes)
}

/// Runs `walks` random walks of at most `walk_length` steps from `seed`.
pub(crate) fn run<M: Model>(
    model: &M,
    options: &SearchOptions,
    walks: u64,
    walk_length: u64,
    seed: u64,
) -> Outcome<M> {
    let started = Instant::now();
    let properties = PropertySet::new(model.properties());
    let table = FingerprintTable::with_capacity(options.initial_table_capacity());
    let table_full = std::sync::atomic::AtomicBool::new(false);
    let progress = Progress::start(options.progress);
    let workers = options.workers.max(1);
    let next_walk = AtomicU64::new(0);
    let first_failure = AtomicU64::new(u64::MAX);
    let mut initial = Vec::new();
    model.init_states(&mut initial);

    let yields: Vec<WorkerYield<M>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut worker = WorkerYield {
                        generated: 0,
                        deepest: 0,
                        failed: None,
                    };
                    loop {
                        let walk = next_walk.fetch_add(1, Ordering::Relaxed);
                        if walk >= walks || walk > first_failure.load(Ordering::Relaxed) {
                            break;
                        }
                        let mut rng = walk_rng(seed, walk);
                        let (generated, steps, failure) = run_walk(
                            model,
                            &properties,
                            &table,
                            &table_full,
                            &initial,
                            &mut rng,
                            walk_length,
                            options.check_deadlock,
                        );
                        worker.generated += generated;
                        worker.deepest = worker.deepest.max(steps.len() as u64);
                        progress
                            .counters
                            .generated
                            .fetch_add(generated, Ordering::Relaxed);
                        progress
                            .counters
                            .distinct
                            .store(table.len(), Ordering::Relaxed);
                        if let Some(failure) = failure {
                            first_failure.fetch_min(walk, Ordering::Relaxed);
                            if worker.failed.as_ref().is_none_or(|f| walk < f.walk) {
                                worker.failed = Some(FailedWalk {
                                    walk,
                                    failure,
                                    steps,
                                });
                            }
                        }
                    }
                    worker
                })
            })
            .collect();
        handles
            .into_iter()
            // A worker's panic goes on with its own message (the checker reports it).
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    drop(progress);

    let mut stats = Stats {
        workers,
        distinct_states: table.len(),
        table_bytes: table.memory_bytes() as u64,
        ..Stats::default()
    };
    let mut failed: Option<FailedWalk<M>> = None;
    for worker in yields {
        stats.states_generated += worker.generated;
        stats.depth = stats.depth.max(worker.deepest);
        if let Some(walk) = worker.failed {
            if failed.as_ref().is_none_or(|f| walk.walk < f.walk) {
                failed = Some(walk);
            }
        }
    }
    stats.wall = started.elapsed();
    let (verdict, counterexample) = match failed {
        Some(walk) => {
            let init_index = initial
                .iter()
                .position(|state| state.to_bytes() == walk.steps[0].state.to_bytes())
                .unwrap_or(0);
            (
                Verdict::Violated {
                    property: walk.failure.name,
                    kind: walk.failure.kind,
                },
                Some(Counterexample {
                    init_index,
                    steps: walk.steps,
                }),
            )
        }
        None if initial.is_empty() => (Verdict::Pass, None),
        None => {
            let unreached = properties.unreached_witnesses();
            if unreached.is_empty() {
                (Verdict::Pass, None)
            } else {
                (
                    Verdict::Vacuous {
                        properties: unreached,
                    },
                    None,
                )
            }
        }
    };
    Outcome {
        verdict,
        stats,
        counterexample,
    }
}

/// One walk: returns the states generated, the walk, and its failure if any.
#[allow(clippy::too_many_arguments)]
fn run_walk<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    table: &FingerprintTable,
    table_full: &std::sync::atomic::AtomicBool,
    initial: &[M::State],
    rng: &mut rand_pcg::Pcg64,
    walk_length: u64,
    check_deadlock: bool,
) -> (u64, Vec<TraceStep<M>>, Option<Failure>) {
    let mut generated = 0u64;
    let mut steps: Vec<TraceStep<M>> = Vec::new();
    if initial.is_empty() {
        return (0, steps, None);
    }
    let mut bytes = Vec::new();
    let mut note_distinct = |state: &M::State| {
        bytes.clear();
        state.encode(&mut bytes);
        // Distinct counts in simulation are statistics only: once the table
        // is full, stop counting rather than stop walking.
        if !table_full.load(Ordering::Relaxed)
            && table.insert(Fingerprint::of_bytes(&bytes)).is_none()
        {
            table_full.store(true, Ordering::Relaxed);
        }
    };
    let state = initial[rng.gen_range(0..initial.len())].clone();
    generated += 1;
    note_distinct(&state);
    let failure = properties.check_state(model, &state);
    steps.push(TraceStep {
        action: None,
        state,
    });
    if failure.is_some() {
        return (generated, steps, failure);
    }
    let mut actions = Vec::new();
    let mut successors: Vec<(M::Action, M::State)> = Vec::new();
    for _ in 0..walk_length {
        let current = &steps.last().expect("a walk has a state").state;
        actions.clear();
        model.actions(current, &mut actions);
        successors.clear();
        successors.extend(actions.drain(..).filter_map(|action| {
            let next = model.next_state(current, &action)?;
            Some((action, next))
        }));
        generated += successors.len() as u64;
        if successors.is_empty() {
            let deadlocked = check_deadlock && !model.is_terminal(current);
            return (generated, steps, deadlocked.then(|| properties.deadlock()));
        }
        let (action, next) = successors.swap_remove(rng.gen_range(0..successors.len()));
        let failure = properties
            .check_step(model, current, &action, &next)
            .or_else(|| properties.check_state(model, &next));
        note_distinct(&next);
        steps.push(TraceStep {
            action: Some(action),
            state: next,
        });
        if failure.is_some() {
            return (generated, steps, failure);
        }
    }
    (generated, steps, None)
}
