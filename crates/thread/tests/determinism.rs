//! Non-determinism is detected in every mode: a sample of passing
//! executions (the first, then every n-th) is re-run with the same schedule and compared.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::{thread, Checker, Mode, Stop};
use std::sync::atomic::{AtomicUsize as StdAtomic, Ordering::SeqCst};
use std::sync::Arc;

mod programs;
use programs::non_determinism;

/// A model that passes in every schedule but whose first step depends on `runs`, state the
/// checker does not control: invocation `k` loads where the others increment, or the
/// other way round when `k` is `usize::MAX` (every odd invocation loads).
fn depends_on(runs: &'static StdAtomic, odd_one: usize) -> impl Fn() + Send + Sync + 'static {
    move || {
        let n = runs.fetch_add(1, SeqCst);
        let x = Arc::new(AtomicUsize::new(0));
        let loads = if odd_one == usize::MAX {
            n % 2 == 1
        } else {
            n == odd_one
        };
        if loads {
            x.load(Ordering::SeqCst);
        } else {
            x.fetch_add(1, Ordering::SeqCst);
        }
        let x2 = x.clone();
        let h = thread::spawn(move || x2.fetch_add(1, Ordering::SeqCst));
        x.fetch_add(1, Ordering::SeqCst);
        h.join().unwrap();
    }
}

fn assert_non_determinism(result: Result<cmc_thread::Stats, Box<cmc_thread::Failure>>) {
    let f = result.unwrap_err();
    let (step, first, second) = non_determinism(&f);
    assert_eq!(step, 1, "{f}");
    assert!(first.contains("fetch_add(AtomicUsize#"), "{f}");
    assert!(second.contains("load(AtomicUsize#"), "{f}");
    // Both runs are in the report: the first in the preamble, the second as the interleaving.
    let text = f.to_string();
    assert!(text.contains("= The first run (completed) ="), "{text}");
    assert!(
        text.contains("= The second run of the same schedule follows ="),
        "{text}"
    );
    assert!(text.contains("first run:  thread 0 fetch_add"), "{text}");
    assert!(text.contains("second run: thread 0 load"), "{text}");
}

#[test]
fn random_mode_detects_non_determinism_on_its_first_execution() {
    static RUNS: StdAtomic = StdAtomic::new(0);
    let checker = Checker::new().mode(Mode::Random { seed: 3 });
    assert_non_determinism(
        checker
            .max_executions(50)
            .check(depends_on(&RUNS, usize::MAX)),
    );
}

#[test]
fn pct_mode_detects_non_determinism_on_its_first_execution() {
    static RUNS: StdAtomic = StdAtomic::new(0);
    let checker = Checker::new().mode(Mode::Pct { seed: 3, depth: 2 });
    assert_non_determinism(
        checker
            .max_executions(50)
            .check(depends_on(&RUNS, usize::MAX)),
    );
}

#[test]
fn a_model_with_a_single_schedule_is_compared_with_itself() {
    static RUNS: StdAtomic = StdAtomic::new(0);
    let f = Checker::new()
        .check(|| {
            let x = AtomicUsize::new(0);
            if RUNS.fetch_add(1, SeqCst).is_multiple_of(2) {
                x.fetch_add(1, Ordering::SeqCst);
            } else {
                x.load(Ordering::SeqCst);
            }
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::NonDeterminism { step: 1, .. }),
        "{f}"
    );
    assert_eq!(f.executions, 1, "{f}");
}

#[test]
fn every_nth_execution_is_re_run() {
    // Re-running the first and every 10th execution: invocations 0 and 1 are execution 1
    // and its re-run, so execution k (2 <= k <= 10) is invocation k; the re-run of
    // execution 10 is invocation 11, the one that diverges.
    static RUNS: StdAtomic = StdAtomic::new(0);
    let random = || {
        Checker::new()
            .mode(Mode::Random { seed: 9 })
            .max_executions(40)
    };
    let f = random()
        .recheck_every(10)
        .check(depends_on(&RUNS, 11))
        .unwrap_err();
    assert!(
        matches!(f.stop, Stop::NonDeterminism { step: 1, .. }),
        "{f}"
    );
    assert_eq!(f.executions, 10, "{f}");
    // Invocation 11 is no longer a re-run without sampling: nothing is compared.
    static QUIET: StdAtomic = StdAtomic::new(0);
    let stats = random()
        .recheck_every(0)
        .check(depends_on(&QUIET, 11))
        .unwrap();
    assert_eq!((stats.executions, stats.reruns), (40, 0));
}

#[test]
fn a_deterministic_model_passes_with_its_reruns_counted() {
    static RUNS: StdAtomic = StdAtomic::new(0);
    let stats = Checker::new()
        .mode(Mode::Random { seed: 1 })
        .max_executions(200)
        .check(depends_on(&RUNS, usize::MAX - 1))
        .unwrap();
    // Executions 1, 64, 128 and 192 were re-run.
    assert_eq!((stats.executions, stats.reruns), (200, 4));
}
