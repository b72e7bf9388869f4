//! Weak memory's eventual-visibility rule is a bound on what is explored (a thread that
//! has read one replaced store `spin_limit + 1` times in a row reads the latest store
//! next), so a check says when it applied: `Stats::stale_reads_cut` counts its cuts and
//! the verdict's text names them. A check it never applied to says nothing of it.

use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use cmc_thread::sync::Arc;
use cmc_thread::{thread, Checker, Mode, Stats};
use std::collections::BTreeSet;

const MODES: [Mode; 3] = [
    Mode::Bounded { max_preemptions: 2 },
    Mode::Dpor,
    Mode::BoundedDpor {
        max_preemptions: 2,
        weak_reduction: false,
    },
];

fn check(mode: Mode, model: fn()) -> Stats {
    let stats = Checker::new()
        .mode(mode)
        .check(model)
        .unwrap_or_else(|f| panic!("{mode}: {f}"));
    assert!(stats.complete, "{mode}: {stats}");
    stats
}

/// Waits for a flag while counting its polls in a counter the setter also counts in: the
/// count is a write on every iteration, so the spin detector never blocks the loop, and the
/// `Acquire` load may read the flag's initial `false` after `true` was stored, as often as
/// the loop runs (DPOR too offers it: the setter's count orders its store before the load).
fn wait_while_counting_polls() {
    let flag = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(AtomicUsize::new(0));
    let setter = {
        let (flag, polls) = (flag.clone(), polls.clone());
        thread::spawn(move || {
            flag.store(true, Release);
            polls.fetch_add(1, Relaxed);
        })
    };
    while !flag.load(Acquire) {
        polls.fetch_add(1, Relaxed);
        thread::yield_now();
    }
    setter.join().unwrap();
}

/// Reads the flag once: a stale read is possible, a run of them is not.
fn read_the_flag_once() {
    let flag = Arc::new(AtomicBool::new(false));
    let setter = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(true, Release))
    };
    let _ = flag.load(Acquire);
    setter.join().unwrap();
}

#[test]
fn a_check_where_stale_reads_were_cut_says_so() {
    for mode in MODES {
        let stats = check(mode, wait_while_counting_polls);
        println!("{mode}: {stats}");
        assert!(stats.stale_reads_cut > 0, "{mode}: {stats:?}");
        let text = stats.to_string();
        assert!(
            text.starts_with(&format!("{} executions, complete; ", stats.executions))
                && text.contains(&format!(
                    "stale reads bounded {} time(s)",
                    stats.stale_reads_cut
                ))
                && text.contains("were not explored"),
            "{mode}: {text}"
        );
    }
}

#[test]
fn a_check_the_rule_never_applied_to_says_nothing_of_it() {
    for mode in MODES {
        let stats = check(mode, read_the_flag_once);
        assert_eq!(stats.stale_reads_cut, 0, "{mode}");
        assert_eq!(stats.stale_read_note(), None, "{mode}");
        assert_eq!(
            stats.to_string(),
            format!("{} executions, complete", stats.executions)
        );
    }
}

/// The pairs of values thread 0 reads from an atomic just before and just after a yield
/// while thread 1 stores to it, with `yield_refreshes` on or off.
fn reads_around_a_yield(yield_refreshes: bool) -> (Stats, BTreeSet<(usize, usize)>) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let record = seen.clone();
    let stats = Checker::new()
        .mode(Mode::Bounded { max_preemptions: 2 })
        .yield_refreshes(yield_refreshes)
        .check(move || {
            let x = Arc::new(AtomicUsize::new(0));
            let writer = {
                let x = x.clone();
                thread::spawn(move || x.store(1, Relaxed))
            };
            let before = x.load(Relaxed);
            thread::yield_now();
            let after = x.load(Relaxed);
            record.lock().unwrap().insert((before, after));
            writer.join().unwrap();
        })
        .unwrap();
    let outcomes = seen.lock().unwrap().clone();
    (stats, outcomes)
}

#[test]
fn with_yield_refreshes_a_load_after_a_yield_skips_what_its_thread_saw_before() {
    let (all, every_outcome) = reads_around_a_yield(false);
    let (refreshed, outcomes) = reads_around_a_yield(true);
    assert_eq!(all.stale_reads_cut, 0, "{all}");
    // Reading 0 twice needs the store to come after the second load once the rule is on:
    // the same outcomes, in fewer executions, and the cut executions are counted.
    assert_eq!(outcomes, every_outcome);
    assert_eq!(every_outcome, BTreeSet::from([(0, 0), (0, 1), (1, 1)]));
    assert!(refreshed.executions < all.executions, "{refreshed} / {all}");
    assert!(refreshed.stale_reads_cut > 0, "{refreshed}");
}
