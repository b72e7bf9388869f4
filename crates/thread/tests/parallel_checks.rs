//! Checks running at the same time in one process, as `cargo test` runs tests: a `static`
//! touched by both. Two barriers (std's, outside the checker) hold both executions open at
//! once, so the overlap is certain, not left to the test runner's timing.

use cmc_thread::sync::atomic::AtomicUsize;
use cmc_thread::sync::{LazyLock, Mutex};
use cmc_thread::{Checker, Stop};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Barrier;

/// Two barriers for two checks: the first check touches the static before `touched`, the
/// second one after it; the first check's execution then waits at `done` until the second
/// check has ended.
struct Overlap {
    touched: Barrier,
    done: Barrier,
}

/// Runs two checks at the same time on two OS threads, both of the model `touch(); after()`.
/// In their first executions (the checker may run a model again, e.g. to confirm a failure)
/// the first check runs `touch` before the second one, and the second check runs to its
/// end while the first one's execution waits between `touch` and `after`, so that both
/// executions are running when the second one touches the static. (The second check
/// releases the first one once it returned: an execution it stops early is abandoned, so
/// nothing after the stop would run in its model.) Returns how each check ended (`None`:
/// passed).
fn overlapping_checks(touch: fn(), after: fn()) -> (Option<Stop>, Option<Stop>) {
    let overlap: &'static Overlap = Box::leak(Box::new(Overlap {
        touched: Barrier::new(2),
        done: Barrier::new(2),
    }));
    let check = |second: bool| {
        let first_run = AtomicBool::new(true);
        let model = move || {
            if !first_run.swap(false, SeqCst) {
                touch();
            } else if second {
                overlap.touched.wait();
                touch();
            } else {
                touch();
                overlap.touched.wait();
                overlap.done.wait();
            }
            after();
        };
        std::thread::spawn(move || {
            let stop = Checker::new().check(model).err().map(|f| f.stop);
            if second {
                overlap.done.wait();
            }
            stop
        })
    };
    let (a, b) = (check(false), check(true));
    (a.join().unwrap(), b.join().unwrap())
}

static COUNTER: LazyLock<AtomicUsize> = LazyLock::new(|| AtomicUsize::new(0));

#[test]
fn a_static_lazy_lock_has_one_value_per_execution_when_checks_overlap() {
    let outcomes = overlapping_checks(
        || {
            COUNTER.fetch_add(1, SeqCst);
        },
        || assert_eq!(COUNTER.load(SeqCst), 1, "another execution's value"),
    );
    assert_eq!(outcomes, (None, None));
}

static SHARED: Mutex<u32> = Mutex::new(0);

#[test]
fn a_static_mutex_touched_by_two_executions_at_once_is_reported() {
    let (a, b) = overlapping_checks(|| *SHARED.lock().unwrap() += 1, || {});
    assert_eq!(a, None, "the check that touched the static first keeps it");
    match b {
        Some(Stop::Uncontrolled(message)) => assert!(
            message.contains("two executions running at the same time"),
            "{message}"
        ),
        other => panic!("expected the second check to be stopped, got {other:?}"),
    }
}
