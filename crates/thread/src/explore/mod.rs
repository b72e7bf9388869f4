//! The exploration front end: [`Checker`] runs a model under a [`Mode`] within a budget and
//! returns [`Stats`] or a [`Failure`] whose schedule replays it.

mod bounded;
mod dpor;
mod random;
mod replay;
mod rerun;
mod strategy;

use crate::report::Failure;
use crate::rt::{Driver, ExecState, Progress, Stop};
use crate::schedule::Schedule;
use bounded::Bounded;
use dpor::Dpor;
use random::Randomized;
use replay::Replay;
use rerun::{rerun, FirstRun};
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
    /// DPOR within a preemption bound (bounded partial-order reduction, as loom's
    /// `preemption_bound`): made to reach every outcome [`Mode::Bounded`] reaches with the
    /// same bound (checked against it on generated programs, `tests/weak_dpor.rs`), in
    /// fewer executions: of schedules that only reorder independent steps it runs few,
    /// where the bounded mode runs them all. Depth-first: a failure found is not the one
    /// with the fewest preemptions.
    BoundedDpor {
        /// The preemption bound.
        max_preemptions: u32,
        /// Weak memory: restrict read and modification-order choices as [`Mode::Dpor`] does
        /// (a load reads past, or a store goes before, only stores that happen before it;
        /// the other choices stand for running the step before those stores). Fewer
        /// executions, but not every outcome of [`Mode::Bounded`]: a stale read whose
        /// reordering costs more preemptions than the bound allows is not explored, where
        /// the bounded mode reads stale for free. Use `false` for the bounded mode's
        /// outcomes.
        weak_reduction: bool,
    },
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
            Mode::BoundedDpor {
                max_preemptions,
                weak_reduction,
            } => {
                write!(f, "DPOR within at most {max_preemptions} preemptions")?;
                if *weak_reduction {
                    write!(f, ", weak-memory choices reduced")?;
                }
                Ok(())
            }
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
    /// Executions re-run and compared with their first run to detect non-determinism
    /// (not counted in `executions`); see [`Checker::recheck_every`].
    pub reruns: u64,
    /// How many times weak memory's eventual-visibility rules cut the explored space: a
    /// thread that had read one replaced store `spin_limit + 1` times in a row was made to
    /// read the latest store, or (with [`Checker::yield_refreshes`]) a load after a yield
    /// was not offered a replaced store its thread saw before the yield; the executions
    /// where it reads the replaced one again are not explored (a bug that needs them is
    /// missed even when `complete`). 0: the rules never applied, and `complete` means the
    /// whole space of the mode.
    pub stale_reads_cut: u64,
}

impl Stats {
    /// What the exploration left out by weak memory's eventual-visibility rule, as a
    /// sentence for the user (`None` when it left out nothing); see
    /// [`Stats::stale_reads_cut`].
    pub fn stale_read_note(&self) -> Option<String> {
        (self.stale_reads_cut > 0).then(|| {
            format!(
                "stale reads bounded {} time(s): a thread that kept re-reading a replaced \
                 store was made to read a newer one (executions with longer runs of stale \
                 reads of one store were not explored; see Checker::spin_limit and \
                 Checker::yield_refreshes)",
                self.stale_reads_cut
            )
        })
    }
}

/// `40 executions, complete`, followed by the stale-read note when the rule applied.
impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let extent = if self.complete {
            "complete"
        } else {
            "not complete"
        };
        write!(f, "{} executions, {extent}", self.executions)?;
        if let Some(note) = self.stale_read_note() {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}

/// Configures and runs explorations. Defaults: exhaustive with DPOR, 100,000 executions
/// (a run the budget stops is reported with `complete: false`), weak memory (RC11),
/// 10,000 steps per execution, spin limit 3, 2 s stall timeout, 256 KiB stacks, every
/// 64th execution (and the first) re-run to detect non-determinism.
#[derive(Clone, Debug)]
#[must_use]
pub struct Checker {
    mode: Mode,
    max_executions: u64,
    max_steps: usize,
    spin_limit: u32,
    stall_timeout: Duration,
    stack_size: usize,
    recheck_every: u64,
    detect_leaks: bool,
    random_seed: u64,
    weak_memory: bool,
    yield_refreshes: bool,
    confirm_spins: bool,
}

