//! The litmus table: for each case of `tests/litmus/cases.rs`, the outcomes the C++20 /
//! Rust model allows, and the outcomes reached by cmc-thread (sequentially consistent mode,
//! `weak_memory(false)`, and the default weak memory, both DPOR) and by loom 0.7
//! (exhaustive, capped at 60 s per case). Prints a markdown table, then what weak memory
//! costs cmc on three small programs (executions and time, SC vs weak mode,
//! 100,000-execution budget);
//! run with `cargo bench -p cmc-thread --bench litmus` (`-- cost` for the second part only).

mod cmc_cases {
    #![allow(dead_code)]
    use cmc_thread::sync::atomic::{fence, AtomicUsize, Ordering};
    use cmc_thread::thread;
    use std::sync::Arc;
    include!("../tests/litmus/cases.rs");
}

mod loom_cases {
    #![allow(dead_code)]
    use loom::sync::atomic::{fence, AtomicUsize, Ordering};
    use loom::thread;
    use std::sync::Arc;
    include!("../tests/litmus/cases.rs");
}

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Outcomes = BTreeSet<Vec<usize>>;

fn set(outcomes: &[&[usize]]) -> Outcomes {
    outcomes.iter().map(|o| o.to_vec()).collect()
}

/// What one tool reached on one case.
struct Reached {
    outcomes: Outcomes,
    executions: u64,
    complete: bool,
    seconds: f64,
}

fn cmc(case: &cmc_cases::Case, weak: bool) -> Reached {
    let seen = Arc::new(Mutex::new(Outcomes::new()));
    let (sink, run, orders) = (seen.clone(), case.run, case.orders);
    let start = Instant::now();
    let stats = cmc_thread::Checker::new()
        .weak_memory(weak)
        .check(move || {
            let o = run(orders);
            sink.lock().unwrap().insert(o);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    let outcomes = seen.lock().unwrap().clone();
    Reached {
        outcomes,
        executions: stats.executions,
        complete: stats.complete,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn loom(case: &loom_cases::Case) -> Reached {
    let seen = Arc::new(Mutex::new(Outcomes::new()));
    let runs = Arc::new(Mutex::new(0u64));
    let (sink, count, run, orders) = (seen.clone(), runs.clone(), case.run, case.orders);
    let cap = Duration::from_secs(60);
    let mut builder = loom::model::Builder::new();
    builder.max_duration = Some(cap);
    let start = Instant::now();
    builder.check(move || {
        let o = run(orders);
        sink.lock().unwrap().insert(o);
        *count.lock().unwrap() += 1;
    });
    let seconds = start.elapsed().as_secs_f64();
    let outcomes = seen.lock().unwrap().clone();
    let executions = *runs.lock().unwrap();
    Reached {
        outcomes,
        executions,
        complete: seconds < cap.as_secs_f64(),
        seconds,
    }
}

fn digits(o: &[usize]) -> String {
    o.iter().map(|v| v.to_string()).collect()
}

fn list(s: &Outcomes) -> String {
    s.iter().map(|o| digits(o)).collect::<Vec<_>>().join(" ")
}

/// `all allowed`, or what is missing and what is forbidden.
fn cell(r: &Reached, allowed: &Outcomes) -> String {
    let missing = allowed - &r.outcomes;
    let forbidden = &r.outcomes - allowed;
    let mut parts = Vec::new();
    if missing.is_empty() {
        parts.push("all allowed".to_string());
    } else {
        parts.push(format!(
            "{} of {}; not reached: {}",
            r.outcomes.len() - forbidden.len(),
            allowed.len(),
            list(&missing)
        ));
    }
    if !forbidden.is_empty() {
        parts.push(format!("**FORBIDDEN reached: {}**", list(&forbidden)));
    }
    let cut = if r.complete {
        ""
    } else {
        ", cut by its time cap"
    };
    format!(
        "{} ({} runs, {:.2} s{cut})",
        parts.join("; "),
        r.executions,
        r.seconds
    )
}

/// `n` threads each doing `k` times a `fetch_add` (`rmw`) or a load then a store of the
/// value read plus the thread's index, on one atomic, with `order`.
fn counter(
    n: usize,
    k: usize,
    rmw: bool,
    order: cmc_thread::sync::atomic::Ordering,
) -> impl Fn() + Send + Sync + 'static {
    use cmc_thread::sync::atomic::AtomicUsize;
    move || {
        let a = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let a = a.clone();
                cmc_thread::thread::spawn(move || {
                    for _ in 0..k {
                        if rmw {
                            a.fetch_add(1, order);
                        } else {
                            let v = a.load(order);
                            a.store(v + i, order);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}

fn cost() {
    use cmc_thread::sync::atomic::Ordering;
    println!();
    println!(
        "| program | orderings | weak_memory(false): executions, ms | weak memory (default): executions, ms |"
    );
    println!("|---|---|---|---|");
    let programs = [
        ("3 threads x 3 fetch_add", 3, 3, true),
        ("2 threads x 2 load+store", 2, 2, false),
        ("3 threads x 2 load+store", 3, 2, false),
    ];
    for (name, n, k, rmw) in programs {
        for order in [Ordering::SeqCst, Ordering::Relaxed] {
            let run = |weak: bool| {
                let best = (0..3)
                    .map(|_| {
                        cmc_thread::Checker::new()
                            .weak_memory(weak)
                            .check(counter(n, k, rmw, order))
                            .unwrap_or_else(|f| panic!("{f}"))
                    })
                    .min_by_key(|s| s.elapsed)
                    .expect("three runs");
                let cut = if best.complete {
                    ""
                } else {
                    " (budget reached, incomplete)"
                };
                format!(
                    "{}{cut}, {:.1}",
                    best.executions,
                    best.elapsed.as_secs_f64() * 1000.0
                )
            };
            println!("| {name} | {order:?} | {} | {} |", run(false), run(true));
        }
    }
}

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    if filter.as_deref() == Some("cost") {
        cost();
        return;
    }
    println!("| test (outcome) | orderings | allowed by C++20 | cmc weak_memory(false) | cmc weak memory (default) | loom 0.7.3 |");
    println!("|---|---|---|---|---|---|");
    for (c, l) in cmc_cases::CASES.iter().zip(loom_cases::CASES) {
        if filter.as_deref().is_some_and(|f| !c.name.contains(f)) {
            continue;
        }
        let allowed = set(c.allowed);
        let (sc, weak, lo) = (cmc(c, false), cmc(c, true), loom(l));
        println!(
            "| {} ({}) | {} | {} | {} | {} | {} |",
            c.name,
            c.outcome,
            c.orders.label(),
            list(&allowed),
            cell(&sc, &allowed),
            cell(&weak, &allowed),
            cell(&lo, &allowed)
        );
    }
    if filter.is_none() {
        cost();
    }
}
