//! Progress verdicts are sound: a loop counts as spinning only while nothing it read since
//! its last progress was written by another thread, and a thread at `yield_now`,
//! `spin_loop`, `sleep` or a timed wait that times out gives way to the others (fair
//! scheduling), so a correct program whose loops wait for another thread is neither a
//! livelock nor a step-bound failure.

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use cmc_thread::sync::{Condvar, Mutex, RwLock};
use cmc_thread::{hint, thread, Checker, Mode};
use std::sync::Arc;
use std::time::Duration;

/// Every exploration mode, each with the default and the weak memory model.
fn every_setting() -> Vec<(String, Checker)> {
    let modes = [
        Mode::Dpor,
        Mode::Bounded { max_preemptions: 1 },
        Mode::Bounded { max_preemptions: 3 },
        Mode::Random { seed: 1 },
        Mode::Pct { seed: 1, depth: 3 },
    ];
    let mut settings = Vec::new();
    for mode in modes {
        for weak in [false, true] {
            let checker = Checker::new()
                .mode(mode)
                .weak_memory(weak)
                .max_executions(20_000);
            settings.push((format!("{mode}, weak_memory({weak})"), checker));
        }
    }
    settings
}

/// Always terminates: the loop re-reads `other` (never written) while waiting for `flag`.
/// A write of `flag` that lands between the loop's read of `flag` and its next read of
/// `other` must not let the unchanged `other` count the thread as spinning (it would be
/// blocked with nobody left to write, a false livelock).
fn flag_and_unchanged_other() {
    let flag = Arc::new(AtomicBool::new(false));
    let other = Arc::new(AtomicUsize::new(0));
    let setter = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(true, Release))
    };
    loop {
        other.load(Relaxed);
        if flag.load(Acquire) {
            break;
        }
    }
    setter.join().unwrap();
}

#[test]
fn a_loop_over_two_atomics_is_no_livelock_in_any_setting() {
    for (setting, checker) in every_setting() {
        let result = checker.check(flag_and_unchanged_other);
        assert!(result.is_ok(), "{setting}: {}", result.unwrap_err());
    }
}

mod seqlock {
    use cmc_thread::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    use cmc_thread::sync::atomic::{fence, AtomicUsize};
    use cmc_thread::thread;
    use std::sync::Arc;
    include!("programs/seqlock.rs");
}

#[test]
fn a_loop_over_three_atomics_that_leaves_after_rereading_them_is_no_livelock() {
    for (setting, checker) in every_setting() {
        // A correct reader (with its acquire fence) against one writer: its last iteration
        // re-reads every location of the iteration before (the writer is done) and then
        // leaves the loop, so it must not be blocked as spinning on the way out.
        let result = checker.check(|| seqlock::seqlock(true));
        assert!(result.is_ok(), "{setting}: {}", result.unwrap_err());
    }
}

/// A single-producer single-consumer ring of `N` slots; both sides spin while it is
/// full / empty.
struct Ring<const N: usize> {
    slots: [UnsafeCell<usize>; N],
    head: AtomicUsize,
    tail: AtomicUsize,
}

impl<const N: usize> Ring<N> {
    fn new() -> Self {
        Ring {
            slots: std::array::from_fn(|_| UnsafeCell::new(0)),
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
        }
    }

    fn push(&self, value: usize) {
        let tail = self.tail.load(Relaxed);
        while tail - self.head.load(Acquire) == N {}
        self.slots[tail % N].with_mut(|p| unsafe { *p = value });
        self.tail.store(tail + 1, Release);
    }

    fn pop(&self) -> usize {
        let head = self.head.load(Relaxed);
        while self.tail.load(Acquire) == head {}
        let value = self.slots[head % N].with(|p| unsafe { *p });
        self.head.store(head + 1, Release);
        value
    }
}

/// Three values through a ring of two slots: the producer waits for room once.
fn spsc_ring() {
    let ring = Arc::new(Ring::<2>::new());
    let producer = {
        let ring = ring.clone();
        thread::spawn(move || (1..=3).for_each(|v| ring.push(v)))
    };
    let got: Vec<usize> = (0..3).map(|_| ring.pop()).collect();
    producer.join().unwrap();
    assert_eq!(got, [1, 2, 3]);
}

/// Two values through a ring of one slot.
fn small_spsc_ring() {
    let ring = Arc::new(Ring::<1>::new());
    let producer = {
        let ring = ring.clone();
        thread::spawn(move || (1..=2).for_each(|v| ring.push(v)))
    };
    let got: Vec<usize> = (0..2).map(|_| ring.pop()).collect();
    producer.join().unwrap();
    assert_eq!(got, [1, 2]);
}

#[test]
fn a_correct_spsc_ring_passes_in_bounded_mode_and_dpor() {
    // Bounded mode with weak memory multiplies its schedules by every read choice (no
    // DPOR reduction there), so it gets the one-slot ring.
    let settings: [(Mode, bool, fn()); 4] = [
        (Mode::Bounded { max_preemptions: 2 }, false, spsc_ring),
        (Mode::Bounded { max_preemptions: 2 }, true, small_spsc_ring),
        (Mode::Dpor, false, spsc_ring),
        (Mode::Dpor, true, spsc_ring),
    ];
    {
        for (mode, weak, model) in settings {
            let result = Checker::new()
                .mode(mode)
                .weak_memory(weak)
                .max_executions(200_000)
                .check(model);
            let stats = result.unwrap_or_else(|f| panic!("{mode}, weak {weak}: {f}"));
            assert!(stats.complete, "{mode}, weak {weak}: {stats:?}");
            println!("{mode}, weak {weak}: {stats:?}");
        }
    }
}

