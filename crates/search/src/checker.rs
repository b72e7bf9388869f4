//! The entry point: a builder that configures and runs a search.

use std::path::PathBuf;

use cmc_model::Model;

use crate::{Outcome, ProgressMode, Report, SearchOptions, Stats, Strategy, Verdict};

/// Configures and runs a search of one model.
///
/// Defaults: breadth-first, one worker per core, no depth bound, deadlock
/// checking on, no progress output.
#[must_use = "a Checker does nothing until `run` or `assert_properties` is called"]
pub struct Checker<M: Model> {
    model: M,
    options: SearchOptions,
}

impl<M: Model> Checker<M> {
    /// A checker of `model` with the default options.
    pub fn new(model: M) -> Checker<M> {
        Checker {
            model,
            options: SearchOptions::default(),
        }
    }

    /// Replaces all options at once.
    pub fn options(mut self, options: SearchOptions) -> Checker<M> {
        self.options = options;
        self
    }

    /// Breadth-first search (the default).
    pub fn bfs(mut self) -> Checker<M> {
        self.options.strategy = Strategy::Bfs;
        self
    }

    /// Depth-first search.
    pub fn dfs(mut self) -> Checker<M> {
        self.options.strategy = Strategy::Dfs;
        self
    }

    /// `walks` random walks of at most `walk_length` steps from `seed`.
    pub fn simulate(mut self, walks: u64, walk_length: u64, seed: u64) -> Checker<M> {
        self.options.strategy = Strategy::Simulate(crate::RandomWalks {
            walks,
            walk_length,
            seed,
        });
        self
    }

    /// Number of worker threads (at least 1).
    pub fn workers(mut self, workers: usize) -> Checker<M> {
        self.options.workers = workers.max(1);
        self
    }

    /// Deepest level to explore (TLC's convention: initial states are depth 1).
    pub fn max_depth(mut self, depth: u64) -> Checker<M> {
        self.options.max_depth = Some(depth);
        self
    }

    /// Whether a non-terminal state without enabled actions is an error (default: yes).
    pub fn check_deadlock(mut self, check: bool) -> Checker<M> {
        self.options.check_deadlock = check;
        self
    }

    /// Whether every step is computed twice and compared (default: no), so a
    /// model that depends on anything but its state is reported where it shows.
    pub fn check_determinism(mut self, check: bool) -> Checker<M> {
        self.options.check_determinism = check;
        self
    }

    /// How progress is shown (default: not at all).
    pub fn progress(mut self, mode: ProgressMode) -> Checker<M> {
        self.options.progress = mode;
        self
    }

    /// Where the trace log of parent links is kept.
    pub fn trace_dir(mut self, dir: impl Into<PathBuf>) -> Checker<M> {
        self.options.trace_dir = Some(dir.into());
        self
    }

    /// Bounds the memory of the search (fingerprint table and in-memory
    /// frontier; the frontier spills to disk beyond its share).
    pub fn max_memory(mut self, bytes: u64) -> Checker<M> {
        self.options.max_memory_bytes = Some(bytes);
        self
    }

    /// Saves a checkpoint in `dir` at the start, every `interval` and when
    /// interrupted (a directory that holds a checkpoint already is refused).
    pub fn checkpoint(
        mut self,
        dir: impl Into<PathBuf>,
        interval: std::time::Duration,
    ) -> Checker<M> {
        self.options.checkpoint = Some(crate::CheckpointOptions {
            dir: dir.into(),
            interval,
            resume: false,
            overwrite: false,
        });
        self
    }

    /// Continues the search saved in `dir` (checkpointing there as it goes).
    pub fn resume(mut self, dir: impl Into<PathBuf>, interval: std::time::Duration) -> Checker<M> {
        self.options.checkpoint = Some(crate::CheckpointOptions {
            dir: dir.into(),
            interval,
            resume: true,
            overwrite: false,
        });
        self
    }

    /// Stops the search when `flag` becomes true (saving a checkpoint if configured).
    pub fn interrupt_on(
        mut self,
        flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Checker<M> {
        self.options.interrupt = Some(flag);
        self
    }

    /// Stops the search once it has run for `limit` (saving a checkpoint if
    /// configured); the verdict is then [`Verdict::TimeLimit`].
    pub fn time_limit(mut self, limit: std::time::Duration) -> Checker<M> {
        self.options.time_limit = Some(limit);
        self
    }

    /// Partial-order reduction on or off (see [`SearchOptions::reduction`]).
    pub fn reduction(mut self, on: bool) -> Checker<M> {
        self.options.reduction = on;
        self
    }

    /// Sleep sets on or off (see [`SearchOptions::sleep_sets`]).
    pub fn sleep_sets(mut self, on: bool) -> Checker<M> {
        self.options.sleep_sets = on;
        self
    }

    /// Keeps the visited set's fingerprints in a bounded table in front of
    /// sorted runs on disk (log-structured, a filter per run), so that it
    /// can outgrow memory.
    pub fn fingerprints_on_disk(mut self, on_disk: bool) -> Checker<M> {
        self.options.fingerprints_on_disk = on_disk;
        self
    }

    /// The model being checked.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The options in force.
    pub fn search_options(&self) -> &SearchOptions {
        &self.options
    }

    /// Runs the search to its end and returns what it found.
    pub fn run(&self) -> Outcome<M> {
        search(&self.model, &self.options)
    }

    /// Runs the search and panics, with the readable counterexample as the
    /// message, unless every property holds. Meant for `#[test]`s.
    #[track_caller]
    pub fn assert_properties(&self) -> Outcome<M> {
        let outcome = self.run();
        if !outcome.verdict.is_pass() {
            let report = Report::new(&self.model, &self.options, &outcome);
            panic!("{}", report.render_text());
        }
        outcome
    }
}

/// Runs the search that `options` describe on `model`. A fault of the code
/// under the model ([`Model::fault_text`]) or a panic voids the verdict: the
/// outcome is then an error that says what happened.
pub(crate) fn search<M: Model>(model: &M, options: &SearchOptions) -> Outcome<M> {
    let searched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (outcome, expired) =
            crate::within_time_limit(options, |options| search_strategy(model, options));
        outcome.after_time_limit(expired)
    }));
    let mut outcome = searched.unwrap_or_else(|payload| Outcome {
        verdict: Verdict::Error {
            message: format!(
                "the model panicked: {}",
                crate::expand::panic_text(&*payload)
            ),
        },
        stats: Stats::default(),
        counterexample: None,
    });
    if let Some(fault) = model.fault_text() {
        outcome.verdict = Verdict::Error {
            message: format!("the search was stopped by a fault; no verdict:\n{fault}"),
        };
        outcome.counterexample = None;
        outcome.stats.complete = false;
    }
    outcome
}

fn search_strategy<M: Model>(model: &M, options: &SearchOptions) -> Outcome<M> {
    if let Some(conflict) = options.conflict() {
        return Outcome {
            verdict: Verdict::Error {
                message: conflict.into(),
            },
            stats: Stats::default(),
            counterexample: None,
        };
    }
    options.strategy.run(model, options)
}
