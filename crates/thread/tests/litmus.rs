//! Weak memory (`Checker::weak_memory(true)`) on the litmus tests of `litmus/cases.rs`:
//! the outcomes reached are exactly the allowed ones minus the documented unexplored ones
//! (so no forbidden outcome, the "no false alarm" property), in DPOR and in the
//! preemption-bounded mode; the default mode reaches exactly the SeqCst outcomes.

mod litmus {
    #![allow(dead_code)]
    use cmc_thread::sync::atomic::{fence, AtomicUsize, Ordering};
    use cmc_thread::thread;
    use std::sync::Arc;
    include!("litmus/cases.rs");
}

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use cmc_thread::{thread, Checker, Mode, Stop};
use litmus::{Case, Orders, CASES};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

type Outcomes = BTreeSet<Vec<usize>>;

/// Every outcome `checker` reaches on `case` (which must pass and be explored completely).
fn reached(checker: Checker, case: &Case) -> Outcomes {
    let seen = Arc::new(Mutex::new(Outcomes::new()));
    let (sink, run, orders) = (seen.clone(), case.run, case.orders);
    let stats = checker
        .check(move || {
            let outcome = run(orders);
            sink.lock().unwrap().insert(outcome);
        })
        .unwrap_or_else(|f| panic!("{} ({:?}) failed:\n{f}", case.name, orders));
    assert!(
        stats.complete,
        "{} ({:?}) cut by the budget",
        case.name, orders
    );
    let outcomes = seen.lock().unwrap().clone();
    outcomes
}

fn set(outcomes: &[&[usize]]) -> Outcomes {
    outcomes.iter().map(|o| o.to_vec()).collect()
}

/// The outcomes a case's weak-memory exploration must reach: the allowed ones it explores.
fn expected_weak(case: &Case) -> Outcomes {
    &set(case.allowed) - &set(case.unexplored)
}

fn check_every_case(mode: Mode) {
    for case in CASES {
        let got = reached(Checker::new().mode(mode).weak_memory(true), case);
        let forbidden: Outcomes = &got - &set(case.allowed);
        assert!(
            forbidden.is_empty(),
            "{} ({:?}): forbidden outcomes {forbidden:?}",
            case.name,
            case.orders
        );
        assert_eq!(
            got,
            expected_weak(case),
            "{} ({:?}) under {mode}",
            case.name,
            case.orders
        );
    }
}

#[test]
fn weak_dpor_reaches_every_explored_allowed_outcome_and_no_forbidden_one() {
    check_every_case(Mode::Dpor);
}

#[test]
fn weak_bounded_reaches_the_same_outcomes_as_weak_dpor() {
    check_every_case(Mode::Bounded { max_preemptions: 2 });
}

#[test]
fn weak_bounded_dpor_reaches_the_same_outcomes_with_and_without_its_weak_reduction() {
    for weak_reduction in [false, true] {
        check_every_case(Mode::BoundedDpor {
            max_preemptions: 2,
            weak_reduction,
        });
    }
}

#[test]
fn the_seqcst_mode_reaches_exactly_the_seqcst_outcomes_whatever_the_ordering() {
    for case in CASES {
        let sc = CASES
            .iter()
            .find(|c| c.name == case.name && c.orders == Orders::SeqCst);
        let Some(sc) = sc else { continue };
        assert_eq!(
            reached(Checker::new().weak_memory(false), case),
            set(sc.allowed),
            "{} ({:?})",
            case.name,
            case.orders
        );
    }
}

#[test]
fn the_weak_outcomes_are_explored_at_all() {
    // A guard against a weak mode that quietly reads only the latest store: these four
    // outcomes are impossible under SeqCst and must be reached.
    let weak_only: [(&str, Orders, &[usize]); 5] = [
        ("SB", Orders::Relaxed, &[0, 0]),
        ("2+2W", Orders::ReleaseAcquire, &[1, 1]),
        ("MP", Orders::Relaxed, &[1, 0]),
        ("IRIW", Orders::ReleaseAcquire, &[1, 0, 1, 0]),
        ("WRC", Orders::Relaxed, &[1, 1, 0]),
    ];
    for (name, orders, outcome) in weak_only {
        let case = CASES
            .iter()
            .find(|c| c.name == name && c.orders == orders)
            .expect("case exists");
        let got = reached(Checker::new().weak_memory(true), case);
        assert!(got.contains(outcome), "{name} {orders:?}: {got:?}");
    }
}

fn relaxed_message_passing() {
    let data = Arc::new(AtomicUsize::named("data", 0));
    let flag = Arc::new(AtomicBool::named("flag", false));
    let (d, f) = (data.clone(), flag.clone());
    let writer = thread::spawn(move || {
        d.store(42, Ordering::Relaxed);
        f.store(true, Ordering::Relaxed);
    });
    if flag.load(Ordering::Relaxed) {
        assert_eq!(data.load(Ordering::Relaxed), 42, "flag set but data stale");
    }
    writer.join().unwrap();
}

