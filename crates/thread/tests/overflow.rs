//! A stack overflow in a virtual thread is reported as such, not as a
//! bare segmentation fault. The overflow ends the process, so the test runs the overflowing
//! model in a child process (this test binary, re-run on itself) and reads its stderr.

use cmc_thread::{thread, Checker};

const CHILD: &str = "CMC_OVERFLOW_CHILD";

fn recurse(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 64]);
    if n == u64::MAX {
        return 0;
    }
    frame[3] + recurse(n + 1)
}

#[test]
fn a_virtual_thread_stack_overflow_is_reported() {
    if std::env::var_os(CHILD).is_some() {
        let _ = Checker::new().stack_size(64 * 1024).check(|| {
            thread::spawn(|| recurse(0)).join().unwrap();
        });
        unreachable!("the overflow ends the process");
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_virtual_thread_stack_overflow_is_reported",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(134), "{stderr}");
    assert!(
        stderr.contains("cmc: virtual thread 1 overflowed its stack of "),
        "{stderr}"
    );
    assert!(stderr.contains("raise Checker::stack_size"), "{stderr}");
}
