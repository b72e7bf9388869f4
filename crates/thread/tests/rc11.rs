//! The weak memory model against RC11: for each litmus test, the outcomes cmc's weak mode
//! reaches (DPOR, complete) must be exactly the outcomes an independent axiomatic
//! enumerator of RC11 allows (`rc11/model.rs`): no forbidden outcome reached, no allowed one
//! missed. RC11 forbids load buffering (`sb ∪ rf` acyclic) and makes `SeqCst` accesses
//! ordered among themselves but not fences, so mixed-order store buffering reaches `0, 0`.
//! `cargo test --release -p cmc-thread --test rc11 -- --nocapture` prints the table.

#[path = "rc11/model.rs"]
mod model;

use cmc_thread::sync::atomic::{fence, AtomicU64};
use cmc_thread::{thread, Checker};
use model::{allowed, Instr, Instr::*, Litmus};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{self, *};
use std::sync::{Arc, Mutex};

const X: usize = 0;
const Y: usize = 1;

fn sb(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus {
        name,
        threads: vec![
            vec![Store(X, 1, store), Load(Y, load)],
            vec![Store(Y, 1, store), Load(X, load)],
        ],
        locations: 2,
        finals: false,
    }
}

fn mp(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus {
        name,
        threads: vec![
            vec![Store(X, 1, Relaxed), Store(Y, 1, store)],
            vec![Load(Y, load), Load(X, Relaxed)],
        ],
        locations: 2,
        finals: false,
    }
}

fn iriw(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus {
        name,
        threads: vec![
            vec![Store(X, 1, store)],
            vec![Store(Y, 1, store)],
            vec![Load(X, load), Load(Y, load)],
            vec![Load(Y, load), Load(X, load)],
        ],
        locations: 2,
        finals: false,
    }
}

fn cases() -> Vec<Litmus> {
    vec![
        sb(Relaxed, Relaxed, "SB Relaxed"),
        sb(Release, Acquire, "SB Release/Acquire"),
        sb(SeqCst, SeqCst, "SB SeqCst"),
        sb(SeqCst, Relaxed, "SB SeqCst stores, Relaxed loads"),
        sb(SeqCst, Acquire, "SB SeqCst stores, Acquire loads"),
        sb(Relaxed, SeqCst, "SB Relaxed stores, SeqCst loads"),
        Litmus {
            name: "SB SeqCst / Relaxed threads",
            threads: vec![
                vec![Store(X, 1, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, Relaxed), Load(X, Relaxed)],
            ],
            locations: 2,
            finals: false,
        },
        Litmus {
            name: "SB SeqCst / Relaxed + fence",
            threads: vec![
                vec![Store(X, 1, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, Relaxed), Fence, Load(X, Relaxed)],
            ],
            locations: 2,
            finals: false,
        },
        Litmus {
            name: "SB Relaxed + fences",
            threads: vec![
                vec![Store(X, 1, Relaxed), Fence, Load(Y, Relaxed)],
                vec![Store(Y, 1, Relaxed), Fence, Load(X, Relaxed)],
            ],
            locations: 2,
            finals: false,
        },
        mp(Relaxed, Relaxed, "MP Relaxed"),
        mp(Release, Acquire, "MP Release/Acquire"),
        mp(SeqCst, SeqCst, "MP SeqCst"),
        mp(SeqCst, Relaxed, "MP SeqCst store, Relaxed load"),
        Litmus {
            name: "LB Relaxed",
            threads: vec![
                vec![Load(X, Relaxed), Store(Y, 1, Relaxed)],
                vec![Load(Y, Relaxed), Store(X, 1, Relaxed)],
            ],
            locations: 2,
            finals: false,
        },
        iriw(Relaxed, Relaxed, "IRIW Relaxed"),
        iriw(Release, Acquire, "IRIW Release/Acquire"),
        iriw(SeqCst, SeqCst, "IRIW SeqCst"),
        iriw(Relaxed, SeqCst, "IRIW Relaxed stores, SeqCst loads"),
        iriw(SeqCst, Acquire, "IRIW SeqCst stores, Acquire loads"),
        Litmus {
            name: "2+2W Relaxed (finals)",
            threads: vec![
                vec![Store(X, 1, Relaxed), Store(Y, 2, Relaxed)],
                vec![Store(Y, 1, Relaxed), Store(X, 2, Relaxed)],
            ],
            locations: 2,
            finals: true,
        },
        Litmus {
            name: "2+2W SeqCst (finals)",
            threads: vec![
                vec![Store(X, 1, SeqCst), Store(Y, 2, SeqCst)],
                vec![Store(Y, 1, SeqCst), Store(X, 2, SeqCst)],
            ],
            locations: 2,
            finals: true,
        },
        Litmus {
            name: "R SeqCst (load, finals)",
            threads: vec![
                vec![Store(X, 1, SeqCst), Store(Y, 1, SeqCst)],
                vec![Store(Y, 2, SeqCst), Load(X, SeqCst)],
            ],
            locations: 2,
            finals: true,
        },
        Litmus {
            name: "RWC SeqCst",
            threads: vec![
                vec![Store(X, 1, SeqCst)],
                vec![Load(X, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, SeqCst), Load(X, SeqCst)],
            ],
            locations: 2,
            finals: false,
        },
        Litmus {
            name: "CoRR Relaxed",
            threads: vec![
                vec![Store(X, 1, Relaxed)],
                vec![Load(X, Relaxed), Load(X, Relaxed)],
            ],
            locations: 1,
            finals: false,
        },
    ]
}

