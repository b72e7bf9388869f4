//! Progress shown while a search runs: a live line on a terminal, plain
//! periodic lines otherwise.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::ProgressMode;

/// Counters that workers update and the reporter thread reads.
#[derive(Default)]
pub(crate) struct Counters {
    pub generated: AtomicU64,
    pub distinct: AtomicU64,
    pub queued: AtomicU64,
    pub depth: AtomicU64,
}

/// A running progress reporter; stops (and prints a last line) when dropped.
pub(crate) struct Progress {
    pub counters: Arc<Counters>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    reporter: Option<JoinHandle<()>>,
}

/// Time between two plain progress lines.
const PLAIN_INTERVAL: Duration = Duration::from_secs(10);
/// Time between two refreshes of the live line.
const LIVE_INTERVAL: Duration = Duration::from_millis(200);

/// The counts at one progress line, to give the next one its recent rates.
#[derive(Clone, Copy)]
struct Mark {
    at: Instant,
    generated: u64,
    distinct: u64,
}

impl Mark {
    fn now(counters: &Counters) -> Mark {
        Mark {
            at: Instant::now(),
            generated: counters.generated.load(Ordering::Relaxed),
            distinct: counters.distinct.load(Ordering::Relaxed),
        }
    }
}

/// A progress line: the counts, their average rates since `started`, and
/// the distinct-state rate since `previous` (the last line), from which
/// the rate at a given count can be read off a long run's log.
fn line(counters: &Counters, started: Instant, previous: Mark, now: Mark) -> String {
    let seconds = now.at.duration_since(started).as_secs_f64().max(1e-9);
    let recent = now.at.duration_since(previous.at).as_secs_f64().max(1e-9);
    format!(
        "depth {}: {} states generated ({:.0} s^-1), {} distinct ({:.0} s^-1; {:.0} s^-1 in the last {:.0} s), {} on queue, {:.0} s",
        counters.depth.load(Ordering::Relaxed),
        now.generated,
        now.generated as f64 / seconds,
        now.distinct,
        now.distinct as f64 / seconds,
        now.distinct.saturating_sub(previous.distinct) as f64 / recent,
        recent,
        counters.queued.load(Ordering::Relaxed),
        seconds
    )
}

impl Progress {
    /// Starts reporting in `mode` (nothing at all for [`ProgressMode::Off`]).
    pub fn start(mode: ProgressMode) -> Progress {
        let counters = Arc::new(Counters::default());
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let live = match mode {
            ProgressMode::Off => None,
            ProgressMode::Auto => Some(std::io::stderr().is_terminal()),
            ProgressMode::Plain => Some(false),
        };
        let reporter = live.map(|live| {
            let counters = Arc::clone(&counters);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || report(&counters, &stop, live))
        });
        Progress {
            counters,
            stop,
            reporter,
        }
    }
}

fn report(counters: &Counters, stop: &(Mutex<bool>, Condvar), live: bool) {
    let started = Instant::now();
    let mut previous = Mark::now(counters);
    let bar = live.then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg}")
                .expect("the template is valid"),
        );
        bar
    });
    let interval = if live { LIVE_INTERVAL } else { PLAIN_INTERVAL };
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|poison| poison.into_inner());
    loop {
        // The predicate is checked before waiting: a stop set before this
        // thread first took the lock is not missed (it would add a whole
        // interval to a short run).
        let (guard, _) = wake
            .wait_timeout_while(stopped, interval, |stopped| !*stopped)
            .unwrap_or_else(|poison| poison.into_inner());
        stopped = guard;
        if *stopped {
            break;
        }
        let now = Mark::now(counters);
        let text = line(counters, started, previous, now);
        match &bar {
            Some(bar) => bar.set_message(text),
            None => eprintln!("progress: {text}"),
        }
        // The live line's recent rate is over the last plain interval at least.
        if !live || now.at.duration_since(previous.at) >= PLAIN_INTERVAL {
            previous = now;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|poison| poison.into_inner()) = true;
        wake.notify_all();
        if let Some(reporter) = self.reporter.take() {
            // A reporter that panicked only loses progress lines, never results.
            let _ = reporter.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_the_average_and_the_recent_distinct_rates() {
        let counters = Counters::default();
        counters.distinct.store(3_000, Ordering::Relaxed);
        let started = Instant::now();
        let previous = Mark {
            at: started + Duration::from_secs(10),
            generated: 0,
            distinct: 1_000,
        };
        let now = Mark {
            at: started + Duration::from_secs(20),
            generated: 5_000,
            distinct: 3_000,
        };
        let text = line(&counters, started, previous, now);
        assert!(
            text.contains("3000 distinct (150 s^-1; 200 s^-1 in the last 10 s)"),
            "{text}"
        );
        assert!(text.contains("5000 states generated (250 s^-1)"), "{text}");
    }

    #[test]
    fn a_reporter_stopped_before_it_first_waits_ends_at_once() {
        for _ in 0..3 {
            let started = Instant::now();
            drop(Progress::start(ProgressMode::Plain));
            assert!(
                started.elapsed() < PLAIN_INTERVAL / 4,
                "stopping the reporter took {:?}",
                started.elapsed()
            );
        }
    }
}
