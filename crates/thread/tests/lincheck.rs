//! Linearizability checks: a queue whose `size()` is not linearizable, a Treiber stack with a
//! racy pop, and a correct lock-based queue that passes.

mod targets;

use cmc_thread::lincheck::{Lincheck, Scenario};
use cmc_thread::sync::Mutex;
use cmc_thread::Stop;
use std::collections::VecDeque;
use targets::*;

#[test]
fn queue_size_is_not_linearizable_and_the_report_shows_it() {
    let f = sized_queue().check().unwrap_err();
    let text = f.to_string();
    assert!(
        matches!(&f.failure.stop, Stop::Panic { message, .. } if message.contains("not linearizable")),
        "{text}"
    );
    assert!(text.contains("= Invalid execution results ="), "{text}");
    assert!(text.contains("| Thread 0 (init, post)"), "{text}");
    assert!(text.contains("Size: Size("), "{text}");
    // The interleaving names each operation with its result above its switch points.
    assert!(
        text.contains("= The following interleaving leads to the error ="),
        "{text}"
    );
    assert!(text.contains("fetch_add(AtomicIsize#"), "{text}");
    // Minimised: removing any operation makes the failure disappear.
    assert!(f.scenario.len() <= f.generated.len());
    for smaller in f.scenario.reductions() {
        assert!(sized_queue().check_scenario(&smaller).is_ok(), "{smaller}");
    }
    // The printed schedule replays the failure of the minimised scenario.
    let again = sized_queue()
        .replay(&f.scenario, &f.failure.schedule.to_string())
        .unwrap_err();
    assert_eq!(again.schedule, f.failure.schedule);
    // Same seed, same result.
    let g = sized_queue().check().unwrap_err();
    assert_eq!((g.scenario, g.executions), (f.scenario, f.executions));
}

#[test]
fn a_lock_based_queue_is_linearizable() {
    let stats = Lincheck::new(
        SeqQueue::default(),
        || Mutex::new(VecDeque::new()),
        |q: &Mutex<VecDeque<u8>>, op: &QOp| {
            let mut q = q.lock().unwrap();
            match op {
                QOp::Push(v) => {
                    q.push_back(*v);
                    QRet::Pushed
                }
                QOp::Pop => QRet::Popped(q.pop_front()),
                QOp::Size => QRet::Size(q.len() as isize),
            }
        },
        queue_op,
    )
    .scenarios(10)
    .check()
    .unwrap();
    assert_eq!(stats.scenarios, 10);
    assert!(stats.executions > 10, "{stats:?}");
}

#[test]
fn treiber_stack_racy_pop_is_not_linearizable() {
    let lincheck = treiber;
    let f = lincheck().check().unwrap_err();
    let text = f.to_string();
    assert!(text.contains("not linearizable"), "{text}");
    // The minimal failure pops one element twice: two pops and at most two pushes.
    assert!(f.scenario.len() <= 4, "{text}");
    // A hand-written scenario fails too and is reported with its results.
    let s = Scenario {
        init: vec![SOp::Push(1), SOp::Push(2)],
        threads: vec![vec![SOp::Pop], vec![SOp::Pop]],
        post: vec![],
    };
    let f = lincheck().check_scenario(&s).unwrap_err();
    assert!(f.to_string().contains("Pop: Some("), "{f}");
}
