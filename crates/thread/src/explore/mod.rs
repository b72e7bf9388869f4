//! The exploration front end: [`Checker`] runs a model under a [`Mode`] within a budget and
//! returns [`Stats`] or a [`Failure`] whose schedule replays it.

mod bounded;
mod dpor;
mod random;
mod replay;
mod strategy;

use crate::report::Failure;
use crate::rt::{Driver, ExecState, Progress, Stop};
use crate::schedule::Schedule;
use bounded::Bounded;
use dpor::Dpor;
use random::Randomized;
use replay::Replay;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use strategy::Strategy;

/// How schedules are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// All schedules with 0 preemptions, then 1, ... up to `max_preemptions` (iterative
    /// deepening; each schedule runs once).
    Bounded {
        /// The preemption bound.
        max_preemptions: u32,
    },
    /// Every Mazurkiewicz trace (all behaviours up to reordering of independent steps), with
    /// dynamic partial-order reduction; see the dependency relation in the crate docs.
    Dpor,
    /// Uniformly random choices; execution `i` uses seed `seed + i`.
    Random {
        /// The base seed.
        seed: u64,
    },
    /// PCT with bug depth `depth`; execution `i` uses seed `seed + i`.
    Pct {
        /// The base seed.
        seed: u64,
        /// The bug depth (number of ordering constraints), at least 1.
        depth: u32,
    },
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Bounded { max_preemptions } => write!(
                f,
                "preemption-bounded, at most {max_preemptions} preemptions"
            ),
            Mode::Dpor => write!(f, "exhaustive with DPOR"),
            Mode::Random { seed } => write!(f, "random, seed {seed}"),
            Mode::Pct { seed, depth } => write!(f, "PCT depth {depth}, seed {seed}"),
        }
    }
}

/// What an exploration that found no failure did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Executions run.
    pub executions: u64,
    /// Whether the mode's whole space was explored (false: the budget stopped it; always
    /// false for the randomized modes).
    pub complete: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// Configures and runs explorations. Defaults: preemption bound 2, 100,000 executions,
/// 10,000 steps per execution, spin limit 3, 2 s stall timeout, 256 KiB stacks.
#[derive(Clone, Debug)]
#[must_use]
pub struct Checker {
    mode: Mode,
    max_executions: u64,
    max_steps: usize,
    spin_limit: u32,
    stall_timeout: Duration,
    stack_size: usize,
}

impl Default for Checker {
    fn default() -> Self {
        Checker {
            mode: Mode::Bounded { max_preemptions: 2 },
            max_executions: 100_000,
            max_steps: 10_000,
            spin_limit: 3,
            stall_timeout: Duration::from_secs(2),
            stack_size: 256 * 1024,
        }
    }
}

type Model = Arc<dyn Fn() + Send + Sync>;

impl Checker {
    /// A checker with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the exploration mode.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the execution budget (at least 1).
    pub fn max_executions(mut self, n: u64) -> Self {
        self.max_executions = n.max(1);
        self
    }

    /// Sets the step bound of one execution; exceeding it is reported as a failure.
    pub fn max_steps(mut self, n: usize) -> Self {
        self.max_steps = n.max(1);
        self
    }

    /// Re-reads of an unchanged location after which a thread counts as spinning and is
    /// switched away from until the location is written (at least 1).
    pub fn spin_limit(mut self, n: u32) -> Self {
        self.spin_limit = n.max(1);
        self
    }

    /// How long a virtual thread may run without reaching a switch point before the check
    /// reports it as blocked or spinning outside the checker.
    pub fn stall_timeout(mut self, d: Duration) -> Self {
        self.stall_timeout = d;
        self
    }

