//! A CDSChecker/GenMC-style benchmark set: small lock-free structures, each in a correct
//! version and a buggy one that weakens a single ordering (the way CDSChecker's
//! evaluation injects bugs; Chase-Lev's is the `SeqCst` store of `tests/chase_lev.rs`).
//! Written once against `$k::{cell, sync, thread}` so that the same code runs on cmc-thread
//! (`tests/lock_free.rs`, the verdicts in CI) and on loom (`benches/compare.rs`, the table
//! in the README). `$count` is called at the start of every execution (the bench counts
//! loom's executions with it).
//!
//! Every structure holds its payload in a tracked `UnsafeCell` (or, for the deque, checks
//! what it returns), so a weakened ordering shows as a data race on the payload (or a
//! failed assertion), never only as a different interleaving. Nodes are pre-allocated and
//! named by index (0 = null), so no memory is reclaimed while a thread may still read it.
//! Every wait loop yields, as loom requires of spin loops.

macro_rules! structures {
    ($m:ident, $k:ident, $count:path) => {
        #[allow(dead_code)]
        pub mod $m {
            use $k::cell::UnsafeCell;
            use $k::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
            use $k::sync::atomic::{fence, AtomicBool, AtomicIsize, AtomicUsize, Ordering};
            use $k::sync::Arc;
            use $k::thread;

            /// `good` when the structure is the correct one, `bad` otherwise.
            fn pick(correct: bool, good: Ordering, bad: Ordering) -> Ordering {
                if correct {
                    good
                } else {
                    bad
                }
            }

            /// A node of the Michael-Scott queue: its value and the index of the next node.
            struct MsNode {
                value: UnsafeCell<usize>,
                next: AtomicUsize,
            }

            /// Michael and Scott's lock-free queue (PODC 1996) over nodes `1..` of an
            /// array; node 1 is the initial dummy. The enqueuer writes the value, then
            /// links the node with a release CAS on its predecessor's `next`; `correct:
            /// false` makes that CAS relaxed, so a dequeuer reading the link does not see
            /// the value written (a data race on the value).
            struct MsQueue {
                nodes: [MsNode; 4],
                head: AtomicUsize,
                tail: AtomicUsize,
                correct: bool,
            }

            // SAFETY: the values are written before their node is published and read only
            // after (the checker verifies it: a race is a reported failure).
            unsafe impl Sync for MsQueue {}

            impl MsQueue {
                fn new(correct: bool) -> Self {
                    MsQueue {
                        nodes: std::array::from_fn(|_| MsNode {
                            value: UnsafeCell::new(0),
                            next: AtomicUsize::new(0),
                        }),
                        head: AtomicUsize::new(1),
                        tail: AtomicUsize::new(1),
                        correct,
                    }
                }

                /// Enqueues `value` in node `n` (each node is enqueued once).
                fn enqueue(&self, n: usize, value: usize) {
                    self.nodes[n].value.with_mut(|p| unsafe { *p = value });
                    let link = pick(self.correct, Release, Relaxed);
                    loop {
                        let t = self.tail.load(Acquire);
                        let next = self.nodes[t].next.load(Acquire);
                        if next != 0 {
                            // The tail lags behind: help it forward, then retry.
                            let _ = self.tail.compare_exchange(t, next, Release, Relaxed);
                            continue;
                        }
                        if self.nodes[t]
                            .next
                            .compare_exchange(0, n, link, Relaxed)
                            .is_ok()
                        {
                            let _ = self.tail.compare_exchange(t, n, Release, Relaxed);
                            return;
                        }
                    }
                }

                fn dequeue(&self) -> Option<usize> {
                    loop {
                        let h = self.head.load(Acquire);
                        let t = self.tail.load(Acquire);
                        let next = self.nodes[h].next.load(Acquire);
                        if next == 0 {
                            return None;
                        }
                        if h == t {
                            let _ = self.tail.compare_exchange(t, next, Release, Relaxed);
                            continue;
                        }
                        let value = self.nodes[next].value.with(|p| unsafe { *p });
                        if self.head.compare_exchange(h, next, AcqRel, Relaxed).is_ok() {
                            return Some(value);
                        }
                    }
                }
            }

            /// Two threads enqueue 10 and 20 while the main thread dequeues once; then
            /// the rest is dequeued: every value comes out exactly once.
            fn ms_queue(correct: bool) {
                $count();
                let q = Arc::new(MsQueue::new(correct));
                let producers: Vec<_> = [(2, 10), (3, 20)]
                    .into_iter()
                    .map(|(n, v)| {
                        let q = q.clone();
                        thread::spawn(move || q.enqueue(n, v))
                    })
                    .collect();
                let first = q.dequeue();
                for p in producers {
                    p.join().unwrap();
                }
                let mut out: Vec<usize> = first.into_iter().collect();
                out.extend(std::iter::from_fn(|| q.dequeue()));
                out.sort();
                assert_eq!(out, [10, 20], "the queue lost or duplicated a value");
            }

            /// A cell of Vyukov's bounded MPMC queue: its sequence number and payload.
            struct MpmcCell {
                seq: AtomicUsize,
                value: UnsafeCell<usize>,
            }

            /// Vyukov's bounded MPMC queue (1024cores.net) with 2 cells. A producer claims
            /// position `pos` by CAS when its cell's sequence equals `pos`, writes the
            /// payload and publishes it with a release store of `pos + 1`; `correct:
            /// false` makes that store relaxed, so the consumer's acquire load of the
            /// sequence does not order the payload write before its read (a data race).
            struct Mpmc {
                cells: [MpmcCell; 2],
                enqueue_pos: AtomicUsize,
                dequeue_pos: AtomicUsize,
                correct: bool,
            }

            // SAFETY: a payload is accessed only by the thread that claimed its position
            // (the checker verifies the hand-over).
            unsafe impl Sync for Mpmc {}

            impl Mpmc {
                fn new(correct: bool) -> Self {
                    Mpmc {
                        cells: std::array::from_fn(|i| MpmcCell {
                            seq: AtomicUsize::new(i),
                            value: UnsafeCell::new(0),
                        }),
                        enqueue_pos: AtomicUsize::new(0),
                        dequeue_pos: AtomicUsize::new(0),
                        correct,
                    }
                }

                fn push(&self, value: usize) -> bool {
                    let mut pos = self.enqueue_pos.load(Relaxed);
                    let cell = loop {
                        let cell = &self.cells[pos % 2];
                        let seq = cell.seq.load(Acquire);
                        if seq == pos {
                            match self
                                .enqueue_pos
                                .compare_exchange(pos, pos + 1, Relaxed, Relaxed)
                            {
                                Ok(_) => break cell,
                                Err(now) => pos = now,
                            }
                        } else if seq < pos {
                            return false; // full
                        } else {
                            thread::yield_now();
                            pos = self.enqueue_pos.load(Relaxed);
                        }
                    };
                    cell.value.with_mut(|p| unsafe { *p = value });
                    cell.seq
                        .store(pos + 1, pick(self.correct, Release, Relaxed));
                    true
                }

                fn pop(&self) -> Option<usize> {
                    let mut pos = self.dequeue_pos.load(Relaxed);
                    let cell = loop {
                        let cell = &self.cells[pos % 2];
                        let seq = cell.seq.load(Acquire);
                        if seq == pos + 1 {
                            match self
                                .dequeue_pos
                                .compare_exchange(pos, pos + 1, Relaxed, Relaxed)
                            {
                                Ok(_) => break cell,
                                Err(now) => pos = now,
                            }
                        } else if seq < pos + 1 {
                            return None; // empty
                        } else {
                            thread::yield_now();
                            pos = self.dequeue_pos.load(Relaxed);
                        }
                    };
                    let value = cell.value.with(|p| unsafe { *p });
                    cell.seq.store(pos + 2, Release);
                    Some(value)
                }
            }

            /// Two producers push 10 and 20 (both fit) while the main thread pops once;
            /// then the rest is popped: every value comes out exactly once.
            fn mpmc_queue(correct: bool) {
                $count();
                let q = Arc::new(Mpmc::new(correct));
                let producers: Vec<_> = [10, 20]
                    .into_iter()
                    .map(|v| {
                        let q = q.clone();
                        thread::spawn(move || assert!(q.push(v), "a queue of 2 was full"))
                    })
                    .collect();
                let first = q.pop();
                for p in producers {
                    p.join().unwrap();
                }
                let mut out: Vec<usize> = first.into_iter().collect();
                out.extend(std::iter::from_fn(|| q.pop()));
                out.sort();
                assert_eq!(out, [10, 20], "the queue lost or duplicated a value");
            }

            /// Lamport's single-producer single-consumer ring with one slot: the producer
            /// writes the slot, then publishes it with a release store of `tail`; `correct:
            /// false` makes that store relaxed (the consumer's read of the slot races with
            /// the write).
            struct Spsc {
                slot: UnsafeCell<usize>,
                head: AtomicUsize,
                tail: AtomicUsize,
                correct: bool,
            }

            // SAFETY: the slot belongs to the producer while the ring is empty and to the
            // consumer while it is full (the checker verifies the hand-overs).
            unsafe impl Sync for Spsc {}

            /// Two values pass through the one-slot ring; both sides yield while it is
            /// full / empty.
            fn spsc_queue(correct: bool) {
                $count();
                let q = Arc::new(Spsc {
                    slot: UnsafeCell::new(0),
                    head: AtomicUsize::new(0),
                    tail: AtomicUsize::new(0),
                    correct,
                });
                let producer = {
                    let q = q.clone();
                    thread::spawn(move || {
                        for v in 1..=2 {
                            let t = q.tail.load(Relaxed);
                            while t - q.head.load(Acquire) == 1 {
                                thread::yield_now();
                            }
                            q.slot.with_mut(|p| unsafe { *p = v });
                            q.tail.store(t + 1, pick(q.correct, Release, Relaxed));
                        }
                    })
                };
                for v in 1..=2 {
                    let h = q.head.load(Relaxed);
                    while q.tail.load(Acquire) == h {
                        thread::yield_now();
                    }
                    assert_eq!(q.slot.with(|p| unsafe { *p }), v, "the ring lost a value");
                    q.head.store(h + 1, Release);
                }
                producer.join().unwrap();
            }

            /// A queue node of the MCS lock: whether its owner still waits, and its
            /// successor's index.
            struct McsNode {
                locked: AtomicBool,
                next: AtomicUsize,
            }

            /// Mellor-Crummey and Scott's queue lock (TOCS 1991) guarding a counter: a
            /// thread appends its node by swapping `tail` and waits on its own `locked`;
            /// the holder hands the lock over by a release store of `false` to its
            /// successor's `locked`. `correct: false` makes the hand-over relaxed, so the
            /// successor's critical section races with the holder's.
            struct Mcs {
                nodes: [McsNode; 3],
                tail: AtomicUsize,
                counter: UnsafeCell<usize>,
                correct: bool,
            }

            // SAFETY: the counter is accessed only while the lock is held.
            unsafe impl Sync for Mcs {}

            impl Mcs {
                fn lock(&self, me: usize) {
                    let node = &self.nodes[me];
                    node.next.store(0, Relaxed);
                    node.locked.store(true, Relaxed);
                    let prev = self.tail.swap(me, AcqRel);
                    if prev != 0 {
                        self.nodes[prev].next.store(me, Release);
                        while node.locked.load(Acquire) {
                            thread::yield_now();
                        }
                    }
                }

                fn unlock(&self, me: usize) {
                    let node = &self.nodes[me];
                    let mut next = node.next.load(Acquire);
                    if next == 0 {
                        if self.tail.compare_exchange(me, 0, Release, Relaxed).is_ok() {
                            return;
                        }
                        // A successor swapped `tail` but has not linked itself yet.
                        loop {
                            next = node.next.load(Acquire);
                            if next != 0 {
                                break;
                            }
                            thread::yield_now();
                        }
                    }
                    let handover = pick(self.correct, Release, Relaxed);
                    self.nodes[next].locked.store(false, handover);
                }
            }

            /// Two threads increment the counter under the lock.
            fn mcs_lock(correct: bool) {
                $count();
                let l = Arc::new(Mcs {
                    nodes: std::array::from_fn(|_| McsNode {
                        locked: AtomicBool::new(false),
                        next: AtomicUsize::new(0),
                    }),
                    tail: AtomicUsize::new(0),
                    counter: UnsafeCell::new(0),
                    correct,
                });
                let increment = |l: &Mcs, me: usize| {
                    l.lock(me);
                    l.counter.with_mut(|p| unsafe { *p += 1 });
                    l.unlock(me);
                };
                let other = {
                    let l = l.clone();
                    thread::spawn(move || increment(&l, 2))
                };
                increment(&l, 1);
                other.join().unwrap();
                assert_eq!(
                    l.counter.with(|p| unsafe { *p }),
                    2,
                    "an increment was lost"
                );
            }

            /// The reader-writer spinlock of Linux (the version in CDSChecker's
            /// benchmarks): one counter starting at `BIAS`; a reader takes 1, a writer takes
            /// `BIAS`, and backs off when the value it saw shows the lock taken. Unlocking
            /// gives the amount back with a release RMW; `correct: false` makes the writer's
            /// unlock relaxed, so a reader acquiring after it does not see the write.
            struct LinuxRwLock {
                lock: AtomicIsize,
                data: UnsafeCell<[usize; 2]>,
                correct: bool,
            }

            const BIAS: isize = 1 << 20;

            // SAFETY: the data is written only under the write lock and read only under
            // a read lock.
            unsafe impl Sync for LinuxRwLock {}

            impl LinuxRwLock {
                fn read_lock(&self) {
                    while self.lock.fetch_sub(1, Acquire) <= 0 {
                        self.lock.fetch_add(1, Relaxed);
                        while self.lock.load(Relaxed) <= 0 {
                            thread::yield_now();
                        }
                    }
                }

                fn read_unlock(&self) {
                    self.lock.fetch_add(1, Release);
                }

                fn write_lock(&self) {
                    while self.lock.fetch_sub(BIAS, Acquire) != BIAS {
                        self.lock.fetch_add(BIAS, Relaxed);
                        while self.lock.load(Relaxed) != BIAS {
                            thread::yield_now();
                        }
                    }
                }

                fn write_unlock(&self) {
                    self.lock
                        .fetch_add(BIAS, pick(self.correct, Release, Relaxed));
                }
            }

            /// A writer sets both data words under the write lock while a reader reads
            /// them under a read lock: the reader sees both old or both new.
            fn linux_rwlock(correct: bool) {
                $count();
                let l = Arc::new(LinuxRwLock {
                    lock: AtomicIsize::new(BIAS),
                    data: UnsafeCell::new([0, 0]),
                    correct,
                });
                let writer = {
                    let l = l.clone();
                    thread::spawn(move || {
                        l.write_lock();
                        l.data.with_mut(|p| unsafe { *p = [1, 1] });
                        l.write_unlock();
                    })
                };
                l.read_lock();
                let [a, b] = l.data.with(|p| unsafe { *p });
                l.read_unlock();
                assert_eq!(a, b, "the reader saw half a write");
                writer.join().unwrap();
            }

            /// The Chase-Lev work-stealing deque (Lê, Pop, Cohen, Zappa Nardelli, PPoPP
            /// 2013, the C11 version) holding two elements, with one `take` by the owner
            /// and two `steal`s by a thief. The correct `take` separates its store of
            /// `bottom` from its load of `top` with `fence(SeqCst)`; `correct: false`
            /// makes the store `SeqCst` and drops the fence. A `SeqCst` store is not a
            /// fence (RC11 / C++20): the owner's relaxed load of `top` may miss the
            /// thief's first steal, and both take the last element.
            struct Deque {
                top: AtomicIsize,
                bottom: AtomicIsize,
                slots: [AtomicUsize; 2],
                correct: bool,
            }

            impl Deque {
                fn take(&self) -> Option<usize> {
                    let b = self.bottom.load(Relaxed) - 1;
                    if self.correct {
                        self.bottom.store(b, Relaxed);
                        fence(SeqCst);
                    } else {
                        self.bottom.store(b, SeqCst);
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

            /// The owner takes once while a thief steals twice: no element twice.
            fn chase_lev(correct: bool) {
                $count();
                let deque = Arc::new(Deque {
                    top: AtomicIsize::new(0),
                    bottom: AtomicIsize::new(2),
                    slots: [AtomicUsize::new(1), AtomicUsize::new(2)],
                    correct,
                });
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

            /// One benchmark program: a structure in its correct or its buggy version.
            pub struct Program {
                /// The structure, e.g. `Michael-Scott queue`.
                pub structure: &'static str,
                /// The buggy version's change, e.g. `link CAS Relaxed (not Release)`.
                pub bug: &'static str,
                /// The correct version.
                pub correct: fn(),
                /// The buggy version.
                pub buggy: fn(),
            }

            /// The set, in table order.
            pub fn programs() -> Vec<Program> {
                vec![
                    Program {
                        structure: "Chase-Lev deque",
                        bug: "SeqCst store of bottom in place of fence(SeqCst)",
                        correct: || chase_lev(true),
                        buggy: || chase_lev(false),
                    },
                    Program {
                        structure: "Michael-Scott queue",
                        bug: "link CAS Relaxed (not Release)",
                        correct: || ms_queue(true),
                        buggy: || ms_queue(false),
                    },
                    Program {
                        structure: "MPMC bounded queue (Vyukov)",
                        bug: "publishing sequence store Relaxed (not Release)",
                        correct: || mpmc_queue(true),
                        buggy: || mpmc_queue(false),
                    },
                    Program {
                        structure: "SPSC queue (Lamport ring)",
                        bug: "tail store Relaxed (not Release)",
                        correct: || spsc_queue(true),
                        buggy: || spsc_queue(false),
                    },
                    Program {
                        structure: "MCS lock",
                        bug: "hand-over store Relaxed (not Release)",
                        correct: || mcs_lock(true),
                        buggy: || mcs_lock(false),
                    },
                    Program {
                        structure: "Linux rwlock",
                        bug: "write_unlock Relaxed (not Release)",
                        correct: || linux_rwlock(true),
                        buggy: || linux_rwlock(false),
                    },
                ]
            }
        }
    };
}
