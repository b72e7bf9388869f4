//! loom's API as a loom suite uses it, on cmc: passing models pass, and a racy one fails
//! with cmc's report.

mod programs;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::{Arc, Notify};
use loom::thread;
use std::future::poll_fn;
use std::task::Poll;

#[test]
fn notify_wakes_a_waiter() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let flag = Arc::new(AtomicUsize::new(0));
        let t = {
            let (notify, flag) = (notify.clone(), flag.clone());
            thread::spawn(move || {
                flag.store(1, Release);
                notify.notify();
            })
        };
        notify.wait();
        assert_eq!(flag.load(Acquire), 1);
        t.join().unwrap();
    });
}

#[test]
fn block_on_parks_until_woken() {
    loom::model(|| {
        let waker = Arc::new(loom::future::AtomicWaker::new());
        let done = Arc::new(AtomicUsize::new(0));
        let t = {
            let (waker, done) = (waker.clone(), done.clone());
            thread::spawn(move || {
                done.store(1, Release);
                waker.wake();
            })
        };
        loom::future::block_on(poll_fn(|cx| {
            waker.register_by_ref(cx.waker());
            match done.load(Acquire) {
                1 => Poll::Ready(()),
                _ => Poll::Pending,
            }
        }));
        t.join().unwrap();
    });
}

#[test]
fn threads_may_share_an_rc() {
    // loom's spawn has no `Send` bound; a lost update through an `Rc` is still found.
    let failure = std::panic::catch_unwind(|| {
        loom::model(|| {
            let n = std::rc::Rc::new(AtomicUsize::new(0));
            let m = n.clone();
            let t = thread::spawn(move || m.store(m.load(Relaxed) + 1, Relaxed));
            n.store(n.load(Relaxed) + 1, Relaxed);
            t.join().unwrap();
            assert_eq!(n.load(Relaxed), 2);
        })
    });
    let message = failure.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("left: 1"), "{message}");
}

#[test]
#[should_panic(expected = "outside loom::model")]
fn spawn_outside_a_model_panics() {
    thread::spawn(|| ());
}

#[test]
fn block_on_may_poll_once_without_a_wake() {
    // The future is woken once, yet some execution polls it three times: the first wait
    // returns spuriously (as loom's may), the second is the wake.
    let polls_seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen = polls_seen.clone();
    loom::model(move || {
        let gate = Arc::new(AtomicUsize::new(0));
        let mut polls = 0;
        let n = loom::future::block_on(poll_fn(|cx| {
            if polls == 0 {
                let (gate, waker) = (gate.clone(), cx.waker().clone());
                thread::spawn(move || {
                    gate.store(1, Release);
                    waker.wake();
                });
            }
            polls += 1;
            match gate.load(Acquire) {
                1 => Poll::Ready(polls),
                _ => Poll::Pending,
            }
        }));
        seen.lock().unwrap().insert(n);
    });
    assert_eq!(*polls_seen.lock().unwrap(), [1, 2, 3].into());
}

loom::lazy_static! {
    static ref COUNT: AtomicUsize = AtomicUsize::new(0);
}

loom::thread_local! {
    static LOCAL: std::cell::Cell<usize> = std::cell::Cell::new(0);
}

#[test]
fn statics_and_thread_locals_are_per_execution() {
    loom::model(|| {
        assert_eq!(COUNT.fetch_add(1, SeqCst), 0);
        LOCAL.try_with(|l| l.set(l.get() + 1)).unwrap();
        assert_eq!(LOCAL.with(|l| l.get()), 1);
    });
}

#[test]
fn arc_through_a_raw_pointer() {
    loom::model(|| {
        let a = Arc::new(5);
        let raw = Arc::into_raw(a.clone());
        // SAFETY: `raw` comes from `into_raw` and is taken back once.
        let b = unsafe { Arc::from_raw(raw) };
        assert_eq!(*b, 5);
        assert_eq!(Arc::strong_count(&a), 2);
    });
}

#[test]
#[should_panic(expected = "data race")]
fn an_unsynchronised_write_is_a_data_race() {
    loom::model(|| {
        let cell = Arc::new(UnsafeCell::new(0));
        let t = {
            let cell = cell.clone();
            thread::spawn(move || cell.with_mut(|p| unsafe { *p = 1 }))
        };
        cell.with(|p| unsafe { *p });
        t.join().unwrap();
    });
}

