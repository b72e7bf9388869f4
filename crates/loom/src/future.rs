//! `loom::future`: `block_on` (polls on the calling model thread, parking it while the
//! future is pending) and `AtomicWaker`.

use crate::sync::Mutex;
use crate::thread::{self, Thread};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `f` to completion on the calling thread: polls it, and parks while it is pending
/// (its waker unparks the thread). As loom's, it may wake once without being woken: its
/// first wait is a park that may time out (both outcomes are explored), so a future is
/// polled again spuriously at most once.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(std::sync::Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let mut first_wait = true;
    loop {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
        if std::mem::take(&mut first_wait) {
            cmc_thread::thread::park_timeout(std::time::Duration::from_secs(1));
        } else {
            thread::park();
        }
    }
}

/// A slot for one waker, registered by a consumer and woken by a producer.
#[derive(Debug, Default)]
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// An empty slot.
    pub fn new() -> AtomicWaker {
        AtomicWaker::default()
    }

    /// Registers `waker`, replacing the one registered before.
    pub fn register_by_ref(&self, waker: &Waker) {
        *self.waker.lock().unwrap() = Some(waker.clone());
    }

    /// Registers `waker`, replacing the one registered before.
    pub fn register(&self, waker: Waker) {
        *self.waker.lock().unwrap() = Some(waker);
    }

    /// Wakes the registered waker, if any, and empties the slot.
    pub fn wake(&self) {
        if let Some(w) = self.take_waker() {
            w.wake();
        }
    }

    /// Empties the slot, returning its waker.
    pub fn take_waker(&self) -> Option<Waker> {
        self.waker.lock().unwrap().take()
    }
}
