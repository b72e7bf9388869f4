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

fn line(counters: &Counters, started: Instant) -> String {
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    let generated = counters.generated.load(Ordering::Relaxed);
    let distinct = counters.distinct.load(Ordering::Relaxed);
    format!(
        "depth {}: {} states generated ({:.0} s^-1), {} distinct ({:.0} s^-1), {} on queue, {:.0} s",
        counters.depth.load(Ordering::Relaxed),
        generated,
        generated as f64 / seconds,
        distinct,
        distinct as f64 / seconds,
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
        match &bar {
            Some(bar) => bar.set_message(line(counters, started)),
            None => eprintln!("progress: {}", line(counters, started)),
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
