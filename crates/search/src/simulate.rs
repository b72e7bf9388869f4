//! Random simulation: many random walks, each reproducible from the seed and
//! its walk number.
//!
//! Walk `i` draws its choices from a PCG generator seeded with `(seed, i)`, so
//! the walks do not depend on the number of workers. When walks fail, the one
//! with the smallest number is reported, so the verdict and counterexample do
//! not depend on timing.
//!
//! A step draws one candidate action and computes its successor only; a
//! candidate that is not enabled is set aside and another drawn, so the
//! choice is uniform among enabled actions (or follows the walk's fault mix
//! with `--swarm`, see [`crate::swarm`]) at the cost of one successor a step
//! rather than all of them. With `--coverage` every successor is computed, to
//! count which actions were enabled.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use cmc_model::{ActionKind, Encode, Fingerprint, Model};
use cmc_store::{FingerprintTable, Insertion};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::coverage::KindTally;
use crate::kind_mix::{shape, KindMix};
use crate::progress::Progress;
use crate::properties::{Failure, PropertySet};
use crate::strategy::{walks_text, Describe, Explore, RandomWalks};
use crate::swarm::FaultMix;
use crate::{
    Counterexample, Coverage, Outcome, SearchOptions, Stats, TraceStep, Verdict, WalkStats,
};

/// New states a worker counts between two looks at the table's load.
const DISTINCT_CHECK_EVERY: u64 = 256;

thread_local! {
    /// The number of the walk this thread is taking, if any.
    static CURRENT_WALK: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The number of the random walk this thread is taking, if it is taking
/// one: a model whose step fails can say which walk to run again
/// ([`SearchOptions::only_walk`]) to reach that step.
pub fn current_walk() -> Option<u64> {
    CURRENT_WALK.with(std::cell::Cell::get)
}

/// The generator of walk number `walk` under `seed`.
fn walk_rng(seed: u64, walk: u64) -> Pcg64 {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    seed_bytes[8..16].copy_from_slice(&walk.to_le_bytes());
    seed_bytes[16..24].copy_from_slice(b"cmc-walk");
    Pcg64::from_seed(seed_bytes)
}

/// Where the walks of a campaign start.
#[derive(Clone, Copy)]
pub(crate) enum Starts<'a, S> {
    /// A state drawn at random by each walk (the initial states).
    Any(&'a [S]),
    /// Walk `i` starts from state `i % len` (a BFS frontier, a trace's end).
    Each(&'a [S]),
}

/// A failed walk: its number, the index of the state it started from, the
/// property it broke, and its steps from that state.
pub(crate) struct FailedWalk<M: Model> {
    pub walk: u64,
    pub start: usize,
    pub failure: Failure,
    pub steps: Vec<TraceStep<M>>,
}

/// What a campaign found.
pub(crate) struct CampaignEnd<M: Model> {
    pub stats: WalkStats,
    /// States computed (starts included).
    pub generated: u64,
    /// Counts per action kind.
    pub tally: KindTally,
    pub failed: Option<FailedWalk<M>>,
    /// The campaign stopped early at [`SearchOptions::interrupt`]: walks
    /// begun were finished, none was begun after it.
    pub interrupted: bool,
}

/// A campaign of random walks.
pub(crate) struct Campaign<'a, M: Model> {
    pub model: &'a M,
    pub properties: &'a PropertySet<M>,
    pub options: &'a SearchOptions,
    pub walks: u64,
    pub walk_length: u64,
    pub seed: u64,
}

/// What one worker saw.
struct WorkerYield<M: Model> {
    stats: WalkStats,
    generated: u64,
    tally: KindTally,
    failed: Option<FailedWalk<M>>,
}

/// How one walk ended.
struct WalkEnd {
    failure: Option<Failure>,
    /// Only faults the walk's mix leaves out were enabled.
    stopped_by_mix: bool,
}

/// A candidate action of the current state.
struct Candidate<M: Model> {
    action: M::Action,
    /// Its kind, when the walk needs it (swarm, coverage).
    kind: Option<ActionKind>,
    /// Its successor, when computed up front (coverage).
    next: Option<M::State>,
}

/// The buffers of one worker, reused from walk to walk.
struct Walker<'a, M: Model> {
    campaign: &'a Campaign<'a, M>,
    table: &'a FingerprintTable,
    table_full: &'a AtomicBool,
    actions: Vec<M::Action>,
    candidates: Vec<Candidate<M>>,
    kinds: Vec<(std::borrow::Cow<'static, str>, bool)>,
    bytes: Vec<u8>,
    generated: u64,
    /// New distinct states this worker counted.
    new_states: u64,
    tally: KindTally,
    /// The fault kinds the model declares, whose densities a swarm walk
    /// draws first.
    fault_kinds: &'a [std::borrow::Cow<'static, str>],
}

