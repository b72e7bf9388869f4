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
/// second one after it; both wait at `done` before their executions end.
struct Overlap {
    touched: Barrier,
    done: Barrier,
}

impl Overlap {
    fn new() -> Self {
        Overlap {
            touched: Barrier::new(2),
            done: Barrier::new(2),
        }
    }
}

/// Waits at `done` when dropped, so that an execution the checker stops early (unwinding)
/// still releases the other check.
struct WaitOnDrop<'a>(&'a Barrier);

impl Drop for WaitOnDrop<'_> {
    fn drop(&mut self) {
        self.0.wait();
    }
}

/// Runs `first` and `second` as two checks on two OS threads, with `overlap` shared by
/// their models; returns both results' failures (`None`: passed).
fn run_both(
    first: impl Fn() + Send + Sync + 'static,
    second: impl Fn() + Send + Sync + 'static,
) -> (Option<Stop>, Option<Stop>) {
    let check = |model: Box<dyn Fn() + Send + Sync>| {
        std::thread::spawn(move || Checker::new().check(model).err().map(|f| f.stop))
    };
    let (a, b) = (check(Box::new(first)), check(Box::new(second)));
    (a.join().unwrap(), b.join().unwrap())
}

/// Runs `body` with the barriers on the model's first execution only (the checker may run
/// a model again, e.g. to confirm a failure).
fn first_time(flag: &AtomicBool, body: impl FnOnce(), plain: impl FnOnce()) {
    if flag.swap(false, SeqCst) {
        body()
    } else {
        plain()
    }
}

static COUNTER: LazyLock<AtomicUsize> = LazyLock::new(|| AtomicUsize::new(0));

#[test]
fn a_static_lazy_lock_has_one_value_per_execution_when_checks_overlap() {
    let overlap: &'static Overlap = Box::leak(Box::new(Overlap::new()));
    let (a_first, b_first): (&'static AtomicBool, &'static AtomicBool) = (
        Box::leak(Box::new(AtomicBool::new(true))),
        Box::leak(Box::new(AtomicBool::new(true))),
    );
    let add_one_and_see_it_alone = || {
        COUNTER.fetch_add(1, SeqCst);
        assert_eq!(COUNTER.load(SeqCst), 1, "another execution's value");
    };
    let (a, b) = run_both(
        move || {
            first_time(
                a_first,
                || {
                    COUNTER.fetch_add(1, SeqCst);
                    overlap.touched.wait();
                    overlap.done.wait();
                    assert_eq!(COUNTER.load(SeqCst), 1, "another execution's value");
                },
                add_one_and_see_it_alone,
            )
        },
        move || {
            first_time(
                b_first,
                || {
                    overlap.touched.wait();
                    let _release = WaitOnDrop(&overlap.done);
                    add_one_and_see_it_alone();
                },
                add_one_and_see_it_alone,
            )
        },
    );
    assert_eq!((a, b), (None, None));
}

static SHARED: Mutex<u32> = Mutex::new(0);

#[test]
fn a_static_mutex_touched_by_two_executions_at_once_is_reported() {
    let overlap: &'static Overlap = Box::leak(Box::new(Overlap::new()));
    let (a_first, b_first): (&'static AtomicBool, &'static AtomicBool) = (
        Box::leak(Box::new(AtomicBool::new(true))),
        Box::leak(Box::new(AtomicBool::new(true))),
    );
    let lock_once = || *SHARED.lock().unwrap() += 0;
    let (a, b) = run_both(
        move || {
            first_time(
                a_first,
                || {
                    lock_once();
                    overlap.touched.wait();
                    overlap.done.wait();
                },
                lock_once,
            )
        },
        move || {
            first_time(
                b_first,
                || {
                    overlap.touched.wait();
                    let _release = WaitOnDrop(&overlap.done);
                    lock_once();
                },
                lock_once,
            )
        },
    );
    assert_eq!(a, None, "the check that touched the static first keeps it");
    match b {
        Some(Stop::Uncontrolled(message)) => assert!(
            message.contains("two executions running at the same time"),
            "{message}"
        ),
        other => panic!("expected the second check to be stopped, got {other:?}"),
    }
}
