//! Weak-memory DPOR against naive exploration on generated programs: for each program, the
//! outcomes DPOR reaches must be exactly those of the bounded mode with an unreachable
//! preemption bound (every schedule, every read and modification-order choice).
//!
//! DPOR in weak-memory mode leaves some write-then-access pairs out of its dependency
//! relation because a choice of the later access already covers their reversal (a load may
//! read an older store; a plain store may go before an earlier plain store in modification
//! order). These programs mix loads, stores, read-modify-writes, `compare_exchange` and
//! `SeqCst` fences over two atomics with every ordering, so a pair left out wrongly shows
//! up as an outcome DPOR misses.
//!
//! The same programs check bounded DPOR (`Mode::BoundedDpor`) against the bounded mode with
//! the same preemption bound, which runs every schedule within it: a backtrack point the
//! bound cuts without its compensation shows up as an outcome the reduced search misses.

mod programs;

use cmc_thread::sync::atomic::{fence, AtomicU64};
use cmc_thread::{Checker, Mode, Rng};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{self, *};

#[derive(Clone, Copy, Debug)]
enum Instr {
    Load(usize, Ordering),
    Store(usize, u64, Ordering),
    FetchAdd(usize, u64, Ordering),
    /// `compare_exchange(expected, new)`, success ordering (failure: its load part).
    Cas(usize, u64, u64, Ordering),
    Fence,
}

/// One instruction over `locations` atomics; stored values are unique per program
/// (`fresh`), so an outcome tells which store a load read.
fn instr(rng: &mut Rng, locations: usize, fresh: &mut u64) -> Instr {
    let loc = rng.below(locations as u64) as usize;
    let pick = |rng: &mut Rng, of: &[Ordering]| of[rng.below(of.len() as u64) as usize];
    *fresh += 1;
    match rng.below(10) {
        0..=3 => Instr::Load(loc, pick(rng, &[Relaxed, Acquire, SeqCst])),
        4..=6 => Instr::Store(loc, *fresh, pick(rng, &[Relaxed, Release, SeqCst])),
        7 => Instr::FetchAdd(
            loc,
            10,
            pick(rng, &[Relaxed, Acquire, Release, AcqRel, SeqCst]),
        ),
        8 => Instr::Cas(
            loc,
            rng.below(2),
            *fresh,
            pick(rng, &[Relaxed, AcqRel, SeqCst]),
        ),
        _ => Instr::Fence,
    }
}

fn failure_order(success: Ordering) -> Ordering {
    match success {
        AcqRel => Acquire,
        Release => Relaxed,
        o => o,
    }
}

/// Runs one thread's instructions; returns what each read observed.
fn run(instrs: &[Instr], memory: &[AtomicU64]) -> Vec<u64> {
    let mut seen = Vec::new();
    for &i in instrs {
        match i {
            Instr::Load(l, o) => seen.push(memory[l].load(o)),
            Instr::Store(l, v, o) => memory[l].store(v, o),
            Instr::FetchAdd(l, v, o) => seen.push(memory[l].fetch_add(v, o)),
            Instr::Cas(l, old, new, o) => {
                let r = memory[l].compare_exchange(old, new, o, failure_order(o));
                seen.push(r.unwrap_or_else(|v| v + 1000));
            }
            Instr::Fence => fence(SeqCst),
        }
    }
    seen
}

/// The distinct outcomes (values read in thread order, then final values) of `threads`
/// under `mode` with weak memory, and the number of executions.
fn outcomes(threads: &[Vec<Instr>], mode: Mode) -> (BTreeSet<Vec<u64>>, u64) {
    let checker = Checker::new()
        .mode(mode)
        .weak_memory(true)
        // Straight-line re-reads of one atomic are not a spin loop here.
        .spin_limit(16)
        .max_executions(2_000_000);
    programs::outcomes(&mode.to_string(), checker, threads, 2, true, run)
}