/// Peterson's lock with `SeqCst` accesses (correct under C++20), entered once by each of
/// two threads; the critical section increments a race-checked cell.
fn peterson() {
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let turn = Arc::new(AtomicUsize::new(0));
    let count = Arc::new(UnsafeCell::new(0));
    let enter = move |me: usize| {
        let other = 1 - me;
        flags[me].store(true, SeqCst);
        turn.store(other, SeqCst);
        while flags[other].load(SeqCst) && turn.load(SeqCst) == other {}
        count.with_mut(|c| unsafe { *c += 1 });
        flags[me].store(false, SeqCst);
    };
    let enter = Arc::new(enter);
    let other = {
        let enter = enter.clone();
        thread::spawn(move || enter(1))
    };
    enter(0);
    other.join().unwrap();
}

#[test]
fn seqcst_peterson_passes_in_weak_dpor() {
    let stats = Checker::new()
        .weak_memory(true)
        .max_executions(200_000)
        .check(peterson)
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete, "{stats:?}");
}

/// Checks `model` in DPOR and in bounded mode (2 preemptions): each run must complete
/// without a failure.
fn completes_in_dpor_and_bounded_mode(model: impl Fn() + Copy + Send + Sync + 'static) {
    for mode in [Mode::Dpor, Mode::Bounded { max_preemptions: 2 }] {
        let stats = Checker::new()
            .mode(mode)
            .check(model)
            .unwrap_or_else(|f| panic!("{mode}: {f}"));
        assert!(stats.complete, "{mode}: {stats:?}");
    }
}

/// Polls a `Mutex<bool>` that another thread sets, calling `between` after each poll
/// that finds it unset.
fn poll_a_mutex(between: fn()) {
    let ready = Arc::new(Mutex::new(false));
    let setter = {
        let ready = ready.clone();
        thread::spawn(move || *ready.lock().unwrap() = true)
    };
    while !*ready.lock().unwrap() {
        between();
    }
    setter.join().unwrap();
}

#[test]
fn polling_a_mutex_with_yield_now_ends() {
    completes_in_dpor_and_bounded_mode(|| poll_a_mutex(thread::yield_now));
}

#[test]
fn polling_a_rwlock_with_spin_loop_ends() {
    let model = || {
        let ready = Arc::new(RwLock::new(false));
        let setter = {
            let ready = ready.clone();
            thread::spawn(move || *ready.write().unwrap() = true)
        };
        while !*ready.read().unwrap() {
            hint::spin_loop();
        }
        setter.join().unwrap();
    };
    completes_in_dpor_and_bounded_mode(model);
}

/// Polls a `Mutex<bool>` and waits on a condvar with a timeout between polls; the setter
/// does not notify, so each wait times out (tokio's paused-clock driver parks with a
/// timeout this way while a blocking task runs).
#[test]
fn polling_a_mutex_with_timed_condvar_waits_ends() {
    let model = || {
        let ready = Arc::new((Mutex::new(false), Condvar::new()));
        let setter = {
            let ready = ready.clone();
            thread::spawn(move || *ready.0.lock().unwrap() = true)
        };
        let mut set = ready.0.lock().unwrap();
        while !*set {
            set = ready
                .1
                .wait_timeout(set, Duration::from_millis(1))
                .unwrap()
                .0;
        }
        drop(set);
        setter.join().unwrap();
    };
    completes_in_dpor_and_bounded_mode(model);
}

/// Polls a `Mutex<bool>` and parks with a timeout between polls; the setter does not
/// unpark. (Polling an atomic instead would be caught by the spin detector.)
#[test]
fn polling_a_mutex_with_park_timeout_ends() {
    completes_in_dpor_and_bounded_mode(|| {
        poll_a_mutex(|| thread::park_timeout(Duration::from_millis(1)))
    });
}

#[test]
fn a_loop_nobody_ends_is_still_a_livelock() {
    let f = Checker::new()
        .check(|| {
            let flag = Arc::new(AtomicBool::new(false));
            while !flag.load(Acquire) {}
        })
        .unwrap_err();
    assert!(matches!(f.stop, cmc_thread::Stop::Livelock { .. }), "{f}");
}

/// The waiting side of a one-flag handshake whose loop also performs a read-modify-write
/// that stores the value it read (`fetch_or(0)`, as thingbuf's queues poll their head).
/// Under weak memory the `Acquire` load may keep reading the initial `0` after `set` was
/// stored; an execution where it does so forever is not fair (a store becomes visible
/// eventually) although the loop writes on every iteration.
fn wait_for_flag_with_rmw_elsewhere() {
    let tail = Arc::new(AtomicUsize::new(0));
    let head = Arc::new(AtomicUsize::new(0));
    let setter = {
        let tail = tail.clone();
        thread::spawn(move || {
            tail.fetch_or(1, SeqCst);
        })
    };
    while tail.load(Acquire) == 0 {
        head.fetch_or(0, SeqCst);
        thread::yield_now();
    }
    setter.join().unwrap();
}

#[test]
fn a_stale_read_is_not_offered_forever_to_a_loop_that_writes() {
    for mode in [Mode::Bounded { max_preemptions: 2 }, Mode::Dpor] {
        let stats = Checker::new()
            .mode(mode)
            .weak_memory(true)
            .max_executions(100_000)
            .check(wait_for_flag_with_rmw_elsewhere)
            .unwrap_or_else(|f| panic!("{mode}, execution {}: {f}", f.executions));
        assert!(stats.complete, "{mode}: {stats:?}");
        println!("{mode}: {stats:?}");
    }
}
