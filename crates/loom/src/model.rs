//! `loom::model` and `loom::model::Builder` on cmc's checker.

use cmc_thread::{Checker, Mode, Stats};
use std::time::Duration;

/// Explores every execution of `f` (DPOR, weak memory); panics with the report of the
/// first failure, or when cmc's own budget cut the exploration before it was complete
/// (see [`Builder::check`]).
pub fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    Builder::new().check(f)
}

/// loom's model configuration; each field is mapped to cmc's checker (see [`Builder::check`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Builder {
    /// loom's thread bound: not enforced (cmc allows 64 threads per execution).
    pub max_threads: usize,
    /// Steps per execution before the execution fails (cmc's `max_steps`).
    pub max_branches: usize,
    /// Executions after which the exploration stops, as the model asks: it passes if no
    /// execution failed, with a note that it is not complete. `None` (loom: explore
    /// everything): cmc's budget of [`BUDGET`] executions (or `CMC_LOOM_BUDGET`), whose
    /// cut is a failure.
    pub max_permutations: Option<usize>,
    /// Wall-time limit: cmc has none; the exploration runs to completion or budget.
    pub max_duration: Option<Duration>,
    /// Preemption bound: cmc's bounded mode with this many preemptions, instead of DPOR.
    pub preemption_bound: Option<usize>,
    /// Checkpoints are not supported (ignored).
    pub checkpoint_file: Option<std::path::PathBuf>,
    /// Checkpoints are not supported (ignored).
    pub checkpoint_interval: usize,
    /// loom's location tracking: cmc always records locations.
    pub location: bool,
    /// loom's logging: cmc prints the failing interleaving.
    pub log: bool,
    /// loom's explicit exploration (`explore`/`skip_branch`): not supported (ignored).
    pub expect_explicit_explore: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// cmc's execution budget for a model that sets no `max_permutations`.
pub const BUDGET: u64 = 1_000_000;

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

impl Builder {
    /// The defaults, with loom's environment variables (`LOOM_MAX_PREEMPTIONS`,
    /// `LOOM_MAX_BRANCHES`, `LOOM_MAX_PERMUTATIONS`).
    pub fn new() -> Self {
        Builder {
            max_threads: crate::MAX_THREADS,
            max_branches: env("LOOM_MAX_BRANCHES").unwrap_or(10_000),
            max_permutations: env("LOOM_MAX_PERMUTATIONS"),
            max_duration: None,
            preemption_bound: env("LOOM_MAX_PREEMPTIONS"),
            checkpoint_file: None,
            checkpoint_interval: 20_000,
            location: false,
            log: false,
            expect_explicit_explore: false,
        }
    }

    /// Ignored: checkpoints are not supported.
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// The checker these settings describe.
    fn checker(&self) -> Checker {
        let mode = match self.preemption_bound {
            Some(n) => Mode::BoundedDpor {
                max_preemptions: n as u32,
                weak_reduction: env("CMC_LOOM_WEAK_REDUCTION").is_some_and(|on: u8| on == 1),
            },
            None => Mode::Dpor,
        };
        Checker::new()
            .mode(mode)
            .weak_memory(true)
            // loom has no spin detection: a thread re-reading unchanged locations is never
            // reported before the step bound (a bounded loop is no livelock).
            .confirm_spins(true)
            // loom's loads do not return, after a yield, a replaced store their thread saw
            // before it.
            .yield_refreshes(true)
            .max_steps(self.max_branches)
            .max_executions(match self.max_permutations {
                Some(n) => n as u64,
                None => env("CMC_LOOM_BUDGET").unwrap_or(BUDGET),
            })
    }

    /// Explores `f`; panics with cmc's report on a failure, or when cmc's budget cut the
    /// exploration short (nothing is claimed about the executions not run). A stop at the
    /// model's own `max_permutations` is what the model asks for, as in loom: it passes,
    /// and says on stderr that the exploration is not complete. When an exploration
    /// that found no failure left stale reads out by cmc's eventual-visibility rule
    /// ([`Stats::stale_read_note`]), a line on stderr says so.
    pub fn check<F: Fn() + Sync + Send + 'static>(&self, f: F) {
        let result = self.checker().check(f);
        if let Some(note) = result.as_ref().ok().and_then(Stats::stale_read_note) {
            eprintln!("cmc: {note}");
        }
        match result {
            Ok(stats) if stats.complete => record(stats.executions),
            Ok(stats) if self.max_permutations.is_some() => {
                eprintln!(
                    "cmc: stopped after {} executions, as max_permutations asks (not complete)",
                    stats.executions
                );
                record(stats.executions)
            }
            Ok(stats) => panic!(
                "cmc: exploration cut by its budget after {} executions (not complete)",
                stats.executions
            ),
            Err(failure) => {
                record(failure.executions);
                panic!("{failure}")
            }
        }
    }
}

/// Appends `executions` and the name of the calling thread (the test's name under the
/// test harness) to the file named by `CMC_LOOM_STATS`, if set (one line per model, so
/// that a script can total a suite's executions or compare them per test).
fn record(executions: u64) {
    use std::io::Write;
    if let Some(path) = std::env::var_os("CMC_LOOM_STATS") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let name = std::thread::current().name().unwrap_or("-").to_string();
            let _ = writeln!(f, "{executions} {name}");
        }
    }
}
