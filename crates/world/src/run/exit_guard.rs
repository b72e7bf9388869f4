//! [`ExitGuard`]: a core calling `exit` in a process that runs cores outside
//! any supervisor (`cmc replay`, `cmc explore`) is reported as such.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Set while cores run in this process outside any supervisor (`cmc replay`).
static CORES_RUNNING: AtomicBool = AtomicBool::new(false);

extern "C" fn exit_while_cores_run() {
    if CORES_RUNNING.load(Ordering::SeqCst) {
        eprintln!(
            "CORE EXITED: a core ended the process while it ran in it; \
             nothing printed before this line is a verdict"
        );
        // SAFETY: _exit ends the process; nothing runs after it.
        unsafe { libc::_exit(2) }
    }
}

/// While it lives, a core that calls `exit` (with any code) in this process
/// ends it with exit code 2 and a `CORE EXITED` line instead: for runs of
/// cores outside a supervisor, such as `cmc replay` (kept in-process so that
/// gdb sees the core). `_exit` and signals are not caught.
///
/// ```no_run
/// use cmc_world::run::exit_guard::ExitGuard;
///
/// let guard = ExitGuard::new();
/// // ... run cores in this process (e.g. replay a trace): a core calling
/// // exit() here ends the process with code 2 and `CORE EXITED` ...
/// drop(guard); // from here, exit() behaves as usual again
/// ```
pub struct ExitGuard(());

impl ExitGuard {
    /// Arms the guard.
    pub fn new() -> ExitGuard {
        static REGISTERED: OnceLock<()> = OnceLock::new();
        REGISTERED.get_or_init(|| {
            // SAFETY: registering a handler that only reads an atomic,
            // writes to stderr and calls _exit.
            unsafe { libc::atexit(exit_while_cores_run) };
        });
        CORES_RUNNING.store(true, Ordering::SeqCst);
        ExitGuard(())
    }
}

impl Default for ExitGuard {
    fn default() -> Self {
        ExitGuard::new()
    }
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        CORES_RUNNING.store(false, Ordering::SeqCst);
    }
}
