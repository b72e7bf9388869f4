//! loom's own tests (loom 0.7.3, `tests/` folder: every file but `futures.rs`, which uses
//! loom's future API; the tests of loom-only API are left out), rewritten against cmc's API
//! with each test's expected outcome kept: a loom `#[should_panic]` test must fail here with
//! the kind of failure named, every other one must pass. Adaptations: `Rc` becomes `Arc` (cmc's `spawn` needs
//! `Send`), loom's `Notify` becomes `thread::park`/`unpark`, the deprecated
//! `compare_and_swap` becomes `compare_exchange`. loom always explores weak memory, so
//! every test runs with `Checker::weak_memory(true)`. The README's table lists every test
//! ported and the ones not ported yet.

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize};
use cmc_thread::sync::mpsc::channel;
use cmc_thread::sync::{Arc, Condvar, Mutex};
use cmc_thread::{thread, Checker, Stop};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

/// The checker every ported test runs under: the defaults, with weak memory (as loom).
fn checker() -> Checker {
    Checker::new().weak_memory(true)
}

fn passes(model: impl Fn() + Send + Sync + 'static) {
    let stats = checker().check(model).unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete, "{stats:?}");
}

/// The model fails, with a stop `is_expected` accepts.
fn fails(model: impl Fn() + Send + Sync + 'static, is_expected: fn(&Stop) -> bool) {
    let f = checker().check(model).unwrap_err();
    assert!(is_expected(&f.stop), "unexpected failure kind:\n{f}");
}

/// Spawns two model threads, each running `body` on its own clone of
/// `shared` (cloned just before its spawn), then joins both in spawn order.
fn on_two_threads<T: Clone + Send + 'static>(
    shared: &T,
    body: impl Fn(T) + Clone + Send + 'static,
) {
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (shared, body) = (shared.clone(), body.clone());
            thread::spawn(move || body(shared))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Two model threads each add one to the lock's value through `add_one`;
/// then the lock, no longer shared, gives up its value (`into_inner`): 2.
fn two_increments_then_into_inner<L: Send + Sync + 'static>(
    lock: L,
    add_one: fn(&L),
    into_inner: fn(L) -> i32,
) {
    let lock = Arc::new(lock);
    on_two_threads(&lock, move |lock| add_one(&lock));
    let lock = Arc::try_unwrap(lock).ok().expect("both threads are joined");
    assert_eq!(into_inner(lock), 2);
}

fn race(s: &Stop) -> bool {
    matches!(s, Stop::DataRace { .. })
}

// ---- arc.rs ----

struct State {
    data: UnsafeCell<usize>,
    guard: AtomicBool,
}

impl Drop for State {
    fn drop(&mut self) {
        self.data.with(|ptr| unsafe { assert_eq!(1, *ptr) });
    }
}

fn state() -> Arc<State> {
    Arc::new(State {
        data: UnsafeCell::new(0),
        guard: AtomicBool::new(false),
    })
}

/// Spawns a thread that writes 1 into `num`'s data, then raises its guard
/// (release) and drops its clone of `num`.
fn spawn_publisher(num: &Arc<State>) {
    let num2 = num.clone();
    thread::spawn(move || {
        num2.data.with_mut(|ptr| unsafe { *ptr = 1 });
        num2.guard.store(true, Release);
        drop(num2);
    });
}

#[test]
fn arc_basic_usage() {
    passes(|| {
        let num = state();
        spawn_publisher(&num);
        loop {
            if num.guard.load(Acquire) {
                num.data.with(|ptr| unsafe { assert_eq!(1, *ptr) });
                break;
            }
            thread::yield_now();
        }
    });
}

#[test]
fn arc_sync_in_drop() {
    passes(|| {
        let num = state();
        spawn_publisher(&num);
        drop(num);
    });
}

#[test]
fn arc_detect_mem_leak() {
    fails(
        || std::mem::forget(state()),
        |s| matches!(s, Stop::Leak { .. }),
    );
}

#[test]
fn arc_try_unwrap_succeeds() {
    passes(|| {
        let num = Arc::new(0usize);
        let num2 = Arc::clone(&num);
        drop(num2);
        let _ = Arc::try_unwrap(num).unwrap();
    });
}

#[test]
fn arc_try_unwrap_fails() {
    passes(|| {
        let num = Arc::new(0usize);
        let num2 = Arc::clone(&num);
        let num = Arc::try_unwrap(num).unwrap_err();
        drop(num2);
        let _ = Arc::try_unwrap(num).unwrap();
    });
}

#[test]
fn arc_try_unwrap_multithreaded() {
    passes(|| {
        let num = Arc::new(0usize);
        let num2 = Arc::clone(&num);
        let thread = thread::spawn(move || {
            thread::park(); // loom: `can_drop.wait()`
            drop(num2);
        });
        let num = Arc::try_unwrap(num).unwrap_err();
        thread.thread().unpark(); // loom: `can_drop.notify()`
        thread.join().unwrap();
        let _ = Arc::try_unwrap(num).unwrap();
    });
}

// ---- condvar.rs ----

