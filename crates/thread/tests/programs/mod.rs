//! Programs and checks shared by the integration tests.

#![allow(dead_code)] // each test file uses the programs it needs

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::sync::Mutex;
use cmc_thread::{thread, Failure, Stop};
use std::sync::Arc;

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
