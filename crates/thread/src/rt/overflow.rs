//! Stack overflow of a virtual thread, reported as such. A coroutine stack ends in a guard
//! page; touching it raises SIGSEGV, which std's handler does not recognise (it only knows
//! the OS thread's own stack) and the process dies with a bare "segmentation fault". This
//! handler (Linux) checks whether the faulting address lies in or just below the guard page of the
//! virtual thread running on the faulting OS thread; if so it prints which thread
//! overflowed and how big its stack was, and exits with status 134 (the process cannot
//! continue: the thread's frames are gone). Any other fault goes to the previous handler.

use std::cell::Cell;

/// The virtual thread running on this OS thread (limit 0 when none runs).
#[derive(Clone, Copy)]
pub struct Running {
    /// The lowest address of its stack mapping: the start of its guard page.
    pub limit: usize,
    /// The mapping's size in bytes, guard page included.
    pub size: usize,
    /// Its virtual thread id.
    pub thread: usize,
}

thread_local! {
    static RUNNING: Cell<Running> = const { Cell::new(Running { limit: 0, size: 0, thread: 0 }) };
}

/// Records the virtual thread about to run on this OS thread (`None`: back in the driver).
pub fn set_running(running: Option<Running>) {
    let none = Running {
        limit: 0,
        size: 0,
        thread: 0,
    };
    RUNNING.with(|r| r.set(running.unwrap_or(none)));
}

/// Faults this far below a stack's guard page count as its overflow (a large frame can
/// jump past the guard page).
#[cfg(target_os = "linux")]
const SLACK: usize = 1 << 20;

#[cfg(target_os = "linux")]
mod imp {
    use super::{RUNNING, SLACK};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    /// The page size (the guard page's), read at installation.
    static PAGE: AtomicUsize = AtomicUsize::new(4096);

    struct Previous {
        segv: libc::sigaction,
        bus: libc::sigaction,
    }

    // SAFETY: plain C data, written once before the handler is installed.
    unsafe impl Send for Previous {}
    // SAFETY: as above.
    unsafe impl Sync for Previous {}

    static PREVIOUS: OnceLock<Previous> = OnceLock::new();

    /// Appends the decimal digits of `n` to `buf` at `len`.
    fn push_number(buf: &mut [u8], len: &mut usize, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for &d in &digits[i..] {
            if *len < buf.len() {
                buf[*len] = d;
                *len += 1;
            }
        }
    }

    fn push(buf: &mut [u8], len: &mut usize, s: &[u8]) {
        for &b in s {
            if *len < buf.len() {
                buf[*len] = b;
                *len += 1;
            }
        }
    }

    extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        let running = RUNNING.with(|r| r.get());
        let page = PAGE.load(Ordering::Relaxed);
        let guard_end = running.limit + page;
        if running.limit != 0 && addr < guard_end && addr >= running.limit.saturating_sub(SLACK) {
            let mut buf = [0u8; 320];
            let mut len = 0;
            push(&mut buf, &mut len, b"\ncmc: virtual thread ");
            push_number(&mut buf, &mut len, running.thread);
            push(&mut buf, &mut len, b" overflowed its stack of ");
            push_number(&mut buf, &mut len, running.size - page);
            push(
                &mut buf,
                &mut len,
                b" bytes; raise Checker::stack_size (or thread::Builder::stack_size). \
                  The execution cannot continue: the process exits with status 134.\n",
            );
            // SAFETY: async-signal-safe calls on a stack buffer.
            unsafe {
                libc::write(2, buf.as_ptr().cast(), len);
                libc::_exit(134);
            }
        }
        // Not ours: restore the previous handler; the fault repeats and reaches it.
        if let Some(prev) = PREVIOUS.get() {
            let action = if sig == libc::SIGBUS {
                &prev.bus
            } else {
                &prev.segv
            };
            // SAFETY: restoring a sigaction read from the kernel.
            unsafe { libc::sigaction(sig, action, std::ptr::null_mut()) };
        }
    }

    /// Installs the handler once per process, and makes sure the calling OS thread has an
    /// alternate signal stack (the overflowed stack cannot run the handler).
    pub fn install() {
        PREVIOUS.get_or_init(|| {
            // SAFETY: zeroed sigaction structs are valid; the calls follow their contracts.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                if page > 0 {
                    PAGE.store(page as usize, Ordering::Relaxed);
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut prev = Previous {
                    segv: std::mem::zeroed(),
                    bus: std::mem::zeroed(),
                };
                libc::sigaction(libc::SIGSEGV, &action, &mut prev.segv);
                libc::sigaction(libc::SIGBUS, &action, &mut prev.bus);
                prev
            }
        });
        ALT_STACK.with(|_| {});
    }

    /// An alternate signal stack this module set up for its thread, freed at thread exit.
    struct AltStack(Option<Vec<u8>>);

    thread_local! {
        static ALT_STACK: AltStack = AltStack::new();
    }

    impl AltStack {
        fn new() -> Self {
            // SAFETY: querying and setting the alternate stack of the calling thread.
            unsafe {
                let mut old: libc::stack_t = std::mem::zeroed();
                libc::sigaltstack(std::ptr::null(), &mut old);
                if old.ss_flags & libc::SS_DISABLE == 0 {
                    return AltStack(None); // std set one up already
                }
                let mut mem = vec![0u8; 64 * 1024];
                let stack = libc::stack_t {
                    ss_sp: mem.as_mut_ptr().cast(),
                    ss_flags: 0,
                    ss_size: mem.len(),
                };
                libc::sigaltstack(&stack, std::ptr::null_mut());
                AltStack(Some(mem))
            }
        }
    }

    impl Drop for AltStack {
        fn drop(&mut self) {
            if self.0.is_some() {
                // SAFETY: disabling the alternate stack before its memory is freed.
                unsafe {
                    let disable = libc::stack_t {
                        ss_sp: std::ptr::null_mut(),
                        ss_flags: libc::SS_DISABLE,
                        ss_size: 0,
                    };
                    libc::sigaltstack(&disable, std::ptr::null_mut());
                }
            }
        }
    }
}

/// Installs the stack-overflow handler (Linux; elsewhere an overflow stays a crash).
pub fn install() {
    #[cfg(target_os = "linux")]
    imp::install();
}