struct Inc {
    num: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl Inc {
    fn new() -> Inc {
        Inc {
            num: AtomicUsize::new(0),
            mutex: Mutex::new(()),
            condvar: Condvar::new(),
        }
    }

    fn wait(&self) {
        let mut guard = self.mutex.lock().unwrap();
        while self.num.load(SeqCst) != 1 {
            guard = self.condvar.wait(guard).unwrap();
        }
    }

    fn inc(&self, all: bool) {
        self.num.store(1, SeqCst);
        drop(self.mutex.lock().unwrap());
        if all {
            self.condvar.notify_all();
        } else {
            self.condvar.notify_one();
        }
    }
}

#[test]
fn condvar_notify_one() {
    passes(|| {
        let inc = Arc::new(Inc::new());
        let i = inc.clone();
        thread::spawn(move || i.inc(false));
        inc.wait();
    });
}

#[test]
fn condvar_notify_all() {
    passes(|| {
        let inc = Arc::new(Inc::new());
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let inc = inc.clone();
                thread::spawn(move || inc.wait())
            })
            .collect();
        thread::spawn(move || inc.inc(true)).join().expect("inc");
        for th in waiters {
            th.join().expect("waiter");
        }
    });
}

// ---- mutex.rs ----

#[test]
fn mutex_enforces_mutual_exclusion() {
    passes(|| {
        let data = Arc::new((Mutex::new(0), AtomicUsize::new(0)));
        on_two_threads(&data, |data| {
            let mut locked = data.0.lock().unwrap();
            let prev = data.1.fetch_add(1, SeqCst);
            assert_eq!(prev, *locked);
            *locked += 1;
        });
        let locked = data.0.lock().unwrap();
        assert_eq!(*locked, data.1.load(SeqCst));
    });
}

#[test]
fn mutex_establishes_seq_cst() {
    passes(|| {
        let data = Arc::new((UnsafeCell::new(0usize), Mutex::new(false)));
        let d = data.clone();
        thread::spawn(move || {
            d.0.with_mut(|v| unsafe { *v = 1 });
            *d.1.lock().unwrap() = true;
        });
        let flag = *data.1.lock().unwrap();
        if flag {
            assert_eq!(data.0.with(|v| unsafe { *v }), 1);
        }
    });
}

#[test]
fn mutex_into_inner() {
    passes(|| {
        two_increments_then_into_inner(
            Mutex::new(0),
            |lock| *lock.lock().unwrap() += 1,
            |lock| lock.into_inner().unwrap(),
        )
    });
}

// ---- deadlock.rs ----

#[test]
fn deadlock_two_mutexes() {
    fails(
        || {
            let a = Arc::new(Mutex::new(1));
            let b = Arc::new(Mutex::new(2));
            let (a1, b1) = (a.clone(), b.clone());
            let th1 = thread::spawn(move || {
                let a_lock = a1.lock().unwrap();
                let b_lock = b1.lock().unwrap();
                assert_eq!(*a_lock + *b_lock, 3);
            });
            let th2 = thread::spawn(move || {
                let b_lock = b.lock().unwrap();
                let a_lock = a.lock().unwrap();
                assert_eq!(*a_lock + *b_lock, 3);
            });
            th1.join().unwrap();
            th2.join().unwrap();
        },
        |s| matches!(s, Stop::Deadlock { .. }),
    );
}

// ---- unsafe_cell.rs ----

struct Chan {
    data: UnsafeCell<usize>,
    guard: AtomicUsize,
}

/// loom's `atomic_causality_*`: `set` writes then publishes with Release; `get` reads,
/// after an Acquire check of the guard when `checked`.
fn causality(checked: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let chan = Arc::new(Chan {
            data: UnsafeCell::new(0),
            guard: AtomicUsize::new(0),
        });
        let get = |chan: &Chan| {
            if checked && chan.guard.load(Acquire) == 0 {
                return;
            }
            chan.data.with(|v| assert_eq!(unsafe { *v }, 123));
        };
        let c = chan.clone();
        let th = thread::spawn(move || {
            c.data.with_mut(|v| unsafe { *v += 123 });
            c.guard.store(1, Release);
        });
        get(&chan);
        th.join().unwrap();
        get(&chan);
    }
}

#[test]
fn unsafe_cell_atomic_causality_success() {
    passes(causality(true));
}

#[test]
fn unsafe_cell_atomic_causality_fail() {
    // loom expects a panic; it is a race (or, in the schedule where the read comes first,
    // the assertion on the value).
    fails(causality(false), |s| {
        race(s) || matches!(s, Stop::Panic { .. })
    });
}

#[derive(Clone)]
struct Data(std::sync::Arc<UnsafeCell<usize>>);

impl Data {
    fn new(v: usize) -> Self {
        Data(std::sync::Arc::new(UnsafeCell::new(v)))
    }

    fn get(&self) -> usize {
        self.0.with(|v| unsafe { *v })
    }

    fn inc(&self) -> usize {
        self.0.with_mut(|v| unsafe {
            *v += 1;
            *v
        })
    }

    /// Runs `first` and `second` on two threads, each with its own handle on
    /// this cell, joins both in spawn order, and returns a third handle
    /// (all three handles are made before the first spawn).
    fn after_two_threads<A: Send + 'static, B: Send + 'static>(
        self,
        first: impl FnOnce(Data) -> A + Send + 'static,
        second: impl FnOnce(Data) -> B + Send + 'static,
    ) -> Data {
        let (y, z) = (self.clone(), self.clone());
        let th1 = thread::spawn(move || first(self));
        let th2 = thread::spawn(move || second(y));
        th1.join().unwrap();
        th2.join().unwrap();
        z
    }
}

