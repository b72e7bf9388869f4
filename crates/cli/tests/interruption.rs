//! One SIGINT or SIGTERM stops any stage of a run, whatever its strategy,
//! with the interrupted outcome: exit code 3 and a summary, never a silent
//! end or a second signal needed.

mod common;

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use common::{cmc, spawn_cmc, text};

/// How long a stopped run may take to end.
const PROMPTLY: Duration = Duration::from_secs(5);

/// Sends `signal` to `child` after `after`, and returns its output once it
/// ended, failing the test (after killing it) if it took longer than
/// [`PROMPTLY`] from the signal.
fn signal_once(mut child: Child, signal: i32, after: Duration) -> Output {
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the signal"
    );
    // SAFETY: signalling a process this test started and still owns.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let signalled = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if signalled.elapsed() > PROMPTLY {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!(
                "one signal {signal} did not end the run within {PROMPTLY:?}: {:?}",
                text(&output)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn report(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {:?}", text(output)))
}

/// A depth-first search of a bundled model stops as a breadth-first one
/// does: with its summary, saying that no checkpoint could be saved.
#[test]
fn one_signal_stops_a_depth_first_search_with_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let run = spawn_cmc(
            &["check", "two-phase", "RM=9", "--dfs", "--progress", "off"],
            dir.path(),
        );
        let output = signal_once(run, signal, Duration::from_millis(700));
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(3), "{stdout}{stderr}");
        assert!(stdout.contains("The search was interrupted"), "{stdout}");
        assert!(
            stdout.contains("checkpoints are for breadth-first search"),
            "{stdout}"
        );
        assert!(stdout.contains("distinct states found"), "{stdout}");
    }
}

/// Appends a hole of 64 GiB to `file`: a file that takes a minute to read
/// (a checkpoint on a slow disk), written in no time.
fn make_slow_to_read(file: &Path) {
    let file = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    let length = file.metadata().unwrap().len();
    file.set_len(length + (64 << 30)).unwrap();
}

/// Resuming reads and checks every file of the checkpoint before the
/// search goes on; a signal then ends the resume at once, leaving the
/// checkpoint as it was.
#[test]
fn one_signal_stops_a_resume_while_it_reads_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let saved = cmc(
        &["check", "two-phase", "RM=3", "--checkpoint", "ckpt"],
        dir.path(),
    );
    assert_eq!(saved.status.code(), Some(0), "{:?}", text(&saved));
    make_slow_to_read(&dir.path().join("ckpt/checkpoint/table.bin"));
    let resume = spawn_cmc(&["check", "--resume", "ckpt", "--json"], dir.path());
    let output = signal_once(resume, libc::SIGTERM, Duration::from_millis(500));
    let report = report(&output);
    assert_eq!(output.status.code(), Some(3), "{report}");
    assert_eq!(report["verdict"], "interrupted");
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("resume with: cmc check --resume ckpt"),
        "{report}"
    );
}