impl<M: Model> Campaign<'_, M> {
    /// Runs the walks from `starts` (which must not be empty).
    pub fn run(&self, starts: Starts<'_, M::State>, progress: &Progress) -> CampaignEnd<M> {
        let started = Instant::now();
        let options = self.options;
        let table = FingerprintTable::with_capacity(options.initial_table_capacity());
        let table_full = AtomicBool::new(false);
        let workers = options.workers.max(1);
        // Walks `first..end`: all of them, or the one asked for.
        let (first_walk, end_walk) = match options.only_walk {
            Some(walk) => (walk, walk.saturating_add(1).min(self.walks)),
            None => (0, self.walks),
        };
        let next_walk = AtomicU64::new(first_walk);
        let first_failure = AtomicU64::new(u64::MAX);
        let interrupted = || crate::options::stop_asked(options);
        let fault_kinds: Vec<_> = self
            .model
            .action_kinds()
            .into_iter()
            .filter(|kind| kind.fault)
            .map(|kind| kind.name)
            .collect();

        let yields: Vec<WorkerYield<M>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut walker = Walker {
                            campaign: self,
                            table: &table,
                            table_full: &table_full,
                            actions: Vec::new(),
                            candidates: Vec::new(),
                            kinds: Vec::new(),
                            bytes: Vec::new(),
                            generated: 0,
                            new_states: 0,
                            tally: KindTally::default(),
                            fault_kinds: &fault_kinds,
                        };
                        let mut stats = WalkStats::default();
                        let mut failed: Option<FailedWalk<M>> = None;
                        loop {
                            if interrupted() {
                                break;
                            }
                            let walk = next_walk.fetch_add(1, Ordering::Relaxed);
                            if walk >= end_walk || walk > first_failure.load(Ordering::Relaxed) {
                                break;
                            }
                            CURRENT_WALK.set(Some(walk));
                            let mut rng = walk_rng(self.seed, walk);
                            let start = match starts {
                                Starts::Any(states) => rng.gen_range(0..states.len()),
                                Starts::Each(states) => (walk % states.len() as u64) as usize,
                            };
                            let state = match starts {
                                Starts::Any(states) | Starts::Each(states) => states[start].clone(),
                            };
                            let before = walker.generated;
                            let (steps, end) = walker.walk(state, &mut rng);
                            stats.walks += 1;
                            let length = steps.len() as u64 - 1;
                            stats.steps += length;
                            stats.deepest = stats.deepest.max(length);
                            stats.stopped_by_fault_mix += u64::from(end.stopped_by_mix);
                            progress
                                .counters
                                .generated
                                .fetch_add(walker.generated - before, Ordering::Relaxed);
                            progress
                                .counters
                                .distinct
                                .store(table.len(), Ordering::Relaxed);
                            if let Some(failure) = end.failure {
                                first_failure.fetch_min(walk, Ordering::Relaxed);
                                if failed.as_ref().is_none_or(|f| walk < f.walk) {
                                    failed = Some(FailedWalk {
                                        walk,
                                        start,
                                        failure,
                                        steps,
                                    });
                                }
                            }
                        }
                        CURRENT_WALK.set(None);
                        WorkerYield {
                            stats,
                            generated: walker.generated,
                            tally: walker.tally,
                            failed,
                        }
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
        let mut end = CampaignEnd {
            stats: WalkStats {
                swarm: options.swarm,
                ..WalkStats::default()
            },
            generated: 0,
            tally: KindTally::default(),
            failed: None,
            interrupted: false,
        };
        for worker in yields {
            let stats = &mut end.stats;
            stats.walks += worker.stats.walks;
            stats.steps += worker.stats.steps;
            stats.deepest = stats.deepest.max(worker.stats.deepest);
            stats.stopped_by_fault_mix += worker.stats.stopped_by_fault_mix;
            end.generated += worker.generated;
            end.tally.merge(worker.tally);
            if let Some(walk) = worker.failed {
                if end.failed.as_ref().is_none_or(|f| walk.walk < f.walk) {
                    end.failed = Some(walk);
                }
            }
        }
        // Every walk numbered below `next_walk` was run to its end.
        end.interrupted = interrupted() && next_walk.load(Ordering::Relaxed) < end_walk;
        end.stats.distinct_states = table.len();
        end.stats.distinct_capped = table_full.load(Ordering::Relaxed);
        end.stats.failing_walk = end.failed.as_ref().map(|f| f.walk);
        end.stats.wall_seconds = started.elapsed().as_secs_f64();
        end
    }
}