#[test]
fn unsafe_cell_race_mut_mut_1() {
    fails(
        || {
            let x = Data::new(1);
            let y = x.clone();
            let th1 = thread::spawn(move || x.inc());
            y.inc();
            th1.join().unwrap();
            assert_eq!(4, y.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_mut_2() {
    fails(
        || {
            let x = Data::new(1);
            let z = x.after_two_threads(|x| x.inc(), |y| y.inc());
            assert_eq!(4, z.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_immut_1() {
    fails(
        || {
            let x = Data::new(1);
            let y = x.clone();
            let th1 = thread::spawn(move || assert_eq!(2, x.inc()));
            y.get();
            th1.join().unwrap();
            assert_eq!(3, y.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_immut_2() {
    fails(
        || {
            let x = Data::new(1);
            let y = x.clone();
            let th1 = thread::spawn(move || x.get());
            assert_eq!(2, y.inc());
            th1.join().unwrap();
            assert_eq!(3, y.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_immut_3() {
    fails(
        || {
            let x = Data::new(1);
            let z = x.after_two_threads(|x| assert_eq!(2, x.inc()), |y| y.get());
            assert_eq!(3, z.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_immut_4() {
    fails(
        || {
            let x = Data::new(1);
            let z = x.after_two_threads(|x| x.get(), |y| assert_eq!(2, y.inc()));
            assert_eq!(3, z.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_race_mut_immut_5() {
    fails(
        || {
            let x = Data::new(1);
            let z = x.after_two_threads(
                |x| x.get(),
                |y| {
                    assert_eq!(1, y.get());
                    assert_eq!(2, y.inc());
                },
            );
            assert_eq!(3, z.inc());
        },
        race,
    );
}

#[test]
fn unsafe_cell_ok_1() {
    passes(|| {
        let x = Data::new(1);
        assert_eq!(2, x.inc());
        let th1 = thread::spawn(move || {
            assert_eq!(3, x.inc());
            x
        });
        let x = th1.join().unwrap();
        assert_eq!(4, x.inc());
    });
}

#[test]
fn unsafe_cell_ok_2() {
    passes(|| {
        let x = Data::new(1);
        assert_eq!(1, x.get());
        assert_eq!(2, x.inc());
        let th1 = thread::spawn(move || {
            assert_eq!(2, x.get());
            assert_eq!(3, x.inc());
            x
        });
        let x = th1.join().unwrap();
        assert_eq!(3, x.get());
        assert_eq!(4, x.inc());
    });
}

#[test]
fn unsafe_cell_ok_3() {
    passes(|| {
        let x = Data::new(1);
        let y = x.clone();
        let th1 = thread::spawn(move || {
            assert_eq!(1, x.get());
            let z = x.clone();
            let th2 = thread::spawn(move || assert_eq!(1, z.get()));
            assert_eq!(1, x.get());
            th2.join().unwrap();
        });
        assert_eq!(1, y.get());
        th1.join().unwrap();
        assert_eq!(2, y.inc());
    });
}

#[test]
fn unsafe_cell_access_after_sync() {
    fails(
        || {
            let s1 = std::sync::Arc::new((AtomicUsize::new(0), UnsafeCell::new(0)));
            let s2 = s1.clone();
            thread::spawn(move || {
                s1.0.store(1, Release);
                s1.1.with_mut(|ptr| unsafe { *ptr = 1 });
            });
            if 1 == s2.0.load(Acquire) {
                s2.1.with_mut(|ptr| unsafe { *ptr = 2 });
            }
        },
        race,
    );
}

// ---- mpsc.rs ----

#[test]
fn mpsc_basic_sequential_usage() {
    passes(|| {
        let (s, r) = channel();
        s.send(5).unwrap();
        assert_eq!(r.recv().unwrap(), 5);
    });
}

#[test]
fn mpsc_basic_parallel_usage() {
    passes(|| {
        let (s, r) = channel();
        thread::spawn(move || s.send(5).unwrap());
        assert_eq!(r.recv().unwrap(), 5);
    });
}

#[test]
fn mpsc_commutative_senders() {
    passes(|| {
        let (s, r) = channel();
        let s2 = s.clone();
        thread::spawn(move || s.send(5).unwrap());
        thread::spawn(move || s2.send(6).unwrap());
        let mut val = r.recv().unwrap();
        val += r.recv().unwrap();
        assert_eq!(val, 11);
    });
}

/// loom's `non_commutative_senders{1,2}`: asserting which message comes first fails.
fn first_message_is(expected: i32) -> impl Fn() + Send + Sync + 'static {
    move || {
        let (s, r) = channel();
        let s2 = s.clone();
        thread::spawn(move || {
            let _ = s.send(5);
        });
        thread::spawn(move || {
            let _ = s2.send(6);
        });
        assert_eq!(r.recv().unwrap(), expected);
        let _ = r.recv();
    }
}

#[test]
fn mpsc_non_commutative_senders1() {
    fails(first_message_is(5), |s| matches!(s, Stop::Panic { .. }));
}

#[test]
fn mpsc_non_commutative_senders2() {
    fails(first_message_is(6), |s| matches!(s, Stop::Panic { .. }));
}

#[test]
fn mpsc_drop_receiver() {
    passes(|| {
        let (s, r) = channel();
        s.send(1).unwrap();
        s.send(2).unwrap();
        assert_eq!(r.recv().unwrap(), 1);
    });
}

// ---- smoke.rs, yield.rs ----

#[test]
fn smoke_checks_fail() {
    fails(
        || {
            let num = std::sync::Arc::new(AtomicUsize::new(0));
            on_two_threads(&num, |num| {
                let curr = num.load(Acquire);
                num.store(curr + 1, Release);
            });
            assert_eq!(2, num.load(Relaxed));
        },
        |s| matches!(s, Stop::Panic { .. }),
    );
}

#[test]
fn yield_completes() {
    passes(|| {
        let inc = std::sync::Arc::new(AtomicUsize::new(0));
        let i = inc.clone();
        thread::spawn(move || i.store(1, Relaxed));
        while inc.load(Relaxed) != 1 {
            thread::yield_now();
        }
    });
}

// ---- atomic_relaxed.rs ----

#[test]
fn atomic_relaxed_compare_and_swap() {
    passes(|| {
        let num = std::sync::Arc::new(AtomicUsize::new(0));
        on_two_threads(&num, |num| {
            let mut curr = num.load(Relaxed);
            while let Err(actual) = num.compare_exchange(curr, curr + 1, Relaxed, Relaxed) {
                curr = actual;
            }
        });
        assert_eq!(2, num.load(Relaxed));
    });
}

/// loom's `check_ordering_*`: `n1.0 = 1` then `n1.1 = 1` with `second_store`; the reader
/// checks `n1.0` once it saw `n1.1` with `flag_load`.
fn message_passing(
    second_store: std::sync::atomic::Ordering,
    flag_load: std::sync::atomic::Ordering,
) -> impl Fn() + Send + Sync + 'static {
    move || {
        let n1 = std::sync::Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let n2 = n1.clone();
        thread::spawn(move || {
            n1.0.store(1, Relaxed);
            n1.1.store(1, second_store);
        });
        if n2.1.load(flag_load) == 1 {
            assert_eq!(1, n2.0.load(Relaxed));
        }
    }
}

#[test]
fn atomic_relaxed_check_ordering_valid() {
    passes(message_passing(Release, Acquire));
}

#[test]
fn atomic_relaxed_check_ordering_invalid_1() {
    // loom: should_panic (a relaxed flag load may see the flag and a stale `n1.0`).
    fails(message_passing(Release, Relaxed), |s| {
        matches!(s, Stop::Panic { .. })
    });
}

#[test]
fn atomic_relaxed_check_ordering_invalid_2() {
    // As above, with both stores relaxed.
    fails(message_passing(Relaxed, Relaxed), |s| {
        matches!(s, Stop::Panic { .. })
    });
}

#[test]
fn atomic_relaxed_check_ordering_invalid_1_passes_without_weak_memory() {
    // With weak memory off (every access sequentially consistent) the stale value is never
    // read; the default checker has it on and finds the failure.
    assert!(Checker::new()
        .weak_memory(false)
        .check(message_passing(Release, Relaxed))
        .is_ok());
    assert!(Checker::new()
        .check(message_passing(Release, Relaxed))
        .is_err());
}

// ---- litmus.rs ----

#[test]
fn litmus_store_buffering() {
    // loom reaches (0, 0) with relaxed accesses, as the model allows; so does cmc's weak
    // mode, with the three SC outcomes.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let s = seen.clone();
    passes(move || {
        let x = std::sync::Arc::new(AtomicUsize::new(0));
        let y = std::sync::Arc::new(AtomicUsize::new(0));
        let (x1, y1) = (x.clone(), y.clone());
        let a = thread::spawn(move || {
            x1.store(1, Relaxed);
            y1.load(Relaxed)
        });
        y.store(1, Relaxed);
        let b = x.load(Relaxed);
        let a = a.join().unwrap();
        s.lock().unwrap().insert((a, b));
    });
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]));
}

// ---- thread_api.rs ----

#[test]
fn thread_api_initial_thread() {
    passes(|| {
        thread::current().id();
        assert_eq!(None, thread::current().name());
    });
}

#[test]
fn thread_api_many_joins() {
    passes(|| {
        let mutex = Arc::new(Mutex::new(()));
        let lock = mutex.lock().unwrap();
        let handles: Vec<_> = (1..3)
            .map(|_| {
                let mutex = mutex.clone();
                thread::spawn(move || drop(mutex.lock().unwrap()))
            })
            .collect();
        drop(lock);
        for handle in handles {
            let _ = handle.join();
        }
    });
}

#[test]
fn thread_api_alt_join() {
    passes(|| {
        let arcmut: Arc<Mutex<Option<thread::JoinHandle<()>>>> = Arc::new(Mutex::new(None));
        let lock = arcmut.lock().unwrap();
        let arcmut2 = arcmut.clone();
        let th1 = thread::spawn(|| {});
        let th2 = thread::spawn(move || {
            drop(arcmut2.lock().unwrap());
            let _ = th1.join();
        });
        let th3 = thread::spawn(move || {});
        drop(lock);
        let _ = th3.join();
        let _ = th2.join();
    });
}

#[test]
fn thread_api_threads_have_unique_ids() {
    passes(|| {
        let (tx, rx) = channel();
        let th1 = thread::spawn(move || tx.send(thread::current().id()));
        let id1 = rx.recv().unwrap();
        assert_eq!(th1.thread().id(), id1);
        assert_ne!(thread::current().id(), id1);
        let _ = th1.join();
        let (tx, rx) = channel();
        let th2 = thread::spawn(move || tx.send(thread::current().id()));
        let id2 = rx.recv().unwrap();
        assert_eq!(th2.thread().id(), id2);
        assert_ne!(thread::current().id(), id2);
        assert_ne!(id1, id2);
        let _ = th2.join();
    });
}

#[test]
fn thread_api_thread_names() {
    passes(|| {
        let name = || thread::current().name().map(|s| s.to_string());
        let (tx, rx) = channel();
        let th = thread::spawn(move || tx.send(name()));
        assert_eq!(None, rx.recv().unwrap());
        assert_eq!(None, th.thread().name());
        let _ = th.join();
        let (tx, rx) = channel();
        let th = thread::Builder::new()
            .spawn(move || tx.send(name()))
            .unwrap();
        assert_eq!(None, rx.recv().unwrap());
        assert_eq!(None, th.thread().name());
        let _ = th.join();
        let (tx, rx) = channel();
        let th = thread::Builder::new()
            .name("foobar".to_string())
            .spawn(move || tx.send(name()))
            .unwrap();
        assert_eq!(Some("foobar".to_string()), rx.recv().unwrap());
        assert_eq!(Some("foobar"), th.thread().name());
        let _ = th.join();
    });
}

#[test]
fn thread_api_thread_stack_size() {
    // Adaptation: loom asks for 2 x 2^16 bytes for a 2^16-word array (loom does not honour
    // the size); cmc gives the thread the stack it asks for, so it asks for enough.
    const STACK_SIZE: usize = 1 << 16;
    passes(|| {
        let body = || {
            std::hint::black_box(&mut [0usize; STACK_SIZE]);
        };
        thread::Builder::new()
            .stack_size(2 * STACK_SIZE * std::mem::size_of::<usize>())
            .spawn(body)
            .unwrap()
            .join()
            .unwrap()
    });
}

#[test]
fn thread_api_park_unpark() {
    passes(|| {
        thread::current().unpark();
        thread::park();
    });
}

// ---- thread_local.rs ----

#[test]
fn thread_local_per_thread() {
    cmc_thread::thread_local! {
        static THREAD_LOCAL: std::cell::RefCell<usize> = std::cell::RefCell::new(1);
    }
    fn do_test(n: usize) {
        THREAD_LOCAL.with(|local| assert_eq!(*local.borrow(), 1));
        THREAD_LOCAL.with(|local| {
            assert_eq!(*local.borrow(), 1);
            *local.borrow_mut() = n;
            assert_eq!(*local.borrow(), n);
        });
        THREAD_LOCAL.with(|local| assert_eq!(*local.borrow(), n));
    }
    passes(|| {
        let t1 = thread::spawn(|| do_test(2));
        let t2 = thread::spawn(|| do_test(3));
        do_test(4);
        t1.join().unwrap();
        t2.join().unwrap();
    });
}

#[test]
fn thread_local_nested_with() {
    cmc_thread::thread_local! {
        static LOCAL1: std::cell::RefCell<usize> = std::cell::RefCell::new(1);
        static LOCAL2: std::cell::RefCell<usize> = std::cell::RefCell::new(2);
    }
    passes(|| {
        LOCAL1.with(|l1| *l1.borrow_mut() = LOCAL2.with(|l2| *l2.borrow()));
    });
}

#[test]
fn thread_local_drop() {
    use std::sync::atomic::AtomicUsize as StdAtomic;
    static DROPS: StdAtomic = StdAtomic::new(0);
    struct CountDrops(bool);
    impl Drop for CountDrops {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Release);
        }
    }
    cmc_thread::thread_local! {
        static DROPPED_LOCAL: CountDrops = CountDrops(true);
    }
    passes(|| {
        // Adaptation: loom runs this model once; cmc also re-runs it to check determinism,
        // so the std counter is reset at the start of each run.
        DROPS.store(0, Release);
        thread::spawn(|| {
            DROPPED_LOCAL.with(|local| assert!(local.0));
            assert_eq!(DROPS.load(Acquire), 0);
        })
        .join()
        .unwrap();
        // The first thread's copy was dropped when it finished.
        assert_eq!(DROPS.load(Acquire), 1);
        thread::spawn(|| {
            DROPPED_LOCAL.with(|local| assert!(local.0));
            assert_eq!(DROPS.load(Acquire), 1);
        })
        .join()
        .unwrap();
        assert_eq!(DROPS.load(Acquire), 2);
        DROPPED_LOCAL.with(|local| assert!(local.0));
    });
    // The model's main thread's copy was dropped when it finished.
    assert_eq!(DROPS.load(Acquire), 3);
}

// ---- rwlock.rs, rwlock_regression1.rs ----

use cmc_thread::sync::{RwLock, TryLockError};

fn would_block<G>(r: Result<G, TryLockError<G>>) -> bool {
    matches!(r, Err(TryLockError::WouldBlock))
}

#[test]
fn rwlock_read_one() {
    passes(|| {
        let lock = Arc::new(RwLock::new(1));
        let c_lock = lock.clone();
        let n = lock.read().unwrap();
        assert_eq!(*n, 1);
        thread::spawn(move || assert!(c_lock.read().is_ok()))
            .join()
            .unwrap();
    });
}

/// Two threads take the lock (`read` or not), yield, release; the main thread writes.
fn two_then_write(read: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let lock = Arc::new(RwLock::new(1));
        for _ in 0..2 {
            let lock = lock.clone();
            thread::spawn(move || {
                if read {
                    let _l = lock.read().unwrap();
                    thread::yield_now();
                } else {
                    let _l = lock.write().unwrap();
                    thread::yield_now();
                }
            });
        }
        let _l = lock.write().unwrap();
        thread::yield_now();
    }
}

#[test]
fn rwlock_read_two_write_one() {
    passes(two_then_write(true));
}

#[test]
fn rwlock_write_three() {
    passes(two_then_write(false));
}

/// A write lock held makes `try_write` report that it would block.
fn write_then_try_write() {
    let lock = Arc::new(RwLock::new(1));
    let _l1 = lock.write().unwrap();
    assert!(would_block(lock.try_write()));
}

#[test]
fn rwlock_write_then_try_write() {
    passes(write_then_try_write);
}

#[test]
fn rwlock_write_then_try_read() {
    passes(|| {
        let lock = Arc::new(RwLock::new(1));
        let _l1 = lock.write().unwrap();
        assert!(would_block(lock.try_read()));
    });
}

#[test]
fn rwlock_read_then_try_write() {
    // As in loom, whose body takes a write lock despite the name.
    passes(write_then_try_write);
}

#[test]
fn rwlock_try_read() {
    passes(|| {
        let lock = RwLock::new(1);
        assert_eq!(*lock.try_read().unwrap(), 1);
    });
}

#[test]
fn rwlock_write() {
    passes(|| {
        let lock = RwLock::new(1);
        let mut n = lock.write().unwrap();
        *n = 2;
        assert!(lock.try_read().is_err());
    });
}

#[test]
fn rwlock_try_write() {
    passes(|| {
        let lock = RwLock::new(1);
        let n = lock.read().unwrap();
        assert_eq!(*n, 1);
        assert!(lock.try_write().is_err());
    });
}

#[test]
fn rwlock_into_inner() {
    passes(|| {
        two_increments_then_into_inner(
            RwLock::new(0),
            |lock| *lock.write().unwrap() += 1,
            |lock| lock.into_inner().unwrap(),
        )
    });
}

#[test]
fn rwlock_two_writers() {
    passes(|| {
        let lock = Arc::new(RwLock::new(1));
        let (c_lock, c_lock2) = (lock.clone(), lock);
        let atomic = Arc::new(AtomicUsize::new(0));
        let (c_atomic, c_atomic2) = (atomic.clone(), atomic);
        thread::spawn(move || {
            *c_lock.write().unwrap() += 1;
            c_atomic.fetch_add(1, Relaxed);
        });
        thread::spawn(move || {
            *c_lock2.write().unwrap() += 1;
            c_atomic2.fetch_add(1, Relaxed);
        });
    });
}

// ---- atomic.rs (the tests that use no loom-only API) ----

#[test]
fn atomic_fetch_add_atomic() {
    passes(|| {
        let a1 = std::sync::Arc::new(AtomicUsize::new(0));
        let a2 = a1.clone();
        let th = thread::spawn(move || a2.fetch_add(1, Relaxed));
        let v1 = a1.fetch_add(1, Relaxed);
        let v2 = th.join().unwrap();
        assert_ne!(v1, v2);
    });
}

#[test]
fn atomic_update_atomic() {
    // loom's `update` is std's `fetch_update` that always succeeds.
    passes(|| {
        let a1 = std::sync::Arc::new(AtomicUsize::new(0));
        let a2 = a1.clone();
        let inc = |a: &AtomicUsize| a.fetch_update(Relaxed, Relaxed, |v| Some(v + 1)).unwrap();
        let th = thread::spawn(move || inc(&a2));
        let v1 = inc(&a1);
        let v2 = th.join().unwrap();
        assert_ne!(v1, v2);
        assert_eq!(2, a1.load(Relaxed));
    });
}

static SLOW_ARC: cmc_thread::sync::LazyLock<Arc<usize>> = cmc_thread::sync::LazyLock::new(|| {
    thread::yield_now();
    Arc::default()
});

#[test]
fn atomic_lazy_static_arc_race() {
    // As in loom: a static's value belongs to the execution and dies with it (the last
    // thread to finish drops it), so its `Arc` is not reported as leaked.
    passes(|| {
        let jh = thread::spawn(|| assert_eq!(**SLOW_ARC, 0));
        assert_eq!(**SLOW_ARC, 0);
        jh.join().unwrap();
    });
}

static NO_LEAK: cmc_thread::sync::LazyLock<Arc<usize>> =
    cmc_thread::sync::LazyLock::new(Arc::default);

#[test]
fn atomic_lazy_static_arc_doesnt_leak() {
    passes(|| assert_eq!(**NO_LEAK, 0));
}

#[test]
fn atomic_lazy_static_arc_shutdown_differs() {
    // loom: should_panic (a thread not joined touches the static while the execution shuts
    // down). cmc runs every thread to its end, so the access is fine, and the static dies
    // after that thread, the last one. It shares `NO_LEAK` with the test above: the two may
    // run at the same time, each execution keeping its own value.
    passes(|| {
        thread::spawn(|| assert_eq!(**NO_LEAK, 0));
    });
}

// ---- fence.rs ----

/// Publishes 42 through an `UnsafeCell` and a flag: the writer stores the flag with
/// `flag_store` after a release fence if `writer_fence`; the reader loads it with
/// `flag_load` and, if set, fences with acquire if `reader_fence`, then reads the cell.
fn fenced_publication(
    writer_fence: bool,
    flag_store: std::sync::atomic::Ordering,
    flag_load: std::sync::atomic::Ordering,
    reader_fence: bool,
) -> impl Fn() + Send + Sync + 'static {
    use cmc_thread::sync::atomic::fence;
    move || {
        let data = std::sync::Arc::new(UnsafeCell::new(0));
        let flag = std::sync::Arc::new(AtomicBool::new(false));
        let th = {
            let (data, flag) = (data.clone(), flag.clone());
            thread::spawn(move || {
                data.with_mut(|p| unsafe { *p = 42 });
                if writer_fence {
                    fence(Release);
                }
                flag.store(true, flag_store);
            })
        };
        if flag.load(flag_load) {
            if reader_fence {
                fence(Acquire);
            }
            assert_eq!(42, data.with_mut(|p| unsafe { *p }));
        }
        th.join().unwrap();
    }
}

#[test]
fn fence_sw_base() {
    passes(fenced_publication(true, Relaxed, Relaxed, true));
}

#[test]
fn fence_sw_collapsed_store() {
    passes(fenced_publication(false, Release, Relaxed, true));
}

#[test]
fn fence_sw_collapsed_load() {
    passes(fenced_publication(true, Relaxed, Acquire, false));
}

#[test]
fn fence_sb_fences() {
    use cmc_thread::sync::atomic::fence;
    passes(|| {
        let x = std::sync::Arc::new(AtomicBool::new(false));
        let y = std::sync::Arc::new(AtomicBool::new(false));
        let a = {
            let (x, y) = (x.clone(), y.clone());
            thread::spawn(move || {
                x.store(true, Relaxed);
                fence(SeqCst);
                y.load(Relaxed)
            })
        };
        y.store(true, Relaxed);
        fence(SeqCst);
        let b = x.load(Relaxed);
        assert!(
            a.join().unwrap() || b,
            "both threads read false across SeqCst fences"
        );
    });
}

#[test]
fn fence_hazard_pointer() {
    use cmc_thread::sync::atomic::fence;
    passes(|| {
        let flags: std::sync::Arc<[AtomicBool; 3]> = std::sync::Arc::new([
            AtomicBool::new(true),  // reachable
            AtomicBool::new(false), // protected
            AtomicBool::new(true),  // allocated
        ]);
        let f = flags.clone();
        let reader = thread::spawn(move || {
            f[1].store(true, Relaxed);
            fence(SeqCst);
            if f[0].load(Relaxed) {
                assert!(f[2].load(Relaxed), "read after reclamation");
            }
        });
        flags[0].store(false, Relaxed);
        fence(SeqCst);
        if !flags[1].load(Relaxed) {
            flags[2].store(false, Relaxed);
        }
        reader.join().unwrap();
    });
}

/// RWC+syncs (`z_acquire: false`) and W+RWC (`true`, where the first reader first acquires
/// `z`, released after `x`) from the SCFix paper: forbidden in C++20, so `a && !b && !c`
/// never happens.
fn rwc(z_acquire: bool) -> impl Fn() + Send + Sync + 'static {
    use cmc_thread::sync::atomic::fence;
    move || {
        let v: std::sync::Arc<[AtomicBool; 3]> = std::sync::Arc::new([
            AtomicBool::new(false), // x
            AtomicBool::new(false), // y
            AtomicBool::new(false), // z
        ]);
        let t2 = {
            let v = v.clone();
            thread::spawn(move || {
                let a = if z_acquire {
                    v[2].load(Acquire)
                } else {
                    v[0].load(Relaxed)
                };
                fence(SeqCst);
                (a, v[1].load(Relaxed))
            })
        };
        let t3 = {
            let v = v.clone();
            thread::spawn(move || {
                v[1].store(true, Relaxed);
                fence(SeqCst);
                v[0].load(Relaxed)
            })
        };
        v[0].store(true, Relaxed);
        if z_acquire {
            v[2].store(true, Release);
        }
        let (a, b) = t2.join().unwrap();
        let c = t3.join().unwrap();
        assert!(!(a && !b && !c), "outcome forbidden since C++20 reached");
    }
}

#[test]
fn fence_rwc_syncs() {
    passes(rwc(false));
}

#[test]
fn fence_w_rwc() {
    passes(rwc(true));
}

// ---- atomic_int.rs ----

/// loom's per-type tests `xor`, `max`, `min`, `compare_exchange` and `fetch_update` (its
/// `try_update`/`update` use API std does not have on stable, and `compare_exchange_weak`
/// is `#[ignore]`d in loom).
macro_rules! atomic_int_tests {
    ($name:ident, $int:ty, $atomic:ident) => {
        mod $name {
            use super::passes;
            use cmc_thread::sync::atomic::$atomic;
            use std::sync::atomic::Ordering::SeqCst;

            const A: $int = 11641914933775430211u64 as $int;
            const B: $int = 13209405719799650717u64 as $int;

            #[test]
            fn xor() {
                passes(|| {
                    let atomic = $atomic::new(A);
                    assert_eq!(A, atomic.fetch_xor(B, SeqCst));
                    assert_eq!(A ^ B, atomic.load(SeqCst));
                });
            }

            #[test]
            fn max() {
                passes(|| {
                    let atomic = $atomic::new(A);
                    assert_eq!(A, atomic.fetch_max(B, SeqCst));
                    assert_eq!(A.max(B), atomic.load(SeqCst));
                });
            }

            #[test]
            fn min() {
                passes(|| {
                    let atomic = $atomic::new(A);
                    assert_eq!(A, atomic.fetch_min(B, SeqCst));
                    assert_eq!(A.min(B), atomic.load(SeqCst));
                });
            }

            #[test]
            fn compare_exchange() {
                passes(|| {
                    let atomic = $atomic::new(A);
                    assert_eq!(Err(A), atomic.compare_exchange(B, A, SeqCst, SeqCst));
                    assert_eq!(Ok(A), atomic.compare_exchange(A, B, SeqCst, SeqCst));
                    assert_eq!(B, atomic.load(SeqCst));
                });
            }

            #[test]
            fn fetch_update() {
                passes(|| {
                    let atomic = $atomic::new(A);
                    assert_eq!(Ok(A), atomic.fetch_update(SeqCst, SeqCst, |_| Some(B)));
                    assert_eq!(Err(B), atomic.fetch_update(SeqCst, SeqCst, |_| None));
                    assert_eq!(B, atomic.load(SeqCst));
                });
            }
        }
    };
}

atomic_int_tests!(atomic_int_u8, u8, AtomicU8);
atomic_int_tests!(atomic_int_u16, u16, AtomicU16);
atomic_int_tests!(atomic_int_u32, u32, AtomicU32);
atomic_int_tests!(atomic_int_u64, u64, AtomicU64);
atomic_int_tests!(atomic_int_usize, usize, AtomicUsize);
atomic_int_tests!(atomic_int_i8, i8, AtomicI8);
atomic_int_tests!(atomic_int_i16, i16, AtomicI16);
atomic_int_tests!(atomic_int_i32, i32, AtomicI32);
atomic_int_tests!(atomic_int_i64, i64, AtomicI64);
atomic_int_tests!(atomic_int_isize, isize, AtomicIsize);

// ---- spec.rs (cppreference's memory_order examples) ----

/// Two flags set by two threads, two readers each waiting for one flag and then reading the
/// other, counting into `z` when they see it; every value of `z` reached.
fn two_flags_two_readers(
    store: std::sync::atomic::Ordering,
    load: std::sync::atomic::Ordering,
) -> BTreeSet<usize> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let sink = seen.clone();
    passes(move || {
        let v: std::sync::Arc<[AtomicBool; 2]> =
            std::sync::Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let z = std::sync::Arc::new(AtomicUsize::new(0));
        let w = v.clone();
        thread::spawn(move || w[1].store(true, store));
        let reader = |wait: usize, then: usize| {
            let (v, z) = (v.clone(), z.clone());
            thread::spawn(move || {
                while !v[wait].load(load) {
                    thread::yield_now();
                }
                if v[then].load(load) {
                    z.fetch_add(1, Relaxed);
                }
            })
        };
        let (t1, t2) = (reader(0, 1), reader(1, 0));
        v[0].store(true, store);
        t1.join().unwrap();
        t2.join().unwrap();
        sink.lock().unwrap().insert(z.load(SeqCst));
    });
    let seen = seen.lock().unwrap().clone();
    seen
}

#[test]
fn spec_acq_rel() {
    // Release/acquire does not order the two independent stores for the two readers, so
    // z = 0 is reachable too.
    assert_eq!(
        two_flags_two_readers(Release, Acquire),
        BTreeSet::from([0, 1, 2])
    );
}

#[test]
fn spec_test_seq_cst_agrees_with_the_model_where_loom_does_not() {
    // loom `#[ignore]`s this test: its SeqCst lets both readers miss the other flag (z = 0).
    // SeqCst forbids it; cmc reaches exactly z = 1 and z = 2.
    assert_eq!(
        two_flags_two_readers(SeqCst, SeqCst),
        BTreeSet::from([1, 2])
    );
}

// ---- double_panic_in_drop.rs ----

#[test]
fn double_panic_at_branch_max() {
    // loom: should_panic when an execution exceeds `max_branches` while an `Arc` is alive
    // (without aborting on the panic in its drop). cmc's step bound is the analogue: the
    // execution is reported as exceeding it, and the `Arc` dropped while it is torn down
    // does not turn that into a second failure.
    let f = checker()
        .max_steps(2)
        .check(|| {
            let _arc = Arc::new(());
            thread::yield_now();
            thread::yield_now();
            thread::yield_now();
        })
        .unwrap_err();
    assert!(matches!(f.stop, Stop::StepLimit(2)), "{f}");
}
