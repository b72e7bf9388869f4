//! Breadth-first search over a model's coarse view: a directed search for
//! deep bugs, not a proof.
//!
//! A state is expanded only if no state with the same coarse view
//! ([`Model::coarse_view`]; the World's leaves out the messages in flight)
//! was stored before it, so the search visits each view once, by a
//! shortest path, and goes deeper than breadth-first search over whole
//! states in the same time (`bench/README.md`, "Deep search": depth 18
//! against 13 in a minute on the Raft core). Every state it meets is
//! checked (step properties, invariants, deadlock), and a counterexample is
//! a real path, rebuilt from parent links as for breadth-first search; it
//! is the shortest among the paths kept, not necessarily the shortest
//! path. A state set aside
//! because its view was seen may lead to a bug no state kept leads to, so
//! a run without a violation is never complete: the report says the
//! search was bounded by its view.
//!
//! One worker; states are expanded in breadth-first order and the first
//! violation found ends the search, so a run is the same every time.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

use cmc_model::{Encode, Fingerprint, Model};
use cmc_store::{Insertion, TraceId, TraceRecord, TraceWriter, VisitedSet, Wanted};

use crate::expand::{SearchError, ViolationSite};
use crate::progress::Progress;
use crate::properties::{Failure, PropertySet};
use crate::strategy::{depth_bound, Describe, Explore};
use crate::visit::{make_room, new_visited_set};
use crate::{Outcome, SearchOptions, Stats, Verdict};

/// States expanded between two looks at the interrupt flag.
const INTERRUPT_CHECK_EVERY: u64 = 64;

/// Breadth-first search over coarse views: the [`crate::Strategy::ViewBfs`]
/// strategy.
pub(crate) struct ViewBfs;

impl Describe for ViewBfs {
    fn name(&self) -> &'static str {
        "view-bfs"
    }

    fn bound(&self, options: &SearchOptions) -> Option<String> {
        let views = "one state expanded per coarse view";
        Some(match depth_bound(options) {
            Some(depth) => format!("{views}, {depth}"),
            None => views.into(),
        })
    }

    fn workers(&self, _: &SearchOptions) -> usize {
        1
    }
}

impl Explore for ViewBfs {
    fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M> {
        let started = Instant::now();
        let properties =
            PropertySet::new(model.properties()).evaluating_twice(options.check_determinism);
        let ended_before = |message: String| Outcome {
            verdict: Verdict::Error { message },
            stats: Stats {
                workers: 1,
                ..Stats::default()
            },
            counterexample: None,
        };
        if let Some(initial) = first_initial(model) {
            if !model.coarse_view(&initial, &mut Vec::new()) {
                return ended_before(
                    "view-bfs needs a coarse view of the model's states (Model::coarse_view), and this model declares none".into(),
                );
            }
        }
        let log = match options.new_trace_log() {
            Ok(log) => log,
            Err(problem) => {
                return ended_before(format!(
                    "cannot create the trace log in {}: {problem}",
                    options.spill_dir().display()
                ))
            }
        };
        let progress = Progress::start(options.progress);
        let mut search = Search {
            model,
            properties: &properties,
            options,
            views: new_visited_set(options),
            writer: log.writer(),
            queue: VecDeque::new(),
            view: Vec::new(),
            stats: Stats {
                workers: 1,
                ..Stats::default()
            },
            progress: &progress,
        };
        let ended = search.explore();
        let flushed = search.writer.flush().map_err(SearchError::from);
        let Search {
            mut stats,
            queue,
            views,
            ..
        } = search;
        drop(progress);
        stats.distinct_states = views.len();
        stats.table_bytes = views.memory_bytes() as u64;
        stats.states_left_on_queue += queue.len() as u64;
        let interrupted = matches!(ended, Ok(Ending::Interrupted));
        let result = flushed.and(ended).map(|ending| match ending {
            Ending::Violation(site) => Some(site),
            Ending::Exhausted | Ending::Interrupted => None,
        });
        if let Ok(Some(site)) = &result {
            stats.depth = stats.depth.max(site.length);
        }
        let outcome = match result {
            Ok(None) if interrupted => Outcome {
                verdict: Verdict::Interrupted { checkpoint: None },
                stats,
                counterexample: None,
            },
            result => crate::outcome::conclude(model, &properties, &log, stats, result),
        };
        Outcome {
            stats: Stats {
                wall: started.elapsed(),
                ..outcome.stats
            },
            ..outcome
        }
    }
}

/// The first initial state of `model`, if it has one.
fn first_initial<M: Model>(model: &M) -> Option<M::State> {
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    initial.into_iter().next()
}

/// How the exploration ended.
enum Ending {
    /// Every state kept was expanded (or the depth bound was reached).
    Exhausted,
    /// A property failed here.
    Violation(ViolationSite),
    /// The interrupt flag was raised.
    Interrupted,
}