impl<M: Model> Walker<'_, M> {
    /// Counts `state` among the distinct states seen. Distinct counts in
    /// simulation are statistics only: once the table is full, counting
    /// stops (and the report says the count is a lower bound), not walking.
    ///
    /// The table stops taking fingerprints at three quarters full: past
    /// that, linear probing slows every insert down (a full table scans it
    /// whole).
    fn note_distinct(&mut self, state: &M::State) {
        if self.table_full.load(Ordering::Relaxed) {
            return;
        }
        self.bytes.clear();
        state.encode(&mut self.bytes);
        match self.table.insert(Fingerprint::of_bytes(&self.bytes)) {
            Some(Insertion::Present) => {}
            Some(Insertion::New) => {
                self.new_states += 1;
                if self.new_states.is_multiple_of(DISTINCT_CHECK_EVERY)
                    && self.table.len() >= self.table.capacity() as u64 / 4 * 3
                {
                    self.table_full.store(true, Ordering::Relaxed);
                }
            }
            None => self.table_full.store(true, Ordering::Relaxed),
        }
    }

    /// One walk from `state`: its steps (the first is `state`) and how it ended.
    fn walk(&mut self, state: M::State, rng: &mut Pcg64) -> (Vec<TraceStep<M>>, WalkEnd) {
        let campaign = self.campaign;
        let (model, properties) = (campaign.model, campaign.properties);
        let options = campaign.options;
        let keep_kinds = options.swarm || options.swarm_kinds || options.coverage;
        let mut mix = options
            .swarm
            .then(|| FaultMix::draw(self.fault_kinds.iter().cloned(), rng));
        let mut weights = options.swarm_kinds.then(KindMix::default);
        self.generated += 1;
        self.note_distinct(&state);
        let mut end = WalkEnd {
            failure: properties.check_state(model, &state),
            stopped_by_mix: false,
        };
        let mut steps = vec![TraceStep {
            action: None,
            state,
        }];
        if end.failure.is_some() {
            return (steps, end);
        }
        for _ in 0..campaign.walk_length {
            let current = &steps.last().expect("a walk has a state").state;
            self.actions.clear();
            model.actions(current, &mut self.actions);
            self.candidates.clear();
            for action in self.actions.drain(..) {
                let kind = keep_kinds.then(|| model.action_kind(&action));
                let next = if options.coverage {
                    self.generated += 1;
                    let Some(next) = model.next_state(current, &action) else {
                        continue;
                    };
                    if let Some(kind) = &kind {
                        self.tally.enabled(kind.clone());
                    }
                    Some(next)
                } else {
                    None
                };
                self.candidates.push(Candidate { action, kind, next });
            }
            let taken = loop {
                if self.candidates.is_empty() {
                    break None;
                }
                let at = if mix.is_none() && weights.is_none() {
                    rng.gen_range(0..self.candidates.len())
                } else {
                    self.kinds.clear();
                    self.kinds.extend(self.candidates.iter().map(|c| {
                        let kind = c.kind.as_ref().expect("a mix keeps kinds");
                        let name = match weights {
                            // Kind-weighted walks weigh each action's shape.
                            Some(_) => shape(&model.format_action(&c.action)).into(),
                            None => kind.name.clone(),
                        };
                        (name, kind.fault)
                    }));
                    let kinds: Vec<(&str, bool)> =
                        self.kinds.iter().map(|(n, f)| (n.as_ref(), *f)).collect();
                    let chosen = match (&mut weights, &mut mix) {
                        (Some(weights), _) => weights.choose(&kinds, rng),
                        (None, Some(mix)) => mix.choose(&kinds, rng),
                        (None, None) => unreachable!("one mix is drawn"),
                    };
                    match chosen {
                        Some(at) => at,
                        None => {
                            end.stopped_by_mix = true;
                            return (steps, end);
                        }
                    }
                };
                let candidate = self.candidates.swap_remove(at);
                // Computed up front with coverage (and then enabled), else now.
                let next = match candidate.next {
                    Some(next) => Some(next),
                    None => {
                        self.generated += 1;
                        model.next_state(current, &candidate.action)
                    }
                };
                if let Some(next) = next {
                    break Some((candidate.action, candidate.kind, next));
                }
            };
            let Some((action, kind, next)) = taken else {
                let deadlocked = options.check_deadlock && !model.is_terminal(current);
                end.failure = deadlocked.then(|| properties.deadlock());
                return (steps, end);
            };
            self.tally
                .taken(kind.unwrap_or_else(|| model.action_kind(&action)));
            end.failure = properties
                .check_step(model, current, &action, &next)
                .or_else(|| properties.check_state(model, &next));
            self.note_distinct(&next);
            steps.push(TraceStep {
                action: Some(action),
                state: next,
            });
            if end.failure.is_some() {
                return (steps, end);
            }
        }
        (steps, end)
    }
}

