//! The benchmark set of `tests/structures` under cmc's defaults (DPOR, weak memory): every
//! correct structure is explored completely without a failure, and every buggy one fails
//! with the failure its weakened ordering causes (a data race on the payload, or for the
//! deque an element taken twice). The same verdicts hold in bounded DPOR (as loom's
//! `preemption_bound` runs), with and without its weak-memory reduction. `cargo test
//! --release -p cmc-thread --test lock_free -- --nocapture` prints the execution counts.

#[macro_use]
mod structures;

fn nothing() {}

structures!(set, cmc_thread, super::nothing);

use cmc_thread::{Checker, Mode, Stop};

/// The program of `structure`.
fn program(structure: &str) -> set::Program {
    set::programs()
        .into_iter()
        .find(|p| p.structure.starts_with(structure))
        .unwrap_or_else(|| panic!("no structure named {structure}"))
}

fn assert_correct(structure: &str) {
    let p = program(structure);
    let stats = Checker::new()
        .check(p.correct)
        .unwrap_or_else(|f| panic!("{structure}: {f}"));
    assert!(stats.complete, "{structure}: {stats:?}");
    println!(
        "{structure}, correct: {} executions, complete",
        stats.executions
    );
}

/// Checks that the buggy version of `structure` fails, and returns how.
fn buggy_failure(structure: &str) -> Stop {
    let p = program(structure);
    let f = Checker::new()
        .check(p.buggy)
        .expect_err("the buggy version must fail");
    println!(
        "{structure}, {}: found after {} executions",
        p.bug, f.executions
    );
    f.stop
}

fn assert_races_on_payload(structure: &str) {
    let stop = buggy_failure(structure);
    assert!(
        matches!(&stop, Stop::DataRace { object, .. } if object.starts_with("UnsafeCell")),
        "{structure}: {stop:?}"
    );
}

#[test]
fn the_correct_chase_lev_deque_never_takes_an_element_twice() {
    assert_correct("Chase-Lev");
}

#[test]
fn a_seqcst_store_in_place_of_the_fence_takes_an_element_twice() {
    let stop = buggy_failure("Chase-Lev");
    assert!(
        matches!(&stop, Stop::Panic { message, .. } if message.contains("taken twice")),
        "{stop:?}"
    );
}

#[test]
fn the_michael_scott_queue_passes() {
    assert_correct("Michael-Scott");
}

#[test]
fn a_relaxed_link_in_the_michael_scott_queue_races_on_the_value() {
    assert_races_on_payload("Michael-Scott");
}

#[test]
fn the_vyukov_mpmc_queue_passes() {
    assert_correct("MPMC");
}

#[test]
fn a_relaxed_publishing_store_in_the_mpmc_queue_races_on_the_payload() {
    assert_races_on_payload("MPMC");
}

#[test]
fn the_spsc_ring_passes() {
    assert_correct("SPSC");
}

#[test]
fn a_relaxed_tail_store_in_the_spsc_ring_races_on_the_slot() {
    assert_races_on_payload("SPSC");
}

#[test]
fn the_mcs_lock_passes() {
    assert_correct("MCS");
}

#[test]
fn a_relaxed_hand_over_in_the_mcs_lock_races_on_the_counter() {
    assert_races_on_payload("MCS");
}

#[test]
fn the_linux_rwlock_passes() {
    assert_correct("Linux rwlock");
}

#[test]
fn a_relaxed_write_unlock_in_the_linux_rwlock_races_on_the_data() {
    assert_races_on_payload("Linux rwlock");
}

#[test]
fn bounded_dpor_gives_the_same_verdicts_with_and_without_its_weak_reduction() {
    for weak_reduction in [false, true] {
        let mode = Mode::BoundedDpor {
            max_preemptions: 2,
            weak_reduction,
        };
        for p in set::programs() {
            let stats = Checker::new()
                .mode(mode)
                .check(p.correct)
                .unwrap_or_else(|f| panic!("{} under {mode}: {f}", p.structure));
            assert!(stats.complete, "{} under {mode}: {stats:?}", p.structure);
            let f = Checker::new()
                .mode(mode)
                .check(p.buggy)
                .expect_err("the buggy version must fail");
            assert!(
                matches!(&f.stop, Stop::DataRace { .. } | Stop::Panic { .. }),
                "{} under {mode}: {}",
                p.structure,
                f
            );
            println!(
                "{} under {mode}: correct {} executions, {} found after {}",
                p.structure, stats.executions, p.bug, f.executions
            );
        }
    }
}
