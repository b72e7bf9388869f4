//! Concurrent data structures with their sequential references and operations, shared by
//! the linearizability tests and the comparison benchmark.
#![allow(dead_code)]

use cmc_thread::lincheck::{Lincheck, Spec};
use cmc_thread::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::SeqCst};
use cmc_thread::sync::Mutex;
use cmc_thread::Rng;
use std::collections::VecDeque;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QOp {
    Push(u8),
    Pop,
    Size,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QRet {
    Pushed,
    Popped(Option<u8>),
    Size(isize),
}

/// The sequential reference: a `VecDeque`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SeqQueue(VecDeque<u8>);

impl Spec for SeqQueue {
    type Op = QOp;
    type Ret = QRet;
    fn apply(&mut self, op: &QOp) -> QRet {
        match op {
            QOp::Push(v) => {
                self.0.push_back(*v);
                QRet::Pushed
            }
            QOp::Pop => QRet::Popped(self.0.pop_front()),
            QOp::Size => QRet::Size(self.0.len() as isize),
        }
    }
}

pub fn queue_op(r: &mut Rng) -> QOp {
    match r.below(3) {
        0 => QOp::Push(1 + r.below(3) as u8),
        1 => QOp::Pop,
        _ => QOp::Size,
    }
}

/// A lock-based queue with a size counter updated after the lock is released.
#[derive(Default)]
pub struct SizedQueue {
    items: Mutex<VecDeque<u8>>,
    size: AtomicIsize,
}

impl SizedQueue {
    /// Runs one operation.
    pub fn apply(&self, op: &QOp) -> QRet {
        match op {
            QOp::Push(v) => {
                self.items.lock().unwrap().push_back(*v);
                self.size.fetch_add(1, SeqCst);
                QRet::Pushed
            }
            QOp::Pop => {
                let v = self.items.lock().unwrap().pop_front();
                if v.is_some() {
                    self.size.fetch_sub(1, SeqCst);
                }
                QRet::Popped(v)
            }
            QOp::Size => QRet::Size(self.size.load(SeqCst)),
        }
    }
}

pub fn sized_queue() -> Lincheck<SeqQueue, SizedQueue> {
    Lincheck::new(
        SeqQueue::default(),
        SizedQueue::default,
        SizedQueue::apply,
        queue_op,
    )
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SOp {
    Push(usize),
    Pop,
}

/// The sequential reference of a stack: a `Vec`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct SeqStack(Vec<usize>);

impl Spec for SeqStack {
    type Op = SOp;
    type Ret = Option<usize>;
    fn apply(&mut self, op: &SOp) -> Option<usize> {
        match op {
            SOp::Push(v) => {
                self.0.push(*v);
                None
            }
            SOp::Pop => self.0.pop(),
        }
    }
}

const NODES: usize = 16;

/// A Treiber stack over a fixed node arena (index 0 is null). `push` is a correct CAS loop;
/// `pop` reads head and next and then stores head without a CAS (the bug).
pub struct Treiber {
    head: AtomicUsize,
    next: [AtomicUsize; NODES],
    value: [AtomicUsize; NODES],
    allocated: AtomicUsize,
}

impl Treiber {
    /// An empty stack.
    pub fn new() -> Self {
        Treiber {
            head: AtomicUsize::new(0),
            next: std::array::from_fn(|_| AtomicUsize::new(0)),
            value: std::array::from_fn(|_| AtomicUsize::new(0)),
            allocated: AtomicUsize::new(1),
        }
    }

    /// Runs one operation.
    pub fn apply(&self, op: &SOp) -> Option<usize> {
        match op {
            SOp::Push(v) => {
                let node = self.allocated.fetch_add(1, SeqCst);
                self.value[node].store(*v, SeqCst);
                loop {
                    let h = self.head.load(SeqCst);
                    self.next[node].store(h, SeqCst);
                    if self.head.compare_exchange(h, node, SeqCst, SeqCst).is_ok() {
                        return None;
                    }
                }
            }
            SOp::Pop => {
                let h = self.head.load(SeqCst);
                if h == 0 {
                    return None;
                }
                let n = self.next[h].load(SeqCst);
                self.head.store(n, SeqCst);
                Some(self.value[h].load(SeqCst))
            }
        }
    }
}

/// The linearizability check of the racy Treiber stack.
pub fn treiber() -> Lincheck<SeqStack, Treiber> {
    Lincheck::new(SeqStack::default(), Treiber::new, Treiber::apply, |r| {
        if r.below(2) == 0 {
            SOp::Push(1 + r.below(5) as usize)
        } else {
            SOp::Pop
        }
    })
}
