//! Memory-safety checks: data races on a tracked `UnsafeCell` under the
//! happens-before the checker models, and `Arc` leaks at the end of an execution.

use cmc_thread::cell::UnsafeCell;
use cmc_thread::sync::atomic::{fence, AtomicBool, Ordering};
use cmc_thread::sync::{mpsc, Mutex};
use cmc_thread::{thread, Checker, Mode, Stop};
use std::sync::Arc;

fn dpor() -> Checker {
    Checker::new().mode(Mode::Dpor)
}

/// Thread 1 writes the cell and raises a flag with `store_order`; thread 0 reads the cell
/// once it sees the flag with `load_order` (optionally with fences around relaxed accesses).
fn message_passing(
    store_order: Ordering,
    load_order: Ordering,
    fences: bool,
) -> impl Fn() + Send + Sync + 'static {
    move || {
        let data = Arc::new(UnsafeCell::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let (d, f) = (data.clone(), flag.clone());
        let h = thread::spawn(move || {
            d.with_mut(|p| unsafe { *p = 42 });
            if fences {
                fence(Ordering::Release);
            }
            f.store(true, store_order);
        });
        if flag.load(load_order) {
            if fences {
                fence(Ordering::Acquire);
            }
            assert_eq!(data.with(|p| unsafe { *p }), 42);
        }
        h.join().unwrap();
    }
}

#[test]
fn unsynchronised_writes_are_a_data_race() {
    let f = dpor()
        .check(|| {
            let cell = Arc::new(UnsafeCell::new(0));
            let c = cell.clone();
            let h = thread::spawn(move || c.with_mut(|p| unsafe { *p += 1 }));
            cell.with_mut(|p| unsafe { *p += 1 });
            h.join().unwrap();
        })
        .unwrap_err();
    match &f.stop {
        Stop::DataRace {
            object,
            first,
            second,
        } => {
            assert!(object.starts_with("UnsafeCell#"), "{f}");
            assert!(
                first.contains("writes at") && second.contains("writes at"),
                "{f}"
            );
            assert!(
                first.contains("memory.rs:49") || second.contains("memory.rs:49"),
                "{f}"
            );
            assert!(
                first.contains("memory.rs:49") || second.contains("memory.rs:49"),
                "{f}"
            );
        }
        other => panic!("expected a data race, got {other:?}\n{f}"),
    }
    let text = f.to_string();
    assert!(text.contains("cmc: data race on UnsafeCell#"), "{text}");
    assert!(
        text.contains("with no happens-before between the two"),
        "{text}"
    );
    // The racing access is marked in its thread's column.
    assert!(text.contains("data race on UnsafeCell#2 at "), "{text}");
}

#[test]
fn release_acquire_message_passing_is_not_a_race() {
    let stats = dpor()
        .check(message_passing(Ordering::Release, Ordering::Acquire, false))
        .unwrap();
    assert!(stats.complete);
    let seqcst = dpor().check(message_passing(Ordering::SeqCst, Ordering::SeqCst, false));
    assert!(seqcst.is_ok(), "{}", seqcst.unwrap_err());
}

#[test]
fn relaxed_message_passing_is_a_race() {
    for (store, load) in [
        (Ordering::Relaxed, Ordering::Acquire),
        (Ordering::Release, Ordering::Relaxed),
    ] {
        let f = dpor()
            .check(message_passing(store, load, false))
            .unwrap_err();
        assert!(
            matches!(&f.stop, Stop::DataRace { first, second, .. }
                if first.starts_with("thread 1 writes") && second.starts_with("thread 0 reads")),
            "{store:?}/{load:?}: {f}"
        );
    }
}

#[test]
fn fences_make_relaxed_message_passing_synchronise() {
    let ok = dpor().check(message_passing(Ordering::Relaxed, Ordering::Relaxed, true));
    assert!(ok.is_ok(), "{}", ok.unwrap_err());
}

