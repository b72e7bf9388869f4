//! Stress mode: the model on real OS threads, many iterations.

use cmc_thread::sync::mpsc;
use cmc_thread::{stress, thread};
use std::time::Duration;

mod programs;
use programs::mutex_counter;

#[test]
fn a_correct_model_passes_every_iteration_on_real_threads() {
    // Real OS threads: outside an execution `spawn` is std's.
    let ran = stress(200, Duration::from_secs(10), || mutex_counter(3)).unwrap();
    assert_eq!(ran, 200);
}

#[test]
fn the_first_panic_is_reported_not_the_join_error() {
    let f = stress(50, Duration::from_secs(10), || {
        thread::spawn(|| panic!("boom in a worker")).join().unwrap();
    })
    .unwrap_err();
    assert_eq!(f.iteration, 0);
    assert!(f.message.starts_with("boom in a worker (at "), "{f}");
    assert!(f.to_string().contains("cannot be replayed"), "{f}");
}

#[test]
fn an_iteration_that_hangs_is_reported_after_the_timeout() {
    let f = stress(5, Duration::from_millis(300), || {
        let (tx, rx) = mpsc::channel::<()>();
        let _keep = tx;
        let _ = rx.recv(); // a sender is alive and never sends: blocks forever
    })
    .unwrap_err();
    assert_eq!(f.iteration, 0);
    assert!(f.message.contains("did not finish within"), "{f}");
}
