//! A Chase-Lev work-stealing deque (Lê, Pop, Cohen, Zappa Nardelli, PPoPP 2013, the C11
//! version) with two elements, one `take` by the owner and two `steal`s by a thief. The
//! correct `take` separates its store of `bottom` from its load of `top` with
//! `fence(SeqCst)`; the broken one makes the store `SeqCst` instead and drops the fence.
//! A `SeqCst` store is not a fence (RC11 / C++20): the owner's relaxed load of `top` may
//! still miss the thief's first steal, so the owner and the thief's second steal both take
//! the last element.

use cmc_thread::sync::atomic::{fence, AtomicIsize, AtomicUsize, Ordering::*};
use cmc_thread::sync::Arc;
use cmc_thread::{thread, Checker, Stop};

struct Deque {
    top: AtomicIsize,
    bottom: AtomicIsize,
    slots: [AtomicUsize; 2],
    /// Whether `take` uses the broken `SeqCst` store in place of its fence.
    broken: bool,
}

impl Deque {
    /// A deque holding 1 and 2 (pushed before any thief exists).
    fn with_two(broken: bool) -> Self {
        Deque {
            top: AtomicIsize::new(0),
            bottom: AtomicIsize::new(2),
            slots: [AtomicUsize::new(1), AtomicUsize::new(2)],
            broken,
        }
    }

    /// The owner takes from the bottom.
    fn take(&self) -> Option<usize> {
        let b = self.bottom.load(Relaxed) - 1;
        if self.broken {
            self.bottom.store(b, SeqCst);
        } else {
            self.bottom.store(b, Relaxed);
            fence(SeqCst);
        }
        let t = self.top.load(Relaxed);
        if t > b {
            self.bottom.store(b + 1, Relaxed);
            return None;
        }
        let x = self.slots[b as usize].load(Relaxed);
        if t < b {
            return Some(x);
        }
        let won = self.top.compare_exchange(t, t + 1, SeqCst, Relaxed).is_ok();
        self.bottom.store(b + 1, Relaxed);
        won.then_some(x)
    }

    /// A thief steals from the top.
    fn steal(&self) -> Option<usize> {
        let t = self.top.load(Acquire);
        fence(SeqCst);
        let b = self.bottom.load(Acquire);
        if t >= b {
            return None;
        }
        let x = self.slots[t as usize].load(Relaxed);
        self.top
            .compare_exchange(t, t + 1, SeqCst, Relaxed)
            .ok()
            .map(|_| x)
    }
}

fn model(broken: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let deque = Arc::new(Deque::with_two(broken));
        let thief = {
            let deque = deque.clone();
            thread::spawn(move || [deque.steal(), deque.steal()])
        };
        let mine = deque.take();
        let stolen = thief.join().unwrap();
        let mut taken: Vec<usize> = stolen.into_iter().chain([mine]).flatten().collect();
        taken.sort();
        let before = taken.len();
        taken.dedup();
        assert_eq!(taken.len(), before, "an element was taken twice");
    }
}

#[test]
fn the_correct_deque_never_takes_an_element_twice() {
    let stats = Checker::new()
        .weak_memory(true)
        .check(model(false))
        .unwrap_or_else(|f| panic!("{f}"));
    assert!(stats.complete, "{stats:?}");
}

#[test]
fn a_seqcst_store_in_place_of_the_fence_takes_an_element_twice() {
    let f = Checker::new()
        .weak_memory(true)
        .check(model(true))
        .unwrap_err();
    assert!(
        matches!(&f.stop, Stop::Panic { message, .. } if message.contains("taken twice")),
        "{f}"
    );
    println!("found after {} executions", f.executions);
}
