//! A model that passes only because cmc's eventual-visibility rule cut stale reads says so
//! on stderr (the line a loom user sees beside the test's verdict); a model the rule never
//! applied to prints nothing of it. Each model runs in a child process (this test binary,
//! re-run on itself) whose stderr the test reads.

use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

const CHILD: &str = "CMC_LOOM_STALE_READS_CHILD";

/// Runs test `name` of this binary in a child process: its model when `CHILD` is set.
/// Returns the child's stderr once it passed.
fn stderr_of_passing(name: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name}: {stderr}");
    stderr
}

#[test]
fn a_pass_within_the_stale_read_bound_says_so() {
    if std::env::var_os(CHILD).is_some() {
        // A consumer polling a queue's tail while it touches the head with a
        // read-modify-write (as thingbuf's `pop_ref` does), and a producer that closes it;
        // with a preemption bound, as thingbuf's CI runs its models.
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(2);
        return builder.check(|| {
            let tail = Arc::new(AtomicUsize::new(0));
            let head = Arc::new(AtomicUsize::new(0));
            let producer = {
                let tail = tail.clone();
                thread::spawn(move || tail.fetch_or(1, SeqCst))
            };
            while tail.load(Acquire) == 0 {
                head.fetch_or(0, SeqCst);
                thread::yield_now();
            }
            producer.join().unwrap();
        });
    }
    let stderr = stderr_of_passing("a_pass_within_the_stale_read_bound_says_so");
    assert!(
        stderr.contains("cmc: stale reads bounded ") && stderr.contains("were not explored"),
        "{stderr}"
    );
}

#[test]
fn a_pass_the_rule_never_applied_to_says_nothing_of_it() {
    if std::env::var_os(CHILD).is_some() {
        // Two counts and a read of the total once both are done: no load reads stale.
        return loom::model(|| {
            let count = Arc::new(AtomicUsize::new(0));
            let other = {
                let count = count.clone();
                thread::spawn(move || count.fetch_add(1, Relaxed))
            };
            count.fetch_add(1, Relaxed);
            other.join().unwrap();
            assert_eq!(count.load(Relaxed), 2);
        });
    }
    let stderr = stderr_of_passing("a_pass_the_rule_never_applied_to_says_nothing_of_it");
    assert!(!stderr.contains("stale reads"), "{stderr}");
}
