//! The weak memory model against RC11: for each litmus test, the outcomes cmc's weak mode
//! reaches (DPOR, complete) must be exactly the outcomes an independent axiomatic
//! enumerator of RC11 allows (`rc11/model.rs`): no forbidden outcome reached, no allowed one
//! missed. RC11 forbids load buffering (`sb ∪ rf` acyclic) and makes `SeqCst` accesses
//! ordered among themselves but not fences, so mixed-order store buffering reaches `0, 0`.
//! `cargo test --release -p cmc-thread --test rc11 -- --nocapture` prints the table.

#[path = "rc11/model.rs"]
mod model;
mod programs;

use cmc_thread::sync::atomic::{fence, AtomicU64};
use cmc_thread::Checker;
use model::{allowed, Instr, Instr::*, Litmus};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{self, *};

const X: usize = 0;
const Y: usize = 1;

fn sb(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus::new(
        name,
        [
            vec![Store(X, 1, store), Load(Y, load)],
            vec![Store(Y, 1, store), Load(X, load)],
        ],
    )
}

fn mp(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus::new(
        name,
        [
            vec![Store(X, 1, Relaxed), Store(Y, 1, store)],
            vec![Load(Y, load), Load(X, Relaxed)],
        ],
    )
}

fn iriw(store: Ordering, load: Ordering, name: &'static str) -> Litmus {
    Litmus::new(
        name,
        [
            vec![Store(X, 1, store)],
            vec![Store(Y, 1, store)],
            vec![Load(X, load), Load(Y, load)],
            vec![Load(Y, load), Load(X, load)],
        ],
    )
}

fn cases() -> Vec<Litmus> {
    vec![
        sb(Relaxed, Relaxed, "SB Relaxed"),
        sb(Release, Acquire, "SB Release/Acquire"),
        sb(SeqCst, SeqCst, "SB SeqCst"),
        sb(SeqCst, Relaxed, "SB SeqCst stores, Relaxed loads"),
        sb(SeqCst, Acquire, "SB SeqCst stores, Acquire loads"),
        sb(Relaxed, SeqCst, "SB Relaxed stores, SeqCst loads"),
        Litmus::new(
            "SB SeqCst / Relaxed threads",
            [
                vec![Store(X, 1, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, Relaxed), Load(X, Relaxed)],
            ],
        ),
        Litmus::new(
            "SB SeqCst / Relaxed + fence",
            [
                vec![Store(X, 1, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, Relaxed), Fence, Load(X, Relaxed)],
            ],
        ),
        Litmus::new(
            "SB Relaxed + fences",
            [
                vec![Store(X, 1, Relaxed), Fence, Load(Y, Relaxed)],
                vec![Store(Y, 1, Relaxed), Fence, Load(X, Relaxed)],
            ],
        ),
        mp(Relaxed, Relaxed, "MP Relaxed"),
        mp(Release, Acquire, "MP Release/Acquire"),
        mp(SeqCst, SeqCst, "MP SeqCst"),
        mp(SeqCst, Relaxed, "MP SeqCst store, Relaxed load"),
        Litmus::new(
            "LB Relaxed",
            [
                vec![Load(X, Relaxed), Store(Y, 1, Relaxed)],
                vec![Load(Y, Relaxed), Store(X, 1, Relaxed)],
            ],
        ),
        iriw(Relaxed, Relaxed, "IRIW Relaxed"),
        iriw(Release, Acquire, "IRIW Release/Acquire"),
        iriw(SeqCst, SeqCst, "IRIW SeqCst"),
        iriw(Relaxed, SeqCst, "IRIW Relaxed stores, SeqCst loads"),
        iriw(SeqCst, Acquire, "IRIW SeqCst stores, Acquire loads"),
        Litmus::new(
            "2+2W Relaxed (finals)",
            [
                vec![Store(X, 1, Relaxed), Store(Y, 2, Relaxed)],
                vec![Store(Y, 1, Relaxed), Store(X, 2, Relaxed)],
            ],
        )
        .with_finals(),
        Litmus::new(
            "2+2W SeqCst (finals)",
            [
                vec![Store(X, 1, SeqCst), Store(Y, 2, SeqCst)],
                vec![Store(Y, 1, SeqCst), Store(X, 2, SeqCst)],
            ],
        )
        .with_finals(),
        Litmus::new(
            "R SeqCst (load, finals)",
            [
                vec![Store(X, 1, SeqCst), Store(Y, 1, SeqCst)],
                vec![Store(Y, 2, SeqCst), Load(X, SeqCst)],
            ],
        )
        .with_finals(),
        Litmus::new(
            "RWC SeqCst",
            [
                vec![Store(X, 1, SeqCst)],
                vec![Load(X, SeqCst), Load(Y, SeqCst)],
                vec![Store(Y, 1, SeqCst), Load(X, SeqCst)],
            ],
        ),
        Litmus::new(
            "CoRR Relaxed",
            [
                vec![Store(X, 1, Relaxed)],
                vec![Load(X, Relaxed), Load(X, Relaxed)],
            ],
        ),
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
    let checker = Checker::new().weak_memory(true).max_executions(200_000);
    let (threads, locations, finals) = (&test.threads, test.locations, test.finals);
    programs::outcomes(test.name, checker, threads, locations, finals, run)
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
