//! A search's time limit (`--time-limit`): when it passes, the search stops
//! at its next state boundary as if interrupted, saving a checkpoint where
//! the strategy has them, and the verdict says the time ran out
//! ([`Verdict::TimeLimit`]) rather than that the user interrupted it.
//!
//! Every strategy already stops when [`SearchOptions::interrupt`] becomes
//! true; the limit is one more reason to raise that flag. A watcher thread
//! raises a flag of the search's own when the user's flag is raised or the
//! limit passes, whichever comes first, and remembers which it was.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cmc_model::Model;

use crate::{Outcome, SearchOptions, Verdict};

/// Longest the watcher sleeps between two looks at the user's flag.
const POLL: Duration = Duration::from_millis(20);

/// Runs `search` under `options`' time limit (directly when there is none):
/// the options `search` gets stop it when the limit passes. Returns what
/// `search` returned and whether the time limit, not the user's own
/// interrupt, raised the stop flag (whether or not the search then stopped
/// because of it: a search that ends on its own after the limit passed
/// keeps its own verdict).
pub fn within_time_limit<T>(
    options: &SearchOptions,
    search: impl FnOnce(&SearchOptions) -> T,
) -> (T, bool) {
    let Some(limit) = options.time_limit else {
        return (search(options), false);
    };
    let deadline = Instant::now() + limit;
    let stop = Arc::new(AtomicBool::new(false));
    let expired = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    let user = options.interrupt.clone();
    let limited = SearchOptions {
        interrupt: Some(Arc::clone(&stop)),
        ..options.clone()
    };
    let result = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            while !finished.load(Ordering::Acquire) {
                if user
                    .as_deref()
                    .is_some_and(|flag| flag.load(Ordering::Relaxed))
                {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                let now = Instant::now();
                if now >= deadline {
                    expired.store(true, Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::park_timeout((deadline - now).min(POLL));
            }
        });
        let result = search(&limited);
        finished.store(true, Ordering::Release);
        watcher.thread().unpark();
        result
    });
    (result, expired.load(Ordering::Relaxed))
}

impl<M: Model> Outcome<M> {
    /// The outcome of a search run by [`within_time_limit`], which said
    /// whether the time limit raised its stop flag (`expired`): an
    /// interrupted search becomes [`Verdict::TimeLimit`]; any other verdict
    /// (the search ended on its own) stands.
    pub fn after_time_limit(mut self, expired: bool) -> Outcome<M> {
        if let (true, Verdict::Interrupted { checkpoint }) = (expired, &mut self.verdict) {
            self.verdict = Verdict::TimeLimit {
                checkpoint: checkpoint.take(),
            };
        }
        self
    }
}

/// What a report says of a search stopped by its time limit of `limit`,
/// with its checkpoint if one was saved.
pub(crate) fn message(limit: Option<Duration>, checkpoint: Option<&std::path::Path>) -> String {
    let limit = limit.map_or_else(String::new, |limit| {
        format!(" of {} s", limit.as_secs_f64())
    });
    match checkpoint {
        Some(dir) => format!(
            "the time limit{limit} was reached; checkpoint saved in {}; resume with: cmc check --resume {}",
            dir.display(),
            dir.display()
        ),
        None => format!(
            "the time limit{limit} was reached (with --checkpoint DIR a breadth-first search saves a checkpoint to resume from)"
        ),
    }
}