/// The outcome of a campaign whose failing walk (if any) is shown after
/// `prefix` (the path to its start state, the start state last).
pub(crate) fn walk_outcome<M: Model>(
    model: &M,
    options: &SearchOptions,
    properties: &PropertySet<M>,
    end: CampaignEnd<M>,
    mut stats: Stats,
    prefix: impl FnOnce(usize) -> Result<Counterexample<M>, String>,
) -> Outcome<M> {
    // Without coverage only steps taken were counted.
    // After a BFS (frontier walks), coverage is the exhaustive search's.
    let kinds = if options.coverage {
        let coverage = Coverage::new(end.tally, model.action_kinds());
        let kinds = coverage.kinds.clone();
        stats.coverage.get_or_insert(coverage);
        kinds
    } else {
        end.tally.into_sorted()
    };
    stats.walks = Some(WalkStats { kinds, ..end.stats });
    let property_error = |message: String, stats: Stats| Outcome {
        verdict: Verdict::Error { message },
        stats,
        counterexample: None,
    };
    let Some(walk) = end.failed else {
        if end.interrupted {
            return Outcome {
                verdict: Verdict::Interrupted { checkpoint: None },
                stats,
                counterexample: None,
            };
        }
        return match properties.changed_mind() {
            Some(message) => property_error(message, stats),
            None => Outcome::without_violation(properties.unreached_witnesses(), stats),
        };
    };
    match prefix(walk.start) {
        Ok(mut counterexample) => {
            counterexample.steps.extend(walk.steps.into_iter().skip(1));
            stats.depth = stats.depth.max(counterexample.len() as u64);
            if let Err(message) = properties.confirm(model, &walk.failure, Some(&counterexample)) {
                return property_error(message, stats);
            }
            Outcome {
                verdict: Verdict::Violated {
                    property: walk.failure.name,
                    kind: walk.failure.kind,
                },
                stats,
                counterexample: Some(counterexample),
            }
        }
        Err(message) => Outcome {
            verdict: Verdict::Error {
                message: format!(
                    "walk {} violated {}, but the path to its start could not be rebuilt: {message}",
                    walk.walk, walk.failure.name
                ),
            },
            stats,
            counterexample: None,
        },
    }
}