/// A program of `threads` threads with 1 to `max_len` instructions each, from `seed`.
fn program(seed: u64, threads: usize, max_len: u64) -> Vec<Vec<Instr>> {
    let mut rng = Rng::new(seed);
    let mut fresh = 0;
    (0..threads)
        .map(|_| {
            let len = 1 + rng.below(max_len);
            (0..len).map(|_| instr(&mut rng, 2, &mut fresh)).collect()
        })
        .collect()
}

fn dpor_matches_naive(seeds: std::ops::Range<u64>, threads: usize, max_len: u64) {
    let naive = Mode::Bounded {
        max_preemptions: 1000,
    };
    let (mut dpor_runs, mut naive_runs) = (0, 0);
    for seed in seeds {
        let p = program(seed, threads, max_len);
        let (all, n) = outcomes(&p, naive);
        let (reduced, d) = outcomes(&p, Mode::Dpor);
        assert_eq!(
            reduced, all,
            "seed {seed}: DPOR differs from naive on {p:?}"
        );
        dpor_runs += d;
        naive_runs += n;
    }
    println!("{threads} threads: DPOR {dpor_runs} executions, naive {naive_runs}");
    assert!(dpor_runs < naive_runs);
}

#[test]
fn weak_dpor_reaches_the_outcomes_of_naive_exploration_with_two_threads() {
    dpor_matches_naive(0..120, 2, 4);
}

#[test]
fn weak_dpor_reaches_the_outcomes_of_naive_exploration_with_three_threads() {
    dpor_matches_naive(1000..1008, 3, 2);
}

/// Bounded DPOR reaches exactly the outcomes of the bounded mode, bound by bound.
fn bounded_dpor_matches_bounded(seeds: std::ops::Range<u64>, threads: usize, max_len: u64) {
    for bound in 0..=2 {
        let (mut reduced_runs, mut all_runs) = (0, 0);
        for seed in seeds.clone() {
            let p = program(seed, threads, max_len);
            let (all, n) = outcomes(
                &p,
                Mode::Bounded {
                    max_preemptions: bound,
                },
            );
            let (reduced, d) = outcomes(
                &p,
                Mode::BoundedDpor {
                    max_preemptions: bound,
                    weak_reduction: false,
                },
            );
            assert_eq!(
                reduced, all,
                "seed {seed}, bound {bound}: bounded DPOR differs from the bounded mode on {p:?}"
            );
            reduced_runs += d;
            all_runs += n;
        }
        println!(
            "{threads} threads, bound {bound}: bounded DPOR {reduced_runs} executions, bounded {all_runs}"
        );
        assert!(reduced_runs < all_runs);
    }
}

#[test]
fn bounded_dpor_reaches_the_outcomes_of_the_bounded_mode_with_two_threads() {
    bounded_dpor_matches_bounded(0..60, 2, 4);
}

#[test]
fn bounded_dpor_reaches_the_outcomes_of_the_bounded_mode_with_three_threads() {
    bounded_dpor_matches_bounded(1000..1010, 3, 2);
}

#[test]
fn the_weak_reduction_explores_a_stale_read_only_where_its_reordering_fits_the_bound() {
    // Thread 1 loads x twice; thread 2 stores 3. Outcome `0, 3` (then x = 3, y = 0): the
    // first load reads 0, the second 3. The bounded mode reaches it without a preemption
    // (thread 2 first, thread 1's first load reading the older store); as a reordering it
    // needs thread 1 preempted between its loads.
    let p = vec![
        vec![Instr::Load(0, Acquire), Instr::Load(0, Relaxed)],
        vec![Instr::Store(0, 3, Release)],
    ];
    let stale_then_latest = vec![0, 3, 3, 0];
    let reaches = |mode| outcomes(&p, mode).0.contains(&stale_then_latest);
    let bounded_dpor = |max_preemptions, weak_reduction| Mode::BoundedDpor {
        max_preemptions,
        weak_reduction,
    };
    assert!(reaches(Mode::Bounded { max_preemptions: 0 }));
    assert!(reaches(bounded_dpor(0, false)));
    assert!(!reaches(bounded_dpor(0, true)));
    assert!(reaches(bounded_dpor(1, true)));
}
