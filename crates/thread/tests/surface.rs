//! The std surface a real crate uses, and controlled time.

use cmc_thread::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use cmc_thread::sync::{mpsc, Arc, Barrier, LazyLock, Mutex, Weak};
use cmc_thread::time::{Duration, Instant};
use cmc_thread::{thread, Checker, Mode, Stop};
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

fn dpor() -> Checker {
    Checker::new().mode(Mode::Dpor)
}

/// Every value `model` records over an exhaustive exploration.
fn outcomes<T: Ord + Send + 'static>(
    model: impl Fn(&dyn Fn(T)) + Send + Sync + 'static,
) -> BTreeSet<T> {
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s = seen.clone();
    let stats = dpor()
        .check(move || {
            model(&|v| {
                s.lock().unwrap().insert(v);
            })
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete);
    let out = std::mem::take(&mut *seen.lock().unwrap());
    out
}

#[test]
fn builder_names_threads_and_gives_them_the_stack_asked_for() {
    dpor()
        .check(|| {
            assert_eq!(thread::current().name(), None);
            let h = thread::Builder::new()
                .name("worker".to_string())
                .stack_size(8 << 20)
                .spawn(|| {
                    // About 2 MiB of stack: more than the default 256 KiB coroutine stack.
                    let big = [1u8; 2 << 20];
                    let sum: u64 = std::hint::black_box(&big).iter().map(|&b| b as u64).sum();
                    (thread::current().name().map(String::from), sum)
                })
                .unwrap();
            assert_eq!(h.thread().name(), Some("worker"));
            assert_eq!(h.join().unwrap(), (Some("worker".to_string()), 2 << 20));
            let unnamed = thread::spawn(|| thread::current().name().map(String::from));
            assert_eq!(unnamed.join().unwrap(), None);
        })
        .unwrap();
}

#[test]
fn sleep_is_a_yield_point_that_advances_virtual_time() {
    // A switch at `sleep` is not a preemption: the bug is found with none.
    let f = Checker::new()
        .mode(Mode::Bounded { max_preemptions: 0 })
        .check(|| {
            let x = std::sync::Arc::new(AtomicUsize::new(0));
            let (x1, x2) = (x.clone(), x.clone());
            let a = thread::spawn(move || {
                x1.store(1, Ordering::SeqCst);
                thread::sleep(Duration::from_millis(10));
                x1.store(0, Ordering::SeqCst);
            });
            let b = thread::spawn(move || assert_eq!(x2.load(Ordering::SeqCst), 0, "saw 1"));
            a.join().unwrap();
            b.join().unwrap();
        })
        .unwrap_err();
    assert!(f.to_string().contains("switch (reason: sleep)"), "{f}");
    // Virtual time: zero at the start of every execution, advanced exactly by sleeps.
    dpor()
        .check(|| {
            let start = Instant::now();
            assert_eq!(start.elapsed(), Duration::ZERO);
            thread::sleep(Duration::from_secs(3600));
            assert_eq!(start.elapsed(), Duration::from_secs(3600));
        })
        .unwrap();
}

#[test]
fn park_timeout_explores_both_the_token_and_the_timeout() {
    let seen = outcomes(|record| {
        let main = thread::current();
        let h = thread::spawn(move || main.unpark());
        let start = Instant::now();
        thread::park_timeout(Duration::from_millis(5));
        record(start.elapsed().as_millis());
        h.join().unwrap();
    });
    // 0 ms: the token was there; 5 ms: it timed out first.
    assert_eq!(seen, BTreeSet::from([0, 5]));
}

#[test]
fn barrier_orders_writes_before_reads_and_has_one_leader() {
    let stats = dpor()
        .check(|| {
            let b = std::sync::Arc::new(Barrier::new(3));
            let cell = std::sync::Arc::new(cmc_thread::cell::UnsafeCell::new([0; 3]));
            let leaders = std::sync::Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..3)
                .map(|i| {
                    let (b, c, l) = (b.clone(), cell.clone(), leaders.clone());
                    thread::spawn(move || {
                        if i == 0 {
                            c.with_mut(|p| unsafe { (*p)[0] = 1 });
                        }
                        if b.wait().is_leader() {
                            l.fetch_add(1, Ordering::SeqCst);
                        }
                        // Ordered after the write by the barrier: not a race.
                        assert_eq!(c.with(|p| unsafe { (*p)[0] }), 1);
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(leaders.load(Ordering::SeqCst), 1);
        })
        .unwrap();
    assert!(stats.complete);
    let f = dpor()
        .check(|| {
            let b = std::sync::Arc::new(Barrier::new(3));
            let b1 = b.clone();
            let h = thread::spawn(move || {
                b1.wait();
            });
            b.wait();
            h.join().unwrap();
        })
        .unwrap_err();
    assert!(matches!(f.stop, Stop::Deadlock { .. }), "{f}");
    assert!(
        f.to_string().contains("with too few threads arriving"),
        "{f}"
    );
}

#[test]
fn weak_upgrade_races_with_the_last_drop() {
    let seen = outcomes(|record| {
        let a = Arc::new(5);
        let w: Weak<i32> = Arc::downgrade(&a);
        let h = thread::spawn(move || w.upgrade().map(|s| *s));
        drop(a);
        record(h.join().unwrap());
    });
    assert_eq!(seen, BTreeSet::from([None, Some(5)]));
    assert!(Weak::<i32>::new().upgrade().is_none());
}

static COUNTER: LazyLock<AtomicUsize> = LazyLock::new(|| AtomicUsize::new(0));

#[test]
fn a_lazy_static_is_initialised_again_in_every_execution() {
    let stats = dpor()
        .check(|| {
            let h = thread::spawn(|| COUNTER.fetch_add(1, Ordering::SeqCst));
            COUNTER.fetch_add(1, Ordering::SeqCst);
            h.join().unwrap();
            assert_eq!(COUNTER.load(Ordering::SeqCst), 2, "carried over");
        })
        .unwrap();
    assert!(stats.executions > 1, "{stats:?}");
}

#[test]
fn mutex_get_mut_and_into_inner() {
    let mut m = Mutex::new(1);
    *m.get_mut().unwrap() += 1;
    assert_eq!(m.into_inner().unwrap(), 2);
}

#[test]
fn recv_timeout_explores_the_message_and_the_timeout() {
    let seen = outcomes(|record| {
        let (tx, rx) = mpsc::channel();
        let h = thread::spawn(move || tx.send(7).unwrap());
        let r = rx.recv_timeout(Duration::from_millis(1));
        record(format!("{r:?}"));
        h.join().unwrap();
        // The sender is gone now: the message or the disconnection.
        record(format!(
            "then {:?}",
            rx.recv_timeout(Duration::from_millis(1))
        ));
    });
    let expected = [
        "Err(Timeout)",
        "Ok(7)",
        "then Err(Disconnected)",
        "then Ok(7)",
    ];
    assert_eq!(seen, expected.iter().map(|s| s.to_string()).collect());
}

/// The sender sets `done` once `send` returned; the receiver checks it before receiving.
fn rendezvous(bound: usize) -> impl Fn() + Send + Sync + 'static {
    move || {
        let (tx, rx) = mpsc::sync_channel(bound);
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let h = thread::spawn(move || {
            tx.send(1).unwrap();
            d.store(true, Ordering::SeqCst);
        });
        assert!(
            !done.load(Ordering::SeqCst),
            "send returned before the receive"
        );
        assert_eq!(rx.recv().unwrap(), 1);
        h.join().unwrap();
    }
}

#[test]
fn a_rendezvous_send_returns_only_after_the_receive() {
    let stats = dpor().check(rendezvous(0)).unwrap();
    assert!(stats.complete);
    // With room for one message the send can return first.
    let f = dpor().check(rendezvous(1)).unwrap_err();
    assert!(
        f.to_string().contains("send returned before the receive"),
        "{f}"
    );
    // A receiver dropped while the sender waits gives the message back.
    dpor()
        .check(|| {
            let (tx, rx) = mpsc::sync_channel(0);
            let h = thread::spawn(move || tx.send(3));
            drop(rx);
            let r = h.join().unwrap();
            assert_eq!(r.unwrap_err().0, 3);
        })
        .unwrap();
}

#[test]
fn atomic_ptr_exchanges_and_updates_as_the_integer_atomics_do() {
    static SLOTS: [u8; 2] = [0, 1];
    fn slot(at: usize) -> *mut u8 {
        &SLOTS[at] as *const u8 as *mut u8
    }
    // Two threads race to install their slot: exactly one wins, and the
    // other's failed exchange sees the winner; `fetch_update` then moves
    // the pointer to the other slot. Either thread may win.
    let winners = outcomes(|record| {
        let ptr = Arc::new(AtomicPtr::new(std::ptr::null_mut()));
        let racers: Vec<_> = (0..2)
            .map(|at| {
                let ptr = ptr.clone();
                thread::spawn(move || {
                    let null = std::ptr::null_mut();
                    let exchange = ptr.compare_exchange_weak(
                        null,
                        slot(at),
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    );
                    exchange.err().map(|seen| seen as usize)
                })
            })
            .collect();
        let seen: Vec<Option<usize>> = racers.into_iter().map(|h| h.join().unwrap()).collect();
        let winner = ptr.load(Ordering::SeqCst);
        assert_eq!(
            seen.iter().flatten().collect::<Vec<_>>(),
            [&(winner as usize)]
        );
        let at = SLOTS.iter().position(|s| std::ptr::eq(s, winner)).unwrap();
        let moved = ptr.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |p| {
            (p == winner).then_some(slot(1 - at))
        });
        assert_eq!(moved, Ok(winner));
        assert_eq!(
            ptr.swap(std::ptr::null_mut(), Ordering::SeqCst),
            slot(1 - at)
        );
        record(at);
    });
    assert_eq!(winners, BTreeSet::from([0, 1]));
}
