//! Programs shared by the integration tests.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::thread;
use std::sync::Arc;

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
