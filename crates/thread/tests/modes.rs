//! DPOR, random and PCT modes: exhaustive counts, bugs found, seeds reproduce.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::{thread, Checker, Mode, Stop};
use std::sync::Arc;

fn adders(threads: usize, ops: usize, check: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let n = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let n = n.clone();
                thread::spawn(move || {
                    for _ in 0..ops {
                        n.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        if check {
            assert_eq!(n.load(Ordering::SeqCst), threads * ops);
        }
    }
}

#[test]
fn dpor_explores_each_ordering_of_dependent_steps() {
    // 2 threads x 2 fetch_add on one location: C(4,2) = 6 orderings of the dependent steps.
    let s = Checker::new()
        .mode(Mode::Dpor)
        .check(adders(2, 2, true))
        .unwrap();
    assert!(s.complete);
    assert!(s.executions >= 6, "{s:?}");
    // 3 x 3: 9!/(3!3!3!) = 1680 traces; DPOR must finish well within its budget.
    let s = Checker::new()
        .mode(Mode::Dpor)
        .max_executions(1_000_000)
        .check(adders(3, 3, true))
        .unwrap();
    assert!(s.complete && s.executions >= 1680, "{s:?}");
}

fn racy_inc() {
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

#[test]
fn dpor_finds_the_lost_update() {
    let f = Checker::new().mode(Mode::Dpor).check(racy_inc).unwrap_err();
    assert!(matches!(f.stop, Stop::Panic { .. }), "{f}");
}

#[test]
fn random_and_pct_find_the_lost_update_and_report_the_seed() {
    for mode in [Mode::Random { seed: 7 }, Mode::Pct { seed: 7, depth: 2 }] {
        let f = Checker::new()
            .mode(mode)
            .max_executions(10_000)
            .check(racy_inc)
            .unwrap_err();
        assert!(f.seed.is_some(), "{f}");
        assert!(f.to_string().contains("seed: "), "{f}");
        let again = Checker::new()
            .replay(&f.schedule.to_string(), racy_inc)
            .unwrap_err();
        assert_eq!(again.schedule, f.schedule);
        // Same seed, same result.
        let g = Checker::new()
            .mode(mode)
            .max_executions(10_000)
            .check(racy_inc)
            .unwrap_err();
        assert_eq!((g.executions, g.schedule), (f.executions, f.schedule));
    }
}

/// A SeqCst load never returns a value older than the latest SeqCst store in the explored
/// total order (issue 6, item 6): in no schedule does a reader see 0 after it saw 1.
#[test]
fn seqcst_loads_never_see_stale_values() {
    Checker::new()
        .mode(Mode::Dpor)
        .check(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let y = Arc::new(AtomicUsize::new(0));
            let (x2, y2) = (x.clone(), y.clone());
            let w = thread::spawn(move || {
                x2.store(1, Ordering::SeqCst);
                y2.store(1, Ordering::SeqCst);
            });
            let r1 = y.load(Ordering::SeqCst);
            let r2 = x.load(Ordering::SeqCst);
            assert!(
                !(r1 == 1 && r2 == 0),
                "stale SeqCst load: saw y == 1 then x == 0"
            );
            w.join().unwrap();
        })
        .unwrap();
}