#[test]
fn a_stale_read_is_reported_in_the_table_and_replayed_by_its_schedule() {
    let checker = Checker::new().weak_memory(true);
    let failure = checker.check(relaxed_message_passing).unwrap_err();
    let text = failure.to_string();
    assert!(text.contains("flag set but data stale"), "{text}");
    assert!(
        text.contains("load(data#") && text.contains(": 0 (stale: 1 newer store(s) not seen)"),
        "{text}"
    );
    let schedule = failure.schedule.to_string();
    assert!(schedule.contains('~'), "{schedule}");
    let again = checker
        .replay(&schedule, relaxed_message_passing)
        .unwrap_err();
    assert_eq!(again.stop, failure.stop);
    assert_eq!(again.schedule, failure.schedule);
    // Weak memory is the default: the default checker finds it too.
    assert!(Checker::new().check(relaxed_message_passing).is_err());
    // Without weak memory the same code is correct (every load reads the latest store).
    assert!(Checker::new()
        .weak_memory(false)
        .check(relaxed_message_passing)
        .is_ok());
}

#[test]
fn a_replayed_stale_read_that_is_not_possible_is_a_schedule_error() {
    let failure = Checker::new()
        .weak_memory(true)
        .replay("0,0,0~3", relaxed_message_passing)
        .unwrap_err();
    assert!(
        matches!(&failure.stop, Stop::Schedule(why) if why.contains("reads 3 stores back")),
        "{}",
        failure
    );
}

#[test]
fn relaxed_message_passing_races_on_the_data_and_release_acquire_does_not() {
    let run = |store: Ordering, load: Ordering| {
        Checker::new().weak_memory(true).check(move || {
            let data = Arc::new(UnsafeCell::new(0));
            let flag = Arc::new(AtomicBool::new(false));
            let (d, f) = (data.clone(), flag.clone());
            let writer = thread::spawn(move || {
                d.with_mut(|p| unsafe { *p = 1 });
                f.store(true, store);
            });
            if flag.load(load) {
                assert_eq!(data.with(|p| unsafe { *p }), 1);
            }
            writer.join().unwrap();
        })
    };
    let failure = run(Ordering::Relaxed, Ordering::Relaxed).unwrap_err();
    assert!(matches!(failure.stop, Stop::DataRace { .. }), "{failure}");
    assert!(run(Ordering::Release, Ordering::Acquire).is_ok());
}

#[test]
fn a_spin_loop_on_a_relaxed_flag_ends_instead_of_reporting_a_livelock() {
    // The loop may read the stale `false` a few times; eventual visibility then shows it the
    // store, so no execution is reported as a livelock or runs into the step bound.
    let stats = Checker::new()
        .weak_memory(true)
        .check(|| {
            let flag = Arc::new(AtomicBool::new(false));
            let f = flag.clone();
            let writer = thread::spawn(move || f.store(true, Ordering::Relaxed));
            while !flag.load(Ordering::Relaxed) {
                thread::yield_now();
            }
            writer.join().unwrap();
        })
        .unwrap();
    assert!(stats.complete);
}

#[test]
fn get_mut_starts_a_new_history_so_no_load_reads_a_value_from_before_it() {
    Checker::new()
        .weak_memory(true)
        .check(|| {
            let mut a = AtomicUsize::new(0);
            a.store(1, Ordering::Relaxed);
            *a.get_mut() = 5;
            let a = Arc::new(a);
            let b = a.clone();
            let t = thread::spawn(move || b.load(Ordering::Relaxed));
            assert_eq!(t.join().unwrap(), 5);
            assert_eq!(a.load(Ordering::Relaxed), 5);
        })
        .unwrap();
}

#[test]
fn a_read_modify_write_reads_the_latest_store_in_modification_order() {
    // The second thread has not seen the first one's store, so its store may go before it in
    // modification order although it runs later. After both joins, a load and a
    // read-modify-write must then both return the first thread's value, the latest one.
    for mode in [Mode::Dpor, Mode::Bounded { max_preemptions: 3 }] {
        let stats = Checker::new()
            .mode(mode)
            .weak_memory(true)
            .check(|| {
                let x = Arc::new(AtomicUsize::new(0));
                let (x1, x2) = (x.clone(), x.clone());
                let a = thread::spawn(move || x1.store(1, Ordering::Relaxed));
                let b = thread::spawn(move || {
                    x2.load(Ordering::Relaxed);
                    x2.store(2, Ordering::Relaxed)
                });
                a.join().unwrap();
                b.join().unwrap();
                let latest = x.load(Ordering::Relaxed);
                assert_eq!(x.fetch_add(0, Ordering::Relaxed), latest);
            })
            .unwrap_or_else(|f| panic!("{mode}: {f}"));
        assert!(stats.complete, "{mode}");
    }
}
