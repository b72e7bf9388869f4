//! DPOR, random and PCT modes: exhaustive counts, bugs found, seeds reproduce.

use cmc_thread::sync::atomic::{AtomicUsize, Ordering};
use cmc_thread::{thread, Checker, Mode, Stop};
use std::sync::Arc;

mod programs;
use programs::lost_update;

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

#[test]
fn dpor_finds_the_lost_update() {
    let f = Checker::new()
        .mode(Mode::Dpor)
        .check(lost_update)
        .unwrap_err();
    assert!(matches!(f.stop, Stop::Panic { .. }), "{f}");
}

#[test]
fn random_and_pct_find_the_lost_update_and_report_the_seed() {
    for mode in [Mode::Random { seed: 7 }, Mode::Pct { seed: 7, depth: 2 }] {
        let f = Checker::new()
            .mode(mode)
            .max_executions(10_000)
            .check(lost_update)
            .unwrap_err();
        assert!(f.seed.is_some(), "{f}");
        assert!(f.to_string().contains("seed: "), "{f}");
        let again = Checker::new()
            .replay(&f.schedule.to_string(), lost_update)
            .unwrap_err();
        assert_eq!(again.schedule, f.schedule);
        // Same seed, same result.
        let g = Checker::new()
            .mode(mode)
            .max_executions(10_000)
            .check(lost_update)
            .unwrap_err();
        assert_eq!((g.executions, g.schedule), (f.executions, f.schedule));
    }
}

/// A SeqCst load never returns a value older than the latest SeqCst store in the explored
/// total order: in no schedule does a reader see 0 after it saw 1.
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

/// The distinct final states (values each thread read, then the final memory) of `program`
/// under `mode`, and the number of executions.
fn final_states(mode: Mode, program: fn() -> String) -> (std::collections::BTreeSet<String>, u64) {
    let seen = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let sink = seen.clone();
    let stats = Checker::new()
        .mode(mode)
        .max_executions(1_000_000)
        .check(move || {
            let s = program();
            sink.lock().unwrap().insert(s);
        })
        .unwrap();
    assert!(stats.complete, "{mode}: {stats:?}");
    let states = seen.lock().unwrap().clone();
    (states, stats.executions)
}

/// Store buffering plus a third thread that overwrites `x`.
fn store_load_mix() -> String {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (x1, y1, x2, y2, x3) = (x.clone(), y.clone(), x.clone(), y.clone(), x.clone());
    let a = thread::spawn(move || {
        x1.store(1, Ordering::SeqCst);
        y1.load(Ordering::SeqCst)
    });
    let b = thread::spawn(move || {
        y2.store(1, Ordering::SeqCst);
        x2.load(Ordering::SeqCst)
    });
    let c = thread::spawn(move || {
        let r = x3.load(Ordering::SeqCst);
        x3.store(2, Ordering::SeqCst);
        r
    });
    let r = (a.join().unwrap(), b.join().unwrap(), c.join().unwrap());
    format!("{r:?} x={}", x.load(Ordering::SeqCst))
}

/// Three threads doing two `fetch_add`s each, recording what they saw.
fn adders_seen() -> String {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let n = n.clone();
            thread::spawn(move || {
                (
                    n.fetch_add(i + 1, Ordering::SeqCst),
                    n.fetch_add(10, Ordering::SeqCst),
                )
            })
        })
        .collect();
    let seen: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    format!("{seen:?}")
}

/// A mutex-protected log next to an unprotected flag and a channel.
fn locks_and_channels() -> String {
    use cmc_thread::sync::{mpsc, Mutex};
    let log = Arc::new(Mutex::new(Vec::new()));
    let flag = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let hs: Vec<_> = (0..2)
        .map(|i| {
            let (log, flag, tx) = (log.clone(), flag.clone(), tx.clone());
            thread::spawn(move || {
                let f = flag.swap(i + 1, Ordering::SeqCst);
                log.lock().unwrap().push((i, f));
                tx.send(i).unwrap();
            })
        })
        .collect();
    drop(tx);
    let order: Vec<usize> = rx.iter().collect();
    for h in hs {
        h.join().unwrap();
    }
    let log = log.lock().unwrap().clone();
    format!("{log:?} {order:?} {}", flag.load(Ordering::SeqCst))
}