fn run(instrs: &[Instr], memory: &[AtomicU64]) -> Vec<u64> {
    let mut loaded = Vec::new();
    for &i in instrs {
        match i {
            Store(l, v, o) => memory[l].store(v, o),
            Load(l, o) => loaded.push(memory[l].load(o)),
            Fence => fence(SeqCst),
        }
    }
    loaded
}

/// Every outcome cmc's weak mode reaches for `test` (DPOR, checked complete), with the
/// number of executions.
fn reached(test: &Litmus) -> (BTreeSet<Vec<u64>>, u64) {
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let (threads, locations, finals) = (test.threads.clone(), test.locations, test.finals);
    let sink = seen.clone();
    let stats = Checker::new()
        .weak_memory(true)
        .max_executions(200_000)
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
                outcome.extend(memory.iter().map(|m| m.load(SeqCst)));
            }
            sink.lock().unwrap().insert(outcome);
        })
        .unwrap_or_else(|f| panic!("{}: {f}", test.name));
    assert!(stats.complete, "{}: {stats:?}", test.name);
    let outcomes = seen.lock().unwrap().clone();
    (outcomes, stats.executions)
}

fn show(set: &BTreeSet<Vec<u64>>) -> String {
    let items: Vec<String> = set
        .iter()
        .map(|o| o.iter().map(u64::to_string).collect())
        .collect();
    if items.is_empty() {
        "-".to_string()
    } else {
        items.join(" ")
    }
}

#[test]
fn weak_mode_reaches_exactly_the_rc11_outcomes() {
    let mut wrong = Vec::new();
    println!(
        "| test | allowed by RC11 | cmc weak: executions | forbidden reached | allowed missed |"
    );
    println!("|---|---|---:|---|---|");
    for test in cases() {
        let allowed = allowed(&test);
        let (got, executions) = reached(&test);
        let forbidden: BTreeSet<_> = got.difference(&allowed).cloned().collect();
        let missed: BTreeSet<_> = allowed.difference(&got).cloned().collect();
        println!(
            "| {} | {} | {executions} | {} | {} |",
            test.name,
            show(&allowed),
            show(&forbidden),
            show(&missed)
        );
        if !forbidden.is_empty() || !missed.is_empty() {
            wrong.push(test.name);
        }
    }
    assert!(wrong.is_empty(), "differ from RC11: {wrong:?}");
}

#[test]
fn the_enumerator_knows_the_classic_verdicts() {
    // Guards against an enumerator that allows everything or nothing.
    let forbids = |t: Litmus, o: &[u64]| !allowed(&t).contains(o);
    assert!(forbids(sb(SeqCst, SeqCst, "SB"), &[0, 0]));
    assert!(!forbids(sb(Relaxed, Relaxed, "SB"), &[0, 0]));
    assert!(!forbids(sb(SeqCst, Relaxed, "SB"), &[0, 0]));
    assert!(forbids(mp(Release, Acquire, "MP"), &[1, 0]));
    assert!(!forbids(mp(Relaxed, Relaxed, "MP"), &[1, 0]));
    assert!(forbids(iriw(SeqCst, SeqCst, "IRIW"), &[1, 0, 1, 0]));
    assert!(!forbids(iriw(Release, Acquire, "IRIW"), &[1, 0, 1, 0]));
}
