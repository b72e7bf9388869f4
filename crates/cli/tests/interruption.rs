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

/// Makes worker 0's file of the timely checkpoint in `dir` slow to read
/// ([`make_slow_to_read`]) and lists it at its new length in the re-sealed
/// manifest, as a checkpoint whose files are large lists them.
fn make_timely_worker_file_slow_to_read(dir: &Path) {
    let worker = dir.join("process-0/worker-0.bin");
    make_slow_to_read(&worker);
    let manifest = dir.join("process-0/manifest.json");
    let sealed = std::fs::read_to_string(&manifest).unwrap();
    let body = cmc_search::sealed::unseal(&sealed).expect("a sealed manifest");
    let mut parsed: serde_json::Value = serde_json::from_str(body).unwrap();
    let listed = parsed["workers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|file| file["worker"] == 0)
        .expect("worker 0 is listed");
    listed["bytes"] = std::fs::metadata(&worker).unwrap().len().into();
    let edited = serde_json::to_string_pretty(&parsed).unwrap();
    std::fs::write(&manifest, cmc_search::sealed::seal(&edited)).unwrap();
}

/// The timely engine's resume reads its worker files before any worker
/// starts; one signal ends that read at once as it ends the native
/// engine's, with the interrupted outcome and the checkpoint untouched.
#[test]
fn one_signal_stops_a_timely_resume_while_it_reads_its_worker_files() {
    let dir = tempfile::tempdir().unwrap();
    let saved = cmc(
        &[
            "check",
            "two-phase",
            "RM=3",
            "--engine",
            "timely",
            "--checkpoint",
            "ckpt",
            "--checkpoint-every",
            "0.001",
        ],
        dir.path(),
    );
    assert_eq!(saved.status.code(), Some(0), "{:?}", text(&saved));
    make_timely_worker_file_slow_to_read(&dir.path().join("ckpt"));
    let before = checkpoint_files(&dir.path().join("ckpt/process-0"));
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let resume = spawn_cmc(
            &["check", "--resume", "ckpt", "--engine", "timely", "--json"],
            dir.path(),
        );
        let output = signal_once(resume, signal, Duration::from_millis(500));
        let report = report(&output);
        assert_eq!(output.status.code(), Some(3), "{report}");
        assert_eq!(report["verdict"], "interrupted");
        let stderr = text(&output).1;
        assert!(
            stderr.contains("resume this timely run with: cmc check --resume ckpt --engine timely"),
            "{stderr}"
        );
        assert_eq!(
            checkpoint_files(&dir.path().join("ckpt/process-0")),
            before,
            "the checkpoint was changed"
        );
    }
}

/// The names, lengths and modification times of the files in `dir`.
fn checkpoint_files(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                metadata.len(),
                metadata.modified().unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}
