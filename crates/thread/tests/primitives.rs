//! RwLock, Condvar, Once/OnceLock, mpsc, the instrumented Arc, and the shim.

use cmc_thread::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use cmc_thread::sync::{mpsc, Arc, Condvar, Mutex, Once, OnceLock, RwLock};
use cmc_thread::{thread, Checker, Mode, Stop};

/// Runs `model` exhaustively and returns the failure.
fn fails(model: impl Fn() + Send + Sync + 'static) -> Box<cmc_thread::Failure> {
    Checker::new().mode(Mode::Dpor).check(model).unwrap_err()
}

fn passes(model: impl Fn() + Send + Sync + 'static) {
    let s = Checker::new().mode(Mode::Dpor).check(model).unwrap();
    assert!(s.complete, "{s:?}");
}

/// Two readers and a writer: readers never overlap the writer, and they do overlap each other.
fn readers_writer(assert_readers_never_overlap: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let lock = Arc::new(RwLock::new(0));
        let inside = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (lock, inside) = (lock.clone(), inside.clone());
                thread::spawn(move || {
                    let g = lock.read().unwrap();
                    let n = inside.fetch_add(1, SeqCst);
                    assert!(
                        !(assert_readers_never_overlap && n == 1),
                        "two readers inside"
                    );
                    inside.fetch_sub(1, SeqCst);
                    *g
                })
            })
            .collect();
        {
            let mut g = lock.write().unwrap();
            assert_eq!(inside.load(SeqCst), 0, "a reader overlaps the writer");
            *g += 1;
        }
        for r in readers {
            r.join().unwrap();
        }
    }
}

#[test]
fn rwlock_excludes_the_writer_and_shares_between_readers() {
    passes(readers_writer(false));
    let f = fails(readers_writer(true));
    assert!(f.to_string().contains("two readers inside"), "{f}");
    assert!(f.to_string().contains("read(RwLock#"), "{f}");
}

#[test]
fn condvar_wait_loop_is_correct_and_a_lost_wakeup_is_a_deadlock() {
    passes(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p2 = pair.clone();
        let t = thread::spawn(move || {
            *p2.0.lock().unwrap() = true;
            p2.1.notify_one();
        });
        let ready = pair.1.wait_while(pair.0.lock().unwrap(), |r| !*r).unwrap();
        assert!(*ready);
        drop(ready);
        t.join().unwrap();
    });
    // The flag is checked, then the lock is dropped before waiting: the notify can fall
    // in between and the waiter sleeps forever.
    let f = fails(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new(), AtomicBool::new(false)));
        let p2 = pair.clone();
        let t = thread::spawn(move || {
            p2.2.store(true, SeqCst);
            p2.1.notify_one();
        });
        if !pair.2.load(SeqCst) {
            let g = pair.0.lock().unwrap();
            drop(pair.1.wait(g).unwrap());
        }
        t.join().unwrap();
    });
    assert!(matches!(f.stop, Stop::Deadlock { .. }), "{f}");
    assert!(f.to_string().contains("with no notify"), "{f}");
}

#[test]
fn timed_wait_may_time_out() {
    let f = fails(|| {
        let pair = Arc::new((Mutex::new(()), Condvar::new()));
        let g = pair.0.lock().unwrap();
        let (_g, r) = pair
            .1
            .wait_timeout(g, std::time::Duration::from_secs(1))
            .unwrap();
        assert!(!r.timed_out(), "timed out");
    });
    assert!(f.to_string().contains("timed out"), "{f}");
}

#[test]
fn once_runs_its_initialiser_exactly_once() {
    passes(|| {
        let once = Arc::new(Once::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let (o2, r2) = (once.clone(), runs.clone());
        let t = thread::spawn(move || {
            o2.call_once(|| {
                r2.fetch_add(1, SeqCst);
            })
        });
        once.call_once(|| {
            runs.fetch_add(1, SeqCst);
        });
        assert!(once.is_completed());
        t.join().unwrap();
        assert_eq!(runs.load(SeqCst), 1);
    });
}

#[test]
fn once_lock_gives_every_thread_the_same_value_and_get_can_see_it_empty() {
    passes(|| {
        let cell = Arc::new(OnceLock::new());
        let c2 = cell.clone();
        let t = thread::spawn(move || *c2.get_or_init(|| 1));
        let mine = *cell.get_or_init(|| 2);
        assert_eq!(t.join().unwrap(), mine);
        assert_eq!(cell.set(3), Err(3));
    });
    let f = fails(|| {
        let cell = Arc::new(OnceLock::new());
        let c2 = cell.clone();
        let t = thread::spawn(move || c2.set(1).unwrap());
        assert_eq!(cell.get(), Some(&1), "read before initialisation");
        t.join().unwrap();
    });
    assert!(f.to_string().contains("read before initialisation"), "{f}");
}

#[test]
fn channel_delivers_in_order_and_a_recv_nobody_sends_to_is_a_deadlock() {
    passes(|| {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        let a = thread::spawn(move || tx.send(1).unwrap());
        let b = thread::spawn(move || tx2.send(2).unwrap());
        let mut got: Vec<i32> = rx.iter().collect();
        got.sort();
        assert_eq!(got, vec![1, 2]);
        a.join().unwrap();
        b.join().unwrap();
    });
    let f = fails(|| {
        let (tx, rx) = mpsc::channel::<i32>();
        let t = thread::spawn(move || rx.recv());
        t.join().unwrap().ok();
        drop(tx);
    });
    assert!(matches!(f.stop, Stop::Deadlock { .. }), "{f}");
    assert!(f.to_string().contains("on an empty channel"), "{f}");
}

#[test]
fn sync_channel_blocks_a_sender_while_full() {
    let f = fails(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        drop(rx);
    });
    assert!(f.to_string().contains("on a full channel"), "{f}");
    passes(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        assert_eq!((rx.recv(), rx.recv()), (Ok(1), Ok(2)));
        assert!(rx.try_recv().is_err());
        t.join().unwrap();
    });
}

#[test]
fn arc_reference_counts_are_switch_points() {
    // The clone moved into the thread may or may not be dropped yet.
    let f = fails(|| {
        let a = Arc::new(5);
        let a2 = a.clone();
        let t = thread::spawn(move || *a2);
        assert_eq!(Arc::strong_count(&a), 1, "clone still alive");
        t.join().unwrap();
    });
    assert!(f.to_string().contains("strong_count(Arc#"), "{f}");
    passes(|| {
        let a = Arc::new(5);
        let a2 = a.clone();
        thread::spawn(move || *a2).join().unwrap();
        assert_eq!(Arc::try_unwrap(a).ok(), Some(5));
    });
}

#[cfg(not(cmc))]
#[test]
fn shim_is_std_without_the_cfg() {
    let m: std::sync::Mutex<u8> = cmc_thread::shim::sync::Mutex::new(1);
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r = runs.clone();
    cmc_thread::shim::model(move || {
        r.fetch_add(1, SeqCst);
    });
    assert_eq!((*m.lock().unwrap(), runs.load(SeqCst)), (1, 1));
}
