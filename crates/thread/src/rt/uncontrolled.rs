//! Detects threads the checker does not control (a `std::thread::spawn` inside a checked
//! execution): such a thread runs for real, outside every schedule, and the instrumented
//! objects it touches fall back to std behaviour. When it touches an object already used by
//! an execution that is still running, the access panics in that thread with a clear
//! message, and the execution stops with [`Stop::Uncontrolled`](super::Stop::Uncontrolled).
//! An object the foreign thread creates itself is not detected.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Epochs of the executions running now (in any explorer of the process).
static LIVE: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Reports of foreign accesses: (epoch, message).
static REPORTS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
/// Whether `REPORTS` may be non-empty (spares the lock on the common path).
static ANY: AtomicBool = AtomicBool::new(false);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks execution `epoch` as running.
pub fn enter(epoch: u64) {
    lock(&LIVE).push(epoch);
}

/// Marks execution `epoch` as finished and forgets its reports.
pub fn leave(epoch: u64) {
    lock(&LIVE).retain(|&e| e != epoch);
    if ANY.load(Ordering::Acquire) {
        lock(&REPORTS).retain(|(e, _)| *e != epoch);
    }
}

/// Whether execution `epoch` is running now (in any explorer of the process).
pub fn running(epoch: u64) -> bool {
    epoch != 0 && lock(&LIVE).contains(&epoch)
}

/// Called on an access from a thread with no execution to an object registered in
/// execution `epoch`: if that execution is running, records the access and panics.
pub fn check(epoch: u64, what: &str, location: &std::panic::Location<'_>) {
    if !running(epoch) {
        return;
    }
    let message = format!(
        "{what} used at {location} by a thread the checker does not control \
         (std::thread::spawn inside a checked execution?); spawn it with \
         cmc_thread::thread::spawn (or shim::thread::spawn)"
    );
    lock(&REPORTS).push((epoch, message.clone()));
    ANY.store(true, Ordering::Release);
    panic!("cmc: {message}");
}

/// The first report for execution `epoch`, if any.
pub fn take(epoch: u64) -> Option<String> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    let reports = lock(&REPORTS);
    reports
        .iter()
        .find(|(e, _)| *e == epoch)
        .map(|(_, m)| m.clone())
}
