//! Programs shared by the integration tests.

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

/// Two threads add one each to a shared counter: correct in every schedule, and more than
/// one execution to explore (the additions run in either order).
pub fn two_increments() {
    let n = Arc::new(AtomicUsize::new(0));
    let t = {
        let n = n.clone();
        thread::spawn(move || n.fetch_add(1, SeqCst))
    };
    n.fetch_add(1, SeqCst);
    t.join().unwrap();
}