#[test]
fn locks_spawn_join_and_channels_order_accesses() {
    let stats = dpor()
        .check(|| {
            let cell = Arc::new(UnsafeCell::new(0));
            let msg = Arc::new(UnsafeCell::new(0));
            let lock = Arc::new(Mutex::new(()));
            cell.with_mut(|p| unsafe { *p = 1 }); // before the spawns
            let lockers: Vec<_> = (0..2)
                .map(|_| {
                    let (c, l) = (cell.clone(), lock.clone());
                    thread::spawn(move || {
                        let _g = l.lock().unwrap();
                        c.with_mut(|p| unsafe { *p += 1 });
                    })
                })
                .collect();
            let (tx, rx) = mpsc::channel();
            let m = msg.clone();
            let sender = thread::spawn(move || {
                m.with_mut(|p| unsafe { *p = 5 });
                tx.send(()).unwrap();
            });
            let m = msg.clone();
            let receiver = thread::spawn(move || {
                rx.recv().unwrap();
                m.with(|p| unsafe { *p })
            });
            for h in lockers {
                h.join().unwrap();
            }
            assert_eq!(receiver.join().unwrap(), 5);
            sender.join().unwrap();
            cell.with_mut(|p| unsafe { *p += 1 }); // after the joins
            msg.with_mut(|p| unsafe { *p += 1 });
        })
        .unwrap();
    assert!(stats.complete && stats.executions > 1, "{stats:?}");
}

/// A node that can point at itself: a reference cycle never freed.
struct Node {
    next: Mutex<Option<cmc_thread::sync::Arc<Node>>>,
}

fn cycle() {
    let a = cmc_thread::sync::Arc::new(Node {
        next: Mutex::new(None),
    });
    let b = a.clone();
    let h = thread::spawn(move || *b.next.lock().unwrap() = Some(b.clone()));
    h.join().unwrap();
}

#[test]
fn an_arc_cycle_is_reported_as_a_leak() {
    let f = dpor().check(cycle).unwrap_err();
    match &f.stop {
        Stop::Leak { allocations } => {
            assert_eq!(allocations.len(), 1, "{f}");
            assert!(allocations[0].starts_with("Arc#"), "{f}");
            // Created in this file (by `cycle`), not inside cmc.
            assert!(
                allocations[0].contains("created at crates/thread/tests/memory.rs:"),
                "{f}"
            );
            assert!(
                allocations[0].ends_with("strong count 1 at the end of the execution"),
                "{f}"
            );
        }
        other => panic!("expected a leak, got {other:?}\n{f}"),
    }
    assert!(
        f.to_string().contains("memory leak: 1 Arc allocation(s)"),
        "{f}"
    );
    // Turned off, the same model passes.
    assert!(dpor().detect_leaks(false).check(cycle).is_ok());
}

#[test]
fn a_forgotten_clone_is_a_leak_and_balanced_counts_are_not() {
    let f = dpor()
        .check(|| {
            let a = cmc_thread::sync::Arc::new(1);
            std::mem::forget(a.clone());
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::Leak { allocations } if allocations[0].contains("strong count 1")),
        "{f}"
    );
    let ok = dpor().check(|| {
        let a = cmc_thread::sync::Arc::new(1);
        let b = a.clone();
        thread::spawn(move || drop(b)).join().unwrap();
        assert_eq!(cmc_thread::sync::Arc::try_unwrap(a).ok(), Some(1));
    });
    assert!(ok.is_ok(), "{}", ok.unwrap_err());
}

/// loom's `invalid_unsync_load_relaxed`: a thread reads an atomic with `unsync_load` while
/// the main thread stores to it; `unsync_load` is a non-atomic read, so they race.
#[test]
fn an_unsync_load_concurrent_with_a_store_is_a_data_race() {
    use cmc_thread::sync::atomic::AtomicUsize;
    let f = dpor()
        .check(|| {
            let a = Arc::new(AtomicUsize::new(0));
            let b = a.clone();
            let t = thread::spawn(move || unsafe { a.unsync_load() });
            b.store(1, Ordering::Relaxed);
            t.join().unwrap();
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::DataRace { object, first, second }
            if object.starts_with("AtomicUsize#")
                && [first, second].iter().any(|a| a.contains("unsync_loads at"))
                && [first, second].iter().any(|a| a.contains("stores at"))),
        "{f}"
    );
}