    /// Stack size of each virtual thread.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// Explores `model` (run as thread 0 of every execution). Returns the first failure:
    /// a panic in any thread, deadlock, livelock, step bound, or non-determinism.
    pub fn check<F: Fn() + Send + Sync + 'static>(&self, model: F) -> Result<Stats, Box<Failure>> {
        let mode = self.mode;
        self.watch(Arc::new(model), move |c| c.strategy(mode))
    }

    /// Runs exactly one execution following `schedule` (as printed in a failure report).
    /// An unparsable schedule or one that does not fit the model is an error report.
    pub fn replay<F: Fn() + Send + Sync + 'static>(
        &self,
        schedule: &str,
        model: F,
    ) -> Result<Stats, Box<Failure>> {
        let parsed: Schedule = match schedule.parse() {
            Ok(s) => s,
            Err(e) => return Err(Box::new(self.error_failure(Stop::Schedule(e.to_string())))),
        };
        self.watch(Arc::new(model), move |_| {
            Box::new(Replay::new(parsed.0.clone()))
        })
    }

    fn strategy(&self, mode: Mode) -> Box<dyn Strategy> {
        match mode {
            Mode::Bounded { max_preemptions } => Box::new(Bounded::new(
                max_preemptions,
                self.max_executions.min(1 << 22) as usize,
            )),
            Mode::Dpor => Box::new(Dpor::new()),
            Mode::Random { seed } => Box::new(Randomized::random(seed)),
            Mode::Pct { seed, depth } => Box::new(Randomized::pct(seed, depth)),
        }
    }

    fn error_failure(&self, stop: Stop) -> Failure {
        Failure::new(stop, &ExecState::new(0, 1), 0, self.mode.to_string(), None)
    }

    /// Runs the exploration on its own OS thread and reports a stall if no step happens for
    /// `stall_timeout` (a virtual thread blocked or spinning outside the checker).
    fn watch(
        &self,
        model: Model,
        make: impl FnOnce(&Checker) -> Box<dyn Strategy> + Send + 'static,
    ) -> Result<Stats, Box<Failure>> {
        let progress = Progress::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let me = self.clone();
        let p = progress.clone();
        let spawned = std::thread::Builder::new()
            .name("cmc-explorer".into())
            .spawn(move || {
                let strategy = make(&me);
                let _ = tx.send(me.explore(&model, strategy, &p));
            });
        if let Err(e) = spawned {
            return Err(Box::new(self.error_failure(Stop::Schedule(format!(
                "cannot start the explorer thread: {e}"
            )))));
        }
        let mut last = u64::MAX;
        loop {
            match rx.recv_timeout(self.stall_timeout) {
                Ok(result) => return result,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let now = progress.steps.load(Ordering::Relaxed);
                    if now == last {
                        let thread = progress.last_thread.load(Ordering::Relaxed);
                        return Err(Box::new(self.error_failure(Stop::Stalled {
                            thread,
                            timeout: self.stall_timeout,
                        })));
                    }
                    last = now;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Box::new(
                        self.error_failure(Stop::Schedule(
                            "the explorer thread died (a bug in cmc-thread; please report it)"
                                .to_string(),
                        )),
                    ))
                }
            }
        }
    }

    fn explore(
        &self,
        model: &Model,
        mut strategy: Box<dyn Strategy>,
        progress: &Progress,
    ) -> Result<Stats, Box<Failure>> {
        let start = Instant::now();
        let mut driver = Driver::new(self.stack_size, self.max_steps, self.spin_limit, progress);
        let mut executions = 0u64;
        let mut complete = !matches!(self.mode, Mode::Random { .. } | Mode::Pct { .. });
        loop {
            if executions >= self.max_executions {
                complete = false;
                break;
            }
            if !strategy.next_execution() {
                break;
            }
            executions += 1;
            let stop = match driver.run(model, &mut *strategy) {
                None | Some(Stop::Redundant) => strategy.finish_execution(&driver.state()),
                stop => stop,
            };
            if let Some(stop) = stop {
                let failure = Failure::new(
                    stop,
                    &driver.state(),
                    executions,
                    self.mode.to_string(),
                    strategy.seed(),
                );
                return Err(Box::new(self.confirm(model, &mut driver, failure)));
            }
        }
        Ok(Stats {
            executions,
            complete,
            elapsed: start.elapsed(),
        })
    }

    /// Re-runs a failing schedule; a run that diverges turns the report into a
    /// non-determinism report naming the first differing step.
    fn confirm(&self, model: &Model, driver: &mut Driver, failure: Failure) -> Failure {
        if matches!(
            failure.stop,
            Stop::NonDeterminism { .. } | Stop::Schedule(_)
        ) {
            return failure;
        }
        let first: Vec<crate::rt::Event> = driver.state().trace.clone();
        let mut replay = Replay::new(failure.schedule.0.clone());
        let stop = driver.run(model, &mut replay);
        let st = driver.state();
        let diverged = first
            .iter()
            .zip(st.trace.iter())
            .position(|(a, b)| !a.same_as(b));
        let step = match (diverged, stop.as_ref()) {
            (Some(step), _) => step,
            (None, Some(Stop::Schedule(_))) => first.len().min(st.trace.len()),
            (None, s)
                if s.map(std::mem::discriminant) != Some(std::mem::discriminant(&failure.stop)) =>
            {
                st.trace.len()
            }
            _ => return failure,
        };
        let show = |t: &[crate::rt::Event]| {
            t.get(step).map_or("the execution ended".to_string(), |e| {
                crate::report::describe_event(&st, e)
            })
        };
        let stop = Stop::NonDeterminism {
            step,
            first: show(&first),
            second: show(&st.trace),
        };
        let mut nd = Failure::new(
            stop,
            &st,
            failure.executions,
            failure.mode.clone(),
            failure.seed,
        );
        nd.preamble = Some(format!("first run ended with: {}\n", failure.headline()));
        nd
    }
}
