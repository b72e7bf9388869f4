//! loom 0.5's API as a 0.5 suite uses it, on cmc: the item 0.5 has and 0.7 dropped, and
//! crates/loom's checker behind the re-exported names.

use loom::sync::atomic::{spin_loop_hint, AtomicBool, AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

#[test]
fn a_spin_wait_with_spin_loop_hint_ends() {
    // A spin wait as 0.5 suites write it, in bounded mode as their CI runs them
    // (LOOM_MAX_PREEMPTIONS): it ends (cmc also sees the unchanged re-reads as a spin).
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(0);
    builder.check(|| {
        let ready = Arc::new(AtomicBool::new(false));
        let t = {
            let ready = ready.clone();
            thread::spawn(move || ready.store(true, Release))
        };
        while !ready.load(Acquire) {
            spin_loop_hint();
        }
        t.join().unwrap();
    });
}

#[test]
#[should_panic(expected = "left: 1")]
fn a_lost_update_is_found() {
    loom::model(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let t = {
            let n = n.clone();
            thread::spawn(move || n.store(n.load(Relaxed) + 1, Relaxed))
        };
        n.store(n.load(Relaxed) + 1, Relaxed);
        t.join().unwrap();
        assert_eq!(n.load(Relaxed), 2);
    });
}