/// Stores ordered before an `unsync_load` (here by `join`, and a read-modify-write of the
/// other thread) do not race with it, nor do stores of different threads with each other.
#[test]
fn an_unsync_load_after_the_stores_it_reads_is_no_race() {
    use cmc_thread::sync::atomic::AtomicUsize;
    let stats = dpor()
        .check(|| {
            let a = Arc::new(AtomicUsize::new(0));
            let b = a.clone();
            let t = thread::spawn(move || b.fetch_add(1, Ordering::Relaxed));
            a.store(5, Ordering::Relaxed);
            t.join().unwrap();
            let v = unsafe { a.unsync_load() };
            assert!(v == 5 || v == 6, "read {v}");
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete);
}

/// A block shared by two parties, freed by whichever lets go of it last (the shape of a
/// oneshot channel): each party records that it is done with `fetch_add` on `done`, and
/// the one that sees the other already done frees the block.
struct Shared {
    done: cmc_thread::sync::atomic::AtomicUsize,
    /// One note per party.
    notes: [UnsafeCell<usize>; 2],
}

/// A pointer to the shared block that threads may carry.
#[derive(Clone, Copy)]
struct BlockPtr(*mut Shared);
// SAFETY: the block is shared on purpose; the checker verifies its uses.
unsafe impl Send for BlockPtr {}

impl BlockPtr {
    fn new() -> Self {
        use cmc_thread::alloc::{alloc, Layout};
        let shared = Shared {
            done: cmc_thread::sync::atomic::AtomicUsize::new(0),
            notes: [UnsafeCell::new(0), UnsafeCell::new(0)],
        };
        // SAFETY: a layout of non-zero size; the block is written before any use.
        unsafe {
            let p = alloc(Layout::new::<Shared>()) as *mut Shared;
            p.write(shared);
            BlockPtr(p)
        }
    }

    /// Party `me` lets go of the block, writing its note before (`note_first`) or after
    /// marking itself done; frees the block if the other party was done already.
    fn release(self, me: usize, note_first: bool) {
        // SAFETY: the block is alive until the second party marks itself done (or not:
        // that is what the checker is asked).
        let shared = unsafe { &*self.0 };
        if note_first {
            shared.notes[me].with_mut(|p| unsafe { *p += 1 });
        }
        let last = shared.done.fetch_add(1, Ordering::AcqRel) == 1;
        if !note_first {
            shared.notes[me].with_mut(|p| unsafe { *p += 1 });
        }
        if last {
            self.free();
        }
    }

    /// Drops the shared value and frees the block.
    fn free(self) {
        use cmc_thread::alloc::{dealloc, Layout};
        // SAFETY: the caller is the last user of the block (or the test is about it not
        // being so).
        unsafe {
            self.0.drop_in_place();
            dealloc(self.0 as *mut u8, Layout::new::<Shared>());
        }
    }
}

fn two_parties(note_first: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let block = BlockPtr::new();
        let other = thread::spawn(move || block.release(1, note_first));
        block.release(0, note_first);
        other.join().unwrap();
    }
}

/// A party that touches the block after marking itself done may find it freed by the
/// other. No switch point separates its `fetch_add` from its note, so no interleaving puts
/// the free between them: the free is found racing with the note (the note does not
/// happen before the free), in the first execution.
#[test]
fn a_use_of_a_block_the_other_party_freed_is_a_use_after_free() {
    let f = dpor().check(two_parties(false)).unwrap_err();
    match &f.stop {
        Stop::UseAfterFree {
            object,
            freed,
            used,
        } => {
            assert!(object.starts_with("UnsafeCell#"), "{f}");
            assert!(freed.starts_with("freed by thread"), "{f}");
            assert!(used.contains("with no happens-before"), "{f}");
        }
        other => panic!("expected a use after free, got {other:?}\n{f}"),
    }
    assert!(f.to_string().contains("use after free: UnsafeCell#"), "{f}");
}

/// The same parties writing their note before marking themselves done never use the
/// block after it was freed.
#[test]
fn parties_done_with_the_block_before_letting_go_pass() {
    let stats = dpor()
        .check(two_parties(true))
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete);
}

/// Freeing a block twice is reported (and the block is not returned to the allocator twice).
#[test]
fn freeing_a_block_twice_is_reported() {
    use cmc_thread::alloc::{alloc, dealloc, Layout};
    let f = dpor()
        .check(|| {
            let layout = Layout::new::<u64>();
            // SAFETY: a non-zero layout; the second `dealloc` is the bug under test.
            unsafe {
                let p = alloc(layout);
                dealloc(p, layout);
                dealloc(p, layout);
            }
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::UseAfterFree { object, .. } if object.contains("freed twice")),
        "{f}"
    );
}

/// A use ordered after the free (here by `join`) touches freed memory in every execution:
/// the block is kept until the execution ends, so the checker sees the use and reports it.
#[test]
fn a_use_after_the_free_is_reported() {
    let f = dpor()
        .check(|| {
            let block = BlockPtr::new();
            thread::spawn(move || block.free()).join().unwrap();
            // SAFETY: none: the block was freed (the bug under test).
            let shared = unsafe { &*block.0 };
            shared.done.load(Ordering::Relaxed);
        })
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::UseAfterFree { object, used, .. }
            if object.starts_with("AtomicUsize") && used.starts_with("used by thread 0 at")),
        "{f}"
    );
}
