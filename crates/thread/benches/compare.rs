//! cmc vs loom vs shuttle on the same programs (issue 6, item 7). Run with
//! `cargo bench -p cmc-thread --bench compare`; prints one table.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::time::{Duration, Instant};

static RUNS: AtomicU64 = AtomicU64::new(0);

/// The benchmark programs, written once against `$k::{thread, sync}`.
macro_rules! programs {
    ($m:ident, $k:ident) => {
        mod $m {
            use super::RUNS;
            use $k::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::SeqCst};
            use $k::sync::{Arc, Mutex};
            use $k::thread;

            fn count() {
                RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }

            pub fn lost_update() {
                count();
                let n = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let n = n.clone();
                        thread::spawn(move || {
                            let v = n.load(SeqCst);
                            n.store(v + 1, SeqCst);
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(n.load(SeqCst), 2, "lost update");
            }

            /// Index-based Treiber stack; `pop` reads head and next then stores (no CAS).
            pub fn treiber_racy_pop() {
                count();
                // Nodes 1 and 2 (0 = null); stack: head -> 2 -> 1.
                let next = Arc::new([
                    AtomicUsize::new(0),
                    AtomicUsize::new(0),
                    AtomicUsize::new(1),
                ]);
                let head = Arc::new(AtomicUsize::new(2));
                let pop = |head: &AtomicUsize, next: &[AtomicUsize; 3]| {
                    let h = head.load(SeqCst);
                    if h == 0 {
                        return 0;
                    }
                    let n = next[h].load(SeqCst);
                    head.store(n, SeqCst);
                    h
                };
                let (h2, n2) = (head.clone(), next.clone());
                let t = thread::spawn(move || pop(&h2, &n2));
                let a = pop(&head, &next);
                let b = t.join().unwrap();
                assert!(a != b || a == 0, "node {a} popped twice");
            }

            /// Writer stores 1 then 2; the reader fails if it sees 0 then 1 (needs 2 preemptions).
            pub fn two_preemptions() {
                count();
                let x = Arc::new(AtomicUsize::new(0));
                let (xw, xr) = (x.clone(), x.clone());
                let w = thread::spawn(move || {
                    xw.store(1, SeqCst);
                    xw.store(2, SeqCst);
                });
                let r = thread::spawn(move || {
                    let a = xr.load(SeqCst);
                    let b = xr.load(SeqCst);
                    assert!(!(a == 0 && b == 1), "reader saw 0 then 1");
                });
                w.join().unwrap();
                r.join().unwrap();
            }

            pub fn abba_deadlock() {
                count();
                let a = Arc::new(Mutex::new(0));
                let b = Arc::new(Mutex::new(0));
                let (a2, b2) = (a.clone(), b.clone());
                let t = thread::spawn(move || {
                    let _y = b2.lock().unwrap();
                    let _x = a2.lock().unwrap();
                });
                {
                    let _x = a.lock().unwrap();
                    let _y = b.lock().unwrap();
                }
                t.join().unwrap();
            }

            /// A queue whose size counter is updated after the lock is released: `size()` can
            /// be observed negative after a pop that succeeded (not linearizable).
            pub fn queue_size() {
                count();
                let q = Arc::new((Mutex::new(Vec::new()), AtomicIsize::new(0)));
                let q2 = q.clone();
                let t = thread::spawn(move || {
                    q2.0.lock().unwrap().push(1);
                    q2.1.fetch_add(1, SeqCst);
                });
                let popped = q.0.lock().unwrap().pop();
                if popped.is_some() {
                    q.1.fetch_sub(1, SeqCst);
                    assert!(q.1.load(SeqCst) >= 0, "size() returned a negative size");
                }
                t.join().unwrap();
            }

            /// PCT depth 1: use before initialisation (the initialising thread is slow).
            pub fn pct_depth1() {
                count();
                let ready = Arc::new(AtomicUsize::new(0));
                let r2 = ready.clone();
                let t = thread::spawn(move || {
                    for _ in 0..3 {
                        r2.load(SeqCst);
                    }
                    r2.store(1, SeqCst);
                });
                let seen = ready.load(SeqCst);
                t.join().unwrap();
                assert_eq!(seen, 1, "used before initialisation");
            }

            /// PCT depth 2: T2 must read y before T1 writes it, and x after T1 writes it.
            pub fn pct_depth2() {
                count();
                let x = Arc::new(AtomicUsize::new(0));
                let y = Arc::new(AtomicUsize::new(0));
                let (x1, y1, x2, y2) = (x.clone(), y.clone(), x.clone(), y.clone());
                let t1 = thread::spawn(move || {
                    for _ in 0..3 {
                        x1.load(SeqCst);
                    }
                    x1.store(1, SeqCst);
                    for _ in 0..3 {
                        x1.load(SeqCst);
                    }
                    y1.store(1, SeqCst);
                });
                let t2 = thread::spawn(move || {
                    let b = y2.load(SeqCst);
                    for _ in 0..3 {
                        y2.load(SeqCst);
                    }
                    let a = x2.load(SeqCst);
                    assert!(!(b == 0 && a == 1), "ordering bug: x written, y not yet");
                });
                t1.join().unwrap();
                t2.join().unwrap();
            }

            fn workers(threads: usize, ops: usize, rmw: bool) {
                count();
                let n = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..threads)
                    .map(|i| {
                        let n = n.clone();
                        thread::spawn(move || {
                            for _ in 0..ops {
                                if rmw {
                                    n.fetch_add(1, SeqCst);
                                } else {
                                    n.store(i, SeqCst);
                                    n.load(SeqCst);
                                }
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
            }

            pub fn add_2x2() {
                workers(2, 2, true)
            }
            pub fn add_2x3() {
                workers(2, 3, true)
            }
            pub fn add_3x2() {
                workers(3, 2, true)
            }
            pub fn store_load_3x2() {
                workers(3, 1, false)
            }
            pub fn add_3x3() {
                workers(3, 3, true)
            }
        }
    };
}

programs!(p_cmc, cmc_thread);
programs!(p_loom, loom);
programs!(p_shuttle, shuttle);

struct Row {
    program: &'static str,
    tool: String,
    found: String,
    schedules: u64,
    seconds: f64,
}

const LOOM_LIMIT: Duration = Duration::from_secs(20);
const BUDGET: usize = 100_000;

fn run_cmc(program: &'static str, mode: cmc_thread::Mode, f: fn()) -> Row {
    let start = Instant::now();
    let r = cmc_thread::Checker::new()
        .mode(mode)
        .max_executions(BUDGET as u64)
        .max_steps(1000)
        .check(f);
    let seconds = start.elapsed().as_secs_f64();
    let (found, schedules) = match r {
        Ok(s) => (
            if s.complete {
                "no (complete)".into()
            } else {
                "no (budget)".into()
            },
            s.executions,
        ),
        Err(f) => {
            eprintln!("--- cmc report for {program} ---\n{f}");
            ("yes".to_string(), f.executions)
        }
    };
    Row {
        program,
        tool: format!("cmc {mode}"),
        found,
        schedules,
        seconds,
    }
}

fn run_other(program: &'static str, tool: &str, check: impl FnOnce()) -> Row {
    RUNS.store(0, StdOrdering::Relaxed);
    let start = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(check));
    let seconds = start.elapsed().as_secs_f64();
    let found = match r {
        Err(_) => "yes".to_string(),
        Ok(()) if tool.starts_with("loom") && seconds >= LOOM_LIMIT.as_secs_f64() => {
            format!("did not finish in {} s", LOOM_LIMIT.as_secs())
        }
        Ok(()) => "no".to_string(),
    };
    Row {
        program,
        tool: tool.to_string(),
        found,
        schedules: RUNS.load(StdOrdering::Relaxed),
        seconds,
    }
}

fn loom(bound: Option<usize>, f: fn()) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = bound;
    b.max_duration = Some(LOOM_LIMIT);
    b.check(f);
}

/// A program's name and its cmc, loom and shuttle versions.
type Program = (&'static str, fn(), fn(), fn());

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    std::panic::set_hook(Box::new(|_| {}));
    let bugs: [Program; 7] = [
        (
            "lost update counter",
            p_cmc::lost_update,
            p_loom::lost_update,
            p_shuttle::lost_update,
        ),
        (
            "Treiber stack racy pop",
            p_cmc::treiber_racy_pop,
            p_loom::treiber_racy_pop,
            p_shuttle::treiber_racy_pop,
        ),
        (
            "writer 1,2 / reader (2 preemptions)",
            p_cmc::two_preemptions,
            p_loom::two_preemptions,
            p_shuttle::two_preemptions,
        ),
        (
            "ABBA deadlock",
            p_cmc::abba_deadlock,
            p_loom::abba_deadlock,
            p_shuttle::abba_deadlock,
        ),
        (
            "queue size() not linearizable",
            p_cmc::queue_size,
            p_loom::queue_size,
            p_shuttle::queue_size,
        ),
        (
            "PCT order violation (d=1)",
            p_cmc::pct_depth1,
            p_loom::pct_depth1,
            p_shuttle::pct_depth1,
        ),
        (
            "PCT ordering bug (d=2)",
            p_cmc::pct_depth2,
            p_loom::pct_depth2,
            p_shuttle::pct_depth2,
        ),
    ];
    let mut rows = Vec::new();
    for (name, c, l, s) in bugs {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        rows.push(run_cmc(
            name,
            cmc_thread::Mode::Bounded { max_preemptions: 3 },
            c,
        ));
        rows.push(run_cmc(name, cmc_thread::Mode::Dpor, c));
        rows.push(run_cmc(
            name,
            cmc_thread::Mode::Pct { seed: 1, depth: 3 },
            c,
        ));
        rows.push(run_other(name, "loom (preemption bound 3)", || {
            loom(Some(3), l)
        }));
        rows.push(run_other(name, "shuttle check_pct depth 3", || {
            shuttle::check_pct(s, BUDGET, 3)
        }));
        rows.push(run_other(name, "shuttle check_random", || {
            shuttle::check_random(s, BUDGET)
        }));
    }
    let counts: [Program; 5] = [
        (
            "exhaustive 2 x 2 fetch_add",
            p_cmc::add_2x2,
            p_loom::add_2x2,
            p_shuttle::add_2x2,
        ),
        (
            "exhaustive 2 x 3 fetch_add",
            p_cmc::add_2x3,
            p_loom::add_2x3,
            p_shuttle::add_2x3,
        ),
        (
            "exhaustive 3 x 2 fetch_add",
            p_cmc::add_3x2,
            p_loom::add_3x2,
            p_shuttle::add_3x2,
        ),
        (
            "exhaustive 3 x 2 store/load",
            p_cmc::store_load_3x2,
            p_loom::store_load_3x2,
            p_shuttle::store_load_3x2,
        ),
        (
            "exhaustive 3 x 3 fetch_add",
            p_cmc::add_3x3,
            p_loom::add_3x3,
            p_shuttle::add_3x3,
        ),
    ];
    for (name, c, l, s) in counts {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        rows.push(run_cmc(name, cmc_thread::Mode::Dpor, c));
        rows.push(run_other(name, "loom (uncapped)", || loom(None, l)));
        rows.push(run_other(name, "shuttle check_dfs (cap 1M)", || {
            shuttle::check_dfs(s, Some(1_000_000))
        }));
    }
    print_table(&rows);
}

fn print_table(rows: &[Row]) {
    println!("| program | tool | bug found? | schedules | wall s | schedules/s | schedules vs cmc first row |");
    println!("|---|---|---|---:|---:|---:|---:|");
    let mut base = (None, 0u64);
    for r in rows {
        if base.0 != Some(r.program) {
            base = (Some(r.program), r.schedules.max(1));
        }
        let rate = r.schedules as f64 / r.seconds.max(1e-9);
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.0} | {:.2}x |",
            r.program,
            r.tool,
            r.found,
            r.schedules,
            r.seconds,
            rate,
            r.schedules as f64 / base.1 as f64
        );
    }
}
