//! `cmc validate`: a glue log's verdict is its exit code; a log that cannot be
//! read is bad input.

mod common;

use common::{cmc, text, VALIDATE_GLUE_LOG};

/// Node 0's first request under the reqack core (Rust or C), as a correct
/// glue logs it (the fixture the World's own glue tests read too).
const FIRST_REQUEST: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../cores/reqack/first_request.gluelog"
));

fn validate(log: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("glue.log"), log).unwrap();
    let output = cmc(&VALIDATE_GLUE_LOG, dir.path());
    let (stdout, stderr) = text(&output);
    (output.status.code(), stdout, stderr)
}

#[test]
fn a_valid_log_passes_and_says_what_it_replayed() {
    let (code, stdout, stderr) = validate(FIRST_REQUEST);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("valid. 4 events replayed"), "{stdout}");
    assert!(stdout.contains("1 message(s) in flight"), "{stdout}");
}

#[test]
fn a_glue_that_breaks_the_contract_fails_with_the_first_bad_record() {
    let delivered_twice = format!(
        "{FIRST_REQUEST}event 1 RECV src=0 payload=0100000000000000\n\
         output 1 PERSIST id=4 payload=01000000\n\
         event 1 RECV src=0 payload=0100000000000000\n"
    );
    let (code, stdout, stderr) = validate(&delivered_twice);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("INVALID at line 11"), "{stdout}");
    assert!(stdout.contains("more often than it was sent"), "{stdout}");
    assert!(stdout.contains("  11: event 1 RECV"), "{stdout}");
}

#[test]
fn an_unreadable_log_is_bad_input() {
    for log in ["", "cmc-glue-log 1\nevent 0 NAP\n", "not a log\n"] {
        let (code, stdout, stderr) = validate(log);
        assert_eq!(code, Some(2), "{log:?}: {stdout}{stderr}");
        assert!(stderr.contains("glue log glue.log"), "{stderr}");
    }
}
