//! `loom::sync`: cmc's primitives, and loom's `Notify`.

pub use cmc_thread::sync::{
    atomic, mpsc, Arc, Barrier, Condvar, LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard,
    RwLockWriteGuard, TryLockResult, WaitTimeoutResult,
};

/// loom's `Notify`: `wait` returns once `notify` was called since the last `wait`
/// returned (one stored notification, no spurious wake-ups).
#[derive(Debug, Default)]
pub struct Notify {
    notified: Mutex<bool>,
    cv: Condvar,
}

impl Notify {
    /// A `Notify` with no stored notification.
    pub fn new() -> Notify {
        Notify::default()
    }

    /// Stores a notification and wakes a waiter.
    pub fn notify(&self) {
        *self.notified.lock().unwrap() = true;
        self.cv.notify_one();
    }

    /// Waits for a notification and consumes it.
    pub fn wait(&self) {
        let mut notified = self.notified.lock().unwrap();
        while !*notified {
            notified = self.cv.wait(notified).unwrap();
        }
        *notified = false;
    }
}
