//! Bounded DPOR (`Mode::BoundedDpor`, what loom's `preemption_bound` runs through the `loom`
//! package) on two shapes from real loom suites: thingbuf's `test_full` (two senders fill a
//! bounded channel with `try_send` until it reports full) and a tokio-like `Notify` guarding
//! a queue. Each passes in the bounded mode and in bounded DPOR with and without its weak
//! reduction, each reduction running fewer executions than the search it reduces.
//! `cargo test --release -p cmc-thread --test bounded_dpor -- --nocapture --include-ignored`
//! prints the counts (the ignored test is thingbuf's capacity, about 10 s).

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use cmc_thread::sync::Mutex;
use cmc_thread::{thread, Checker, Mode};
use std::collections::VecDeque;
use std::sync::Arc;

/// thingbuf's slot protocol, reduced: slot `i` of generation `g` holds state `g * CAP + i`
/// while free and `g * CAP + i + 1` once written; a sender claims the slot at `tail` by a
/// `compare_exchange` of `tail`, writes it and publishes the new state.
struct Channel<const CAP: usize> {
    head: AtomicUsize,
    tail: AtomicUsize,
    states: [AtomicUsize; CAP],
    values: [UnsafeCell<usize>; CAP],
    rx_wait: AtomicUsize,
}

// SAFETY: a slot's value is written only by the sender that claimed the slot (the checker
// verifies it: a race is a reported failure).
unsafe impl<const CAP: usize> Sync for Channel<CAP> {}

impl<const CAP: usize> Channel<CAP> {
    fn new() -> Self {
        Channel {
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            states: std::array::from_fn(AtomicUsize::new),
            values: std::array::from_fn(|_| UnsafeCell::new(0)),
            rx_wait: AtomicUsize::new(0),
        }
    }

    /// Queues `value`; `false` when the channel is full.
    fn try_send(&self, value: usize) -> bool {
        let mut tail = self.tail.load(Relaxed);
        loop {
            let state = self.states[tail % CAP].load(SeqCst);
            if state == tail {
                match self
                    .tail
                    .compare_exchange_weak(tail, tail + 1, SeqCst, Acquire)
                {
                    Ok(_) => {
                        self.values[tail % CAP].with_mut(|p| unsafe { *p = value });
                        self.states[tail % CAP].store(tail + 1, Release);
                        self.rx_wait.fetch_or(1, AcqRel);
                        return true;
                    }
                    Err(actual) => {
                        tail = actual;
                        continue;
                    }
                }
            }
            if self.head.fetch_or(0, SeqCst) + CAP == tail {
                return false;
            }
            // Written in the previous generation and not read: no slot is free.
            if state + CAP == tail + 1 {
                return false;
            }
            thread::yield_now();
            tail = self.tail.load(Acquire);
        }
    }
}

/// thingbuf's `test_full` with capacity `CAP` (thingbuf's: 4): two senders each send until
/// the channel reports full.
fn fill_from_two_senders<const CAP: usize>() {
    let channel = Arc::new(Channel::<CAP>::new());
    let senders: Vec<_> = (1..=2)
        .map(|value| {
            let channel = channel.clone();
            thread::spawn(move || {
                while channel.try_send(value) {
                    thread::yield_now();
                }
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
}

const EMPTY: usize = 0;
const WAITING: usize = 1;
const NOTIFIED: usize = 2;

/// tokio's `Notify` for one waiter, reduced: a state word (a stored permit or a waiter)
/// changed by `compare_exchange` without the lock, and by the waiter list's lock holder.
struct Notify {
    state: AtomicUsize,
    waiters: Mutex<usize>,
    woken: AtomicBool,
}

impl Notify {
    fn notify_one(&self) {
        let mut state = self.state.load(SeqCst);
        loop {
            if state != WAITING {
                match self.state.compare_exchange(state, NOTIFIED, SeqCst, SeqCst) {
                    Ok(_) => return,
                    Err(actual) => state = actual,
                }
                continue;
            }
            let mut waiters = self.waiters.lock().unwrap();
            state = self.state.load(SeqCst);
            if state == WAITING {
                *waiters -= 1;
                self.state.store(EMPTY, SeqCst);
                self.woken.store(true, Release);
                return;
            }
        }
    }

    /// Returns once notified (a stored permit, or a wake-up after registering).
    fn wait(&self) {
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
            .is_ok()
        {
            return;
        }
        {
            let mut waiters = self.waiters.lock().unwrap();
            self.woken.store(false, Relaxed);
            if self
                .state
                .compare_exchange(EMPTY, WAITING, SeqCst, SeqCst)
                .is_err()
            {
                // A permit arrived since the first check: take it.
                self.state.store(EMPTY, SeqCst);
                return;
            }
            *waiters += 1;
        }
        while !self.woken.load(Acquire) {
            thread::yield_now();
        }
    }
}

/// A producer queues two values, notifying after each; the consumer takes them in order,
/// waiting on the `Notify` whenever the queue is empty.
fn notified_queue() {
    let shared = Arc::new((
        Mutex::new(VecDeque::new()),
        Notify {
            state: AtomicUsize::new(EMPTY),
            waiters: Mutex::new(0),
            woken: AtomicBool::new(false),
        },
    ));
    let producer = {
        let shared = shared.clone();
        thread::spawn(move || {
            for value in 1..=2 {
                shared.0.lock().unwrap().push_back(value);
                shared.1.notify_one();
            }
        })
    };
    let mut got = Vec::new();
    while got.len() < 2 {
        let next = shared.0.lock().unwrap().pop_front();
        match next {
            Some(value) => got.push(value),
            None => shared.1.wait(),
        }
    }
    producer.join().unwrap();
    assert_eq!(got, [1, 2]);
}

/// Executions of `model` (which must pass, explored completely) under `mode`.
fn executions(mode: Mode, model: fn()) -> u64 {
    let start = std::time::Instant::now();
    let stats = Checker::new()
        .mode(mode)
        .max_executions(1_000_000)
        .check(model)
        .unwrap_or_else(|f| panic!("{mode}: {f}"));
    assert!(stats.complete, "{mode}: {stats:?}");
    println!(
        "{mode}: {} executions, {:.2} s",
        stats.executions,
        start.elapsed().as_secs_f64()
    );
    stats.executions
}

/// Bounded mode, bounded DPOR, bounded DPOR with its weak reduction: each explores fewer
/// executions than the one before it.
fn each_reduction_runs_fewer_executions(model: fn()) {
    let bounded_dpor = |weak_reduction| Mode::BoundedDpor {
        max_preemptions: 2,
        weak_reduction,
    };
    let all = executions(Mode::Bounded { max_preemptions: 2 }, model);
    let reduced = executions(bounded_dpor(false), model);
    let weak_reduced = executions(bounded_dpor(true), model);
    assert!(weak_reduced < reduced && reduced < all);
}

#[test]
fn two_senders_filling_a_thingbuf_like_channel_of_two_slots() {
    each_reduction_runs_fewer_executions(fill_from_two_senders::<2>);
}

/// thingbuf's capacity (about 10 s: `-- --ignored` runs it).
#[test]
#[ignore]
fn two_senders_filling_a_thingbuf_like_channel_of_four_slots() {
    each_reduction_runs_fewer_executions(fill_from_two_senders::<4>);
}

#[test]
fn a_queue_guarded_by_a_tokio_like_notify() {
    each_reduction_runs_fewer_executions(notified_queue);
}
