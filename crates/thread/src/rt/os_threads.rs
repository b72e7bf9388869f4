//! Detects an OS thread started inside a checked execution (a `std::thread::spawn` that
//! bypasses the shim), Linux only. Every explorer thread gets a name of its own
//! (`cmc-x<n>`); Linux gives a thread started without a name (`std::thread::spawn`) the name
//! of the thread that started it, so any other thread of the process carrying the
//! explorer's name was started by the model. After every execution the number of threads
//! of the process (`/proc/self/task`'s link count) is compared with the last one seen, and
//! only when it changed are the threads' names read.
//!
//! Not detected: a thread that already ended when the execution ends (joined inside it), a
//! thread given its own name with `std::thread::Builder::name`, and every thread elsewhere
//! than on Linux.

use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh name for an explorer thread (at most 15 bytes: Linux keeps that many).
pub fn explorer_name() -> String {
    format!("cmc-x{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The watch of one explorer thread (create it on that thread).
pub struct OsThreadWatch {
    #[cfg(target_os = "linux")]
    own: Option<(String, String)>,
    #[cfg(target_os = "linux")]
    links: u64,
}

#[cfg(target_os = "linux")]
fn links() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/task").map_or(0, |m| m.nlink())
}

impl OsThreadWatch {
    /// Watches for threads started from the calling (explorer) thread.
    pub fn new() -> Self {
        #[cfg(target_os = "linux")]
        {
            let own = std::fs::read_to_string("/proc/thread-self/comm")
                .ok()
                .zip(std::fs::read_link("/proc/thread-self").ok())
                .and_then(|(comm, link)| {
                    let tid = link.file_name()?.to_string_lossy().into_owned();
                    let comm = comm.trim_end().to_string();
                    comm.starts_with("cmc-x").then_some((comm, tid))
                });
            OsThreadWatch {
                own,
                links: links(),
            }
        }
        #[cfg(not(target_os = "linux"))]
        OsThreadWatch {}
    }

    /// A report if a thread started by the model since the watch began is still running.
    pub fn check(&mut self) -> Option<String> {
        #[cfg(target_os = "linux")]
        {
            let (comm, tid) = self.own.as_ref()?;
            let now = links();
            if now == self.links {
                return None;
            }
            self.links = now;
            let started = std::fs::read_dir("/proc/self/task")
                .ok()?
                .flatten()
                .find(|task| {
                    task.file_name().to_string_lossy() != *tid
                        && std::fs::read_to_string(task.path().join("comm"))
                            .is_ok_and(|c| c.trim_end() == comm)
                })?;
            Some(format!(
                "an OS thread the checker does not control (thread id {}) was started inside a \
                 checked execution and still runs (std::thread::spawn?); spawn it with \
                 cmc_thread::thread::spawn (or shim::thread::spawn)",
                started.file_name().to_string_lossy()
            ))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}