#[test]
fn a_stop_at_max_permutations_is_what_the_model_asks() {
    // As in loom, the model's own limit ends the exploration without a failure (cmc says
    // on stderr that it is not complete); cmc's default budget cut fails (tests/budget.rs).
    let mut builder = loom::model::Builder::new();
    builder.max_permutations = Some(1);
    builder.check(programs::two_increments);
}

#[test]
fn loom_only_atomic_methods() {
    loom::model(|| {
        let mut n = AtomicUsize::new(1);
        assert_eq!(n.compare_and_swap(1, 2, AcqRel), 1);
        assert_eq!(n.compare_and_swap(1, 3, AcqRel), 2);
        n.with_mut(|v| *v += 1);
        // SAFETY: no other thread exists.
        assert_eq!(unsafe { n.unsync_load() }, 3);
        assert_eq!(n.update(AcqRel, Acquire, |v| v * 10), 3);
        assert_eq!(
            n.try_update(AcqRel, Acquire, |v| (v < 30).then_some(0)),
            Err(30)
        );
        assert_eq!(n.try_update(AcqRel, Acquire, |v| Some(v + 1)), Ok(30));
        assert_eq!(n.load(Relaxed), 31);
    });
}

#[test]
fn arc_counts_through_a_pointer() {
    // A waker vtable's pattern (tokio's `waker_ref`): the count moves by pointer only.
    loom::model(|| {
        let a = Arc::new(5);
        let ptr = Arc::as_ptr(&a);
        // SAFETY: `ptr` points to `a`'s live allocation; the reference added is removed below.
        unsafe { Arc::increment_strong_count(ptr) };
        assert_eq!(Arc::strong_count(&a), 2);
        // SAFETY: removes the reference added above.
        unsafe { Arc::decrement_strong_count(ptr) };
        assert_eq!(Arc::strong_count(&a), 1);
    });
}

#[test]
#[should_panic(expected = "leak")]
fn a_reference_added_by_pointer_and_never_removed_leaks() {
    loom::model(|| {
        let a = Arc::new(5);
        // SAFETY: `a` is live; the added reference is never removed (the leak reported).
        unsafe { Arc::increment_strong_count(Arc::as_ptr(&a)) };
    });
}

#[test]
fn lock_guards_print_their_value() {
    loom::model(|| {
        let lock = loom::sync::RwLock::new(7);
        assert_eq!(format!("{:?}", lock.read().unwrap()), "7");
        assert_eq!(format!("{:?}", lock.write().unwrap()), "7");
    });
}

#[test]
fn cell_pointers_read_and_write() {
    loom::model(|| {
        let cell = UnsafeCell::new(1);
        let p = cell.get_mut();
        // SAFETY: no other access to the cell exists while `p` is used.
        unsafe { *p.deref() += 1 };
        p.with(|p| unsafe { *p += 1 });
        // SAFETY: no write is in progress.
        assert_eq!(unsafe { *cell.get().deref() }, 3);
        assert_eq!(cell.get().with(|p| unsafe { *p }), 3);
    });
}

#[test]
#[should_panic(expected = "data race")]
fn an_unsynchronised_get_mut_is_a_data_race() {
    loom::model(|| {
        let cell = Arc::new(UnsafeCell::new(0));
        let t = {
            let cell = cell.clone();
            // SAFETY: the write is the race this model is about; the value is an integer.
            thread::spawn(move || unsafe { *cell.get_mut().deref() = 1 })
        };
        // SAFETY: as above.
        let _ = unsafe { *cell.get().deref() };
        t.join().unwrap();
    });
}

#[test]
fn rereading_an_unchanged_atomic_is_no_livelock() {
    // tokio's Notify test creates 33 futures, each reading the same state: straight-line
    // re-reads of a location nobody writes, then the model goes on.
    loom::model(|| {
        let state = AtomicUsize::new(0);
        for _ in 0..40 {
            assert_eq!(state.load(Acquire), 0);
        }
        state.store(1, Release);
    });
}

#[test]
#[should_panic(expected = "livelock")]
fn a_spin_nobody_ends_is_a_livelock() {
    loom::model(|| {
        let ready = Arc::new(AtomicUsize::new(0));
        let t = {
            let ready = ready.clone();
            thread::spawn(move || while ready.load(Acquire) == 0 {})
        };
        t.join().unwrap();
    });
}