/// One search in progress.
struct Search<'a, M: Model> {
    model: &'a M,
    properties: &'a PropertySet<M>,
    options: &'a SearchOptions,
    /// Fingerprints of the views of the states kept.
    views: VisitedSet,
    writer: TraceWriter<'a>,
    /// States kept and not yet expanded, with their parent links and depths.
    queue: VecDeque<(M::State, TraceId, u64)>,
    /// The view being computed.
    view: Vec<u8>,
    stats: Stats,
    progress: &'a Progress,
}

impl<M: Model> Search<'_, M> {
    fn explore(&mut self) -> Result<Ending, SearchError> {
        let mut initial = Vec::new();
        self.model.init_states(&mut initial);
        for (index, state) in initial.into_iter().enumerate() {
            let step = u32::try_from(index).expect("at most u32::MAX initial states");
            if let Some(site) = self.keep(state, None, step, 1)? {
                return Ok(Ending::Violation(site));
            }
        }
        let mut actions = Vec::new();
        let mut expanded: u64 = 0;
        while let Some((state, trace_id, depth)) = self.queue.pop_front() {
            expanded += 1;
            if expanded.is_multiple_of(INTERRUPT_CHECK_EVERY) {
                self.show_progress();
                if crate::options::stop_asked(self.options) {
                    self.queue.push_front((state, trace_id, depth));
                    return Ok(Ending::Interrupted);
                }
            }
            self.stats.depth = self.stats.depth.max(depth);
            if self.options.max_depth.is_some_and(|max| depth >= max) {
                self.stats.states_left_on_queue += 1;
                continue;
            }
            actions.clear();
            self.model.actions(&state, &mut actions);
            make_room(
                &mut self.views,
                self.options,
                Wanted::exactly(actions.len() as u64),
            )?;
            let mut enabled = false;
            for (index, action) in actions.iter().enumerate() {
                let Some(next) = self.model.next_state(&state, action) else {
                    continue;
                };
                enabled = true;
                self.stats.states_generated += 1;
                let step = u32::try_from(index).expect("at most u32::MAX actions per state");
                if let Some(failure) = self
                    .properties
                    .check_step(self.model, &state, action, &next)
                {
                    return Ok(Ending::Violation(self.site(
                        failure,
                        trace_id,
                        Some(step),
                        depth + 1,
                        &next,
                    )));
                }
                if let Some(site) = self.keep(next, Some(trace_id), step, depth + 1)? {
                    return Ok(Ending::Violation(site));
                }
            }
            if !enabled && self.options.check_deadlock && !self.model.is_terminal(&state) {
                let failure = self.properties.deadlock();
                return Ok(Ending::Violation(
                    self.site(failure, trace_id, None, depth, &state),
                ));
            }
        }
        Ok(Ending::Exhausted)
    }

    /// Keeps `state` (reached from `parent` by action `step`, at `depth`)
    /// if its view is new: checks its invariants, records its parent link
    /// and queues it. Returns the violation it shows, if any.
    fn keep(
        &mut self,
        state: M::State,
        parent: Option<TraceId>,
        step: u32,
        depth: u64,
    ) -> Result<Option<ViolationSite>, SearchError> {
        self.view.clear();
        self.model.coarse_view(&state, &mut self.view);
        match self.views.insert(Fingerprint::of_bytes(&self.view)) {
            None => {
                return Err(SearchError::TableFull {
                    capacity: self.views.memory_capacity(),
                })
            }
            Some(Insertion::Present) => return Ok(None),
            Some(Insertion::New) => {}
        }
        let fingerprint = Fingerprint::of_bytes(&state.to_bytes());
        let trace_id = self.writer.append(TraceRecord {
            fingerprint,
            parent,
            step,
        })?;
        if let Some(failure) = self.properties.check_state(self.model, &state) {
            return Ok(Some(self.site(failure, trace_id, None, depth, &state)));
        }
        self.queue.push_back((state, trace_id, depth));
        Ok(None)
    }

    /// Where `failure` was found: at the state stored as `trace_id`, or for
    /// a step property at the step `step` from it.
    fn site(
        &self,
        failure: Failure,
        trace_id: TraceId,
        step: Option<u32>,
        length: u64,
        state: &M::State,
    ) -> ViolationSite {
        ViolationSite {
            failure,
            trace_id,
            step_action: step,
            length,
            fingerprint: Fingerprint::of_bytes(&state.to_bytes()),
        }
    }

    fn show_progress(&self) {
        let counters = &self.progress.counters;
        counters.depth.store(self.stats.depth, Ordering::Relaxed);
        counters
            .queued
            .store(self.queue.len() as u64, Ordering::Relaxed);
        counters.distinct.store(self.views.len(), Ordering::Relaxed);
        counters
            .generated
            .store(self.stats.states_generated, Ordering::Relaxed);
    }
}