impl Describe for RandomWalks {
    fn name(&self) -> &'static str {
        "simulate"
    }

    fn verdict_settings(&self, out: &mut Vec<String>) {
        out.push(format!("walks={}", self.walks));
        out.push(format!("walk-length={}", self.walk_length));
        out.push(format!("seed={}", self.seed));
    }

    fn bound(&self, _: &SearchOptions) -> Option<String> {
        Some(walks_text(self.walks, self.walk_length))
    }
}

impl Explore for RandomWalks {
    /// Runs the walks from the initial states, or from the end of
    /// `options.walks_from`.
    fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M> {
        let started = Instant::now();
        let properties =
            PropertySet::new(model.properties()).evaluating_twice(options.check_determinism);
        let workers = options.workers.max(1);
        let error = |message: String| Outcome {
            verdict: Verdict::Error { message },
            stats: Stats {
                workers,
                ..Stats::default()
            },
            counterexample: None,
        };
        let (starts, prefix): (Vec<M::State>, Option<Counterexample<M>>) = match &options.walks_from
        {
            Some(from) => match crate::replay(model, &from.file) {
                Err(problem) => return error(format!("{}: {problem}", from.label)),
                Ok(replayed) if !replayed.verdict.is_pass() => {
                    // The trace itself already fails: that is the verdict.
                    return replayed;
                }
                Ok(replayed) => {
                    let trace = replayed.counterexample.expect("a replay keeps its trace");
                    let last = trace.last_state().expect("a trace has a state").clone();
                    (vec![last], Some(trace))
                }
            },
            None => {
                let mut initial = Vec::new();
                model.init_states(&mut initial);
                (initial, None)
            }
        };
        if starts.is_empty() {
            return Outcome::without_violation(
                Vec::new(),
                Stats {
                    workers,
                    complete: true,
                    wall: started.elapsed(),
                    ..Stats::default()
                },
            );
        }
        let progress = Progress::start(options.progress);
        let campaign = Campaign {
            model,
            properties: &properties,
            options,
            walks: self.walks,
            walk_length: self.walk_length,
            seed: self.seed,
        };
        let from = match prefix {
            Some(_) => Starts::Each(&starts),
            None => Starts::Any(&starts),
        };
        let end = campaign.run(from, &progress);
        drop(progress);
        let stats = Stats {
            workers,
            distinct_states: end.stats.distinct_states,
            states_generated: end.generated,
            depth: end.stats.deepest + 1 + prefix.as_ref().map_or(0, |p| p.len() as u64 - 1),
            wall: started.elapsed(),
            ..Stats::default()
        };
        walk_outcome(model, options, &properties, end, stats, |start| {
            Ok(match prefix {
                Some(prefix) => prefix,
                None => Counterexample {
                    init_index: start,
                    steps: vec![TraceStep {
                        action: None,
                        state: starts[start].clone(),
                    }],
                },
            })
        })
    }
}