#[test]
fn dpor_with_sleep_sets_reaches_exactly_the_final_states_of_naive_exploration() {
    let naive = Mode::Bounded {
        max_preemptions: 1000,
    };
    for program in [store_load_mix, adders_seen, locks_and_channels] {
        let (all, naive_runs) = final_states(naive, program);
        let (reduced, dpor_runs) = final_states(Mode::Dpor, program);
        assert_eq!(reduced, all, "DPOR missed or invented final states");
        assert!(
            dpor_runs < naive_runs,
            "no reduction: {dpor_runs} vs {naive_runs}"
        );
        assert!(all.len() > 1);
    }
}

/// Two threads racing a compare-and-swap lock-free increment, a third reading twice.
fn cas_and_reader() -> String {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                let mut tries = 0;
                let mut cur = n.load(Ordering::SeqCst);
                while let Err(seen) =
                    n.compare_exchange(cur, cur + 1, Ordering::SeqCst, Ordering::SeqCst)
                {
                    cur = seen;
                    tries += 1;
                }
                tries
            })
        })
        .collect();
    let n2 = n.clone();
    let reader = thread::spawn(move || (n2.load(Ordering::SeqCst), n2.load(Ordering::SeqCst)));
    let tries: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    format!("{tries:?} {:?}", reader.join().unwrap())
}

#[test]
fn dpor_matches_naive_exploration_on_a_cas_loop() {
    let naive = Mode::Bounded {
        max_preemptions: 1000,
    };
    let (all, _) = final_states(naive, cas_and_reader);
    let (reduced, _) = final_states(Mode::Dpor, cas_and_reader);
    assert_eq!(reduced, all);
}

/// Counts fetch_adds like `adders` but shares the counter through `cmc_thread::sync::Arc`.
fn adders_instrumented_arc() {
    let n = cmc_thread::sync::Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    n.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
fn arc_clones_and_drops_commute_under_dpor() {
    let runs = |f: fn()| Checker::new().mode(Mode::Dpor).check(f).unwrap().executions;
    fn std_arc() {
        adders(2, 2, false)()
    }
    assert_eq!(runs(adders_instrumented_arc), runs(std_arc));
}

/// Which thread's drop frees an instrumented `Arc` (its value's destructor records it).
fn last_dropper() -> String {
    struct Tell(Arc<AtomicUsize>);
    impl Drop for Tell {
        fn drop(&mut self) {
            self.0.store(thread::current().id().0, Ordering::SeqCst);
        }
    }
    let who = Arc::new(AtomicUsize::new(usize::MAX));
    let shared = cmc_thread::sync::Arc::new(Tell(who.clone()));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let mine = shared.clone();
            thread::spawn(move || drop(mine))
        })
        .collect();
    drop(shared);
    for h in hs {
        h.join().unwrap();
    }
    format!("freed by thread {}", who.load(Ordering::SeqCst))
}

#[test]
fn the_drop_that_frees_an_arc_conflicts_with_the_other_drops() {
    let (all, _) = final_states(
        Mode::Bounded {
            max_preemptions: 1000,
        },
        last_dropper,
    );
    let (reduced, _) = final_states(Mode::Dpor, last_dropper);
    assert_eq!(reduced, all);
    assert_eq!(all.len(), 3, "{all:?}");
}

#[test]
fn bounded_dpor_reaches_exactly_the_final_states_of_the_bounded_mode() {
    // Locks, channels, `Arc` counts and CAS loops as well as plain atomics (the generated
    // atomic programs are in `tests/weak_dpor.rs`), with weak memory (the default).
    let programs: [fn() -> String; 5] = [
        store_load_mix,
        adders_seen,
        locks_and_channels,
        cas_and_reader,
        last_dropper,
    ];
    for bound in 0..=2 {
        for program in programs {
            let (all, runs) = final_states(
                Mode::Bounded {
                    max_preemptions: bound,
                },
                program,
            );
            let (reduced, reduced_runs) = final_states(
                Mode::BoundedDpor {
                    max_preemptions: bound,
                    weak_reduction: false,
                },
                program,
            );
            assert_eq!(
                reduced, all,
                "bound {bound}: bounded DPOR missed or invented"
            );
            assert!(
                reduced_runs <= runs,
                "bound {bound}: {reduced_runs} vs {runs}"
            );
        }
    }
}
