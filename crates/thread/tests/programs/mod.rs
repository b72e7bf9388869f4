//! Programs and checks shared by the integration tests.

#![allow(dead_code)] // each test file uses the programs it needs

use cmc_thread::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use cmc_thread::sync::Mutex;
use cmc_thread::{thread, Checker, Failure, Stop};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex as StdMutex};

/// `threads` threads each add one to a counter under a `Mutex`; the total is
/// asserted once all are joined (correct in every schedule).
pub fn mutex_counter(threads: usize) {
    let n = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || *n.lock().unwrap() += 1)
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*n.lock().unwrap(), threads);
}

/// The step of a non-determinism failure and the operations of its first and
/// second run there; any other failure fails the test, showing it.
pub fn non_determinism(f: &Failure) -> (usize, &str, &str) {
    match &f.stop {
        Stop::NonDeterminism {
            step,
            first,
            second,
        } => (*step, first, second),
        other => panic!("expected non-determinism, got {other:?}\n{f}"),
    }
}

/// Two threads increment a counter with a load and a store: one preemption
/// between them loses an update, and the final assertion fails.
pub fn lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                let v = n.load(Ordering::SeqCst);
                n.store(v + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 2, "lost update");
}

/// What a straight-line thread of a generated or litmus program returns: the values its
/// reads observed, in its order.
pub type Run<I> = fn(&[I], &[AtomicU64]) -> Vec<u64>;

/// Every outcome `checker` reaches on the program `threads`, and its number of executions.
/// Each thread runs its instructions with `run` over `locations` atomics, initially 0; an
/// outcome is what the threads return, in thread order, then (when `finals`) each
/// location's final value. A failure or an exploration cut short fails the test, naming
/// `name`.
pub fn outcomes<I: Clone + Send + Sync + 'static>(
    name: &str,
    checker: Checker,
    threads: &[Vec<I>],
    locations: usize,
    finals: bool,
    run: Run<I>,
) -> (BTreeSet<Vec<u64>>, u64) {
    let seen = Arc::new(StdMutex::new(BTreeSet::new()));
    let (sink, threads) = (seen.clone(), threads.to_vec());
    let stats = checker
        .check(move || {
            let memory: Arc<Vec<AtomicU64>> =
                Arc::new((0..locations).map(|_| AtomicU64::new(0)).collect());
            let handles: Vec<_> = threads
                .iter()
                .map(|instrs| {
                    let (instrs, memory) = (instrs.clone(), memory.clone());
                    thread::spawn(move || run(&instrs, &memory))
                })
                .collect();
            let mut outcome: Vec<u64> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            if finals {
                outcome.extend(memory.iter().map(|m| m.load(Ordering::SeqCst)));
            }
            sink.lock().unwrap().insert(outcome);
        })
        .unwrap_or_else(|f| panic!("{name}: {f}"));
    assert!(stats.complete, "{name}: {stats:?}");
    let outcomes = seen.lock().unwrap().clone();
    (outcomes, stats.executions)
}
