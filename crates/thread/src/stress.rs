//! Stress mode, a complement to model checking (as Lincheck's): the same model runs many
//! times on real OS threads, with std's behaviour behind every cmc type (outside an
//! execution they fall back to std), so code the checker does not instrument (std
//! primitives, FFI, real weak memory) runs too. It finds bugs only by chance and cannot
//! replay them; a pass is no proof. Failures: a panic in any thread (the first panic's
//! message, not the join error it turns into), or an iteration that does not finish within
//! the timeout (a deadlock or livelock on real threads; its threads are left running).

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A stress run that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StressFailure {
    /// The iteration (from 0) that failed.
    pub iteration: u64,
    /// The first panic message, or why the iteration did not finish.
    pub message: String,
}

impl std::fmt::Display for StressFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cmc stress: iteration {} failed on real threads: {} \
             (stress runs cannot be replayed; model-check the same code to get a schedule)",
            self.iteration, self.message
        )
    }
}

/// Runs `model` `iterations` times on real threads; each iteration must finish within
/// `timeout`. Returns the iterations run, or the first failure.
pub fn stress<F: Fn() + Send + Sync + 'static>(
    iterations: u64,
    timeout: Duration,
    model: F,
) -> Result<u64, StressFailure> {
    crate::rt::install_panic_hook();
    let active = ActiveRun::start();
    let (tx, rx) = mpsc::channel();
    let runner = std::thread::Builder::new()
        .name("cmc-stress".into())
        .spawn(move || {
            for i in 0..iterations {
                let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&model)).is_ok();
                if tx.send((i, ok)).is_err() || !ok {
                    return;
                }
            }
        });
    if let Err(e) = runner {
        return Err(StressFailure {
            iteration: 0,
            message: format!("cannot start the stress thread: {e}"),
        });
    }
    let mut done = 0;
    while done < iterations {
        let started = Instant::now();
        match rx.recv_timeout(timeout) {
            Ok((_, true)) => done += 1,
            Ok((i, false)) => {
                let message = active.first_panic().unwrap_or_else(|| "panic".to_string());
                return Err(StressFailure {
                    iteration: i,
                    message,
                });
            }
            Err(_) => {
                return Err(StressFailure {
                    iteration: done,
                    message: format!(
                        "it did not finish within {:?} (deadlock or livelock on real threads?)",
                        started.elapsed()
                    ),
                })
            }
        }
    }
    Ok(done)
}

/// Registers a stress run with the panic hook while it lasts.
struct ActiveRun;

impl ActiveRun {
    fn start() -> Self {
        let mut s = lock();
        if s.0 == 0 {
            s.1 = None;
        }
        s.0 += 1;
        ActiveRun
    }

    /// The first panic message recorded (by any stress run of the process).
    fn first_panic(&self) -> Option<String> {
        lock().1.clone()
    }
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        lock().0 -= 1;
    }
}

fn lock() -> std::sync::MutexGuard<'static, (usize, Option<String>)> {
    crate::rt::STRESS_PANICS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