impl Default for Checker {
    fn default() -> Self {
        Checker {
            mode: Mode::Dpor,
            max_executions: 100_000,
            max_steps: 10_000,
            spin_limit: 3,
            stall_timeout: Duration::from_secs(2),
            stack_size: 256 * 1024,
            recheck_every: 64,
            detect_leaks: true,
            random_seed: 0,
            weak_memory: true,
            yield_refreshes: false,
            confirm_spins: false,
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
    /// switched away from until the location is written (at least 1). In weak-memory mode
    /// also the re-reads of one replaced store after which a thread reads the latest store
    /// (counted in [`Stats::stale_reads_cut`]).
    pub fn spin_limit(mut self, n: u32) -> Self {
        self.spin_limit = n.max(1);
        self
    }

    /// Whether a thread found spinning (see [`Checker::spin_limit`]) when no other thread can
    /// run is let run on, the livelock being reported only if it still spins at the step
    /// bound (default: reported at once). Sound for loops that end by themselves (a bounded
    /// loop, straight-line code re-reading a location) at the cost of a longer failing
    /// execution; `loom`'s package sets it, as loom has no spin detection.
    pub fn confirm_spins(mut self, on: bool) -> Self {
        self.confirm_spins = on;
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

    /// Non-determinism sampling: the first passing execution, then every `n`-th, is run a
    /// second time with the same schedule and compared step by step (values included) and
    /// by outcome; a difference is reported as non-determinism with both runs. Failing
    /// executions are always re-run before being reported. `0` turns sampling off (prefix
    /// replays of the systematic modes are still compared).
    pub fn recheck_every(mut self, n: u64) -> Self {
        self.recheck_every = n;
        self
    }

    /// Whether an execution that ends with `cmc_thread::sync::Arc` allocations it made still
    /// alive (a reference cycle, a `mem::forget`) fails with a leak report (default: yes).
    pub fn detect_leaks(mut self, on: bool) -> Self {
        self.detect_leaks = on;
        self
    }

    /// Seeds the generator behind `cmc_thread::random` (the same in every execution, so
    /// runs replay; default 0). Try other seeds to explore other random values.
    pub fn random_seed(mut self, seed: u64) -> Self {
        self.random_seed = seed;
        self
    }

    /// Weak memory (default: on). On, a non-`SeqCst` load may read any store the RC11 /
    /// C++20 memory model lets it read given what its thread knows (coherence,
    /// release/acquire, fences, release sequences), and each such choice is explored like
    /// a thread choice (schedule item `thread~stale`). Never produces an outcome the model
    /// forbids; the allowed outcomes it does not reach (load buffering, stale failed
    /// `compare_exchange`) are listed in the crate docs. Off, every atomic access is
    /// sequentially consistent whatever its `Ordering` (fewer executions, weak-memory bugs
    /// missed).
    pub fn weak_memory(mut self, on: bool) -> Self {
        self.weak_memory = on;
        self
    }

    /// Weak memory's eventual visibility at yield points, as loom has it (default: off; the
    /// `loom` package sets it): a load after `thread::yield_now`, `hint::spin_loop` or
    /// `thread::sleep` is not offered the replaced stores its thread read or wrote before
    /// that yield, so a loop that polls and yields reads a newer value after each yield.
    /// Fewer executions; a bug that needs a thread to read one replaced store again after
    /// yielding is missed (each such cut is counted in [`Stats::stale_reads_cut`]).
    pub fn yield_refreshes(mut self, on: bool) -> Self {
        self.yield_refreshes = on;
        self
    }

    fn is_sampled(&self, execution: u64) -> bool {
        self.recheck_every != 0 && (execution == 1 || execution.is_multiple_of(self.recheck_every))
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
            Mode::BoundedDpor {
                max_preemptions,
                weak_reduction,
            } => Box::new(Dpor::bounded(max_preemptions, weak_reduction)),
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
            .name(crate::rt::os_threads::explorer_name())
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
        driver.detect_leaks(self.detect_leaks);
        driver.random_seed(self.random_seed);
        driver.weak_memory(self.weak_memory);
        driver.yield_refreshes(self.yield_refreshes);
        driver.confirm_spins(self.confirm_spins);
        let mut executions = 0u64;
        let mut reruns = 0u64;
        let mut stale_reads_cut = 0u64;
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
            let (stop, completed) = match driver.run(model, &mut *strategy) {
                None => (strategy.finish_execution(&driver.state()), true),
                Some(Stop::Redundant) => (strategy.finish_execution(&driver.state()), false),
                stop => (stop, false),
            };
            stale_reads_cut += driver.state().weak.stale_reads_cut();
            let (mode, seed) = (self.mode.to_string(), strategy.seed());
            if let Some(stop) = stop {
                // Reported as they are: a re-run would compare nothing of the model's (the
                // run already diverged, or something outside the checker stopped it).
                if matches!(
                    stop,
                    Stop::NonDeterminism { .. } | Stop::Schedule(_) | Stop::Uncontrolled(_)
                ) {
                    let failure = Failure::new(stop, &driver.state(), executions, mode, seed);
                    return Err(Box::new(failure));
                }
                // Confirm the failure by re-running it; a different run is reported instead.
                let failure = Failure::new(
                    stop.clone(),
                    &driver.state(),
                    executions,
                    mode.clone(),
                    seed,
                );
                let first = FirstRun::capture(&driver, Some(stop));
                let diverged = rerun(&mut driver, model, first, executions, mode, seed);
                return Err(Box::new(diverged.unwrap_or(failure)));
            }
            if completed && self.is_sampled(executions) {
                reruns += 1;
                let first = FirstRun::capture(&driver, None);
                if let Some(f) = rerun(&mut driver, model, first, executions, mode, seed) {
                    return Err(Box::new(f));
                }
            }
        }
        Ok(Stats {
            executions,
            complete,
            elapsed: start.elapsed(),
            reruns,
            stale_reads_cut,
        })
    }
}
