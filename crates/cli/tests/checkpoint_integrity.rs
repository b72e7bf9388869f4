//! A checkpoint that was damaged, edited, mixed with another, reached through
//! a symbolic link or shared by two runs is refused (exit 2, naming the
//! file), never resumed into figures that match no real run; and a run
//! killed right after it started resumes to the figures of an uninterrupted one.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{cmc, cmc_within, mkfifo, spawn_cmc, text};

/// The arguments of `cmc check` on `model` (its name and parameters) with
/// checkpoints in `name`.
fn checkpointing<'a>(name: &'a str, model: &[&'a str]) -> Vec<&'a str> {
    [
        &["check"][..],
        model,
        &["--checkpoint", name, "--progress", "off"],
    ]
    .concat()
}

/// Runs `model` (its name and parameters) to completion with checkpoints in
/// `dir/name` (only the first one, taken at the start, is made in so short a run).
fn checkpointed(dir: &Path, name: &str, model: &[&str]) {
    let output = cmc(&checkpointing(name, model), dir);
    assert_eq!(output.status.code(), Some(0), "{:?}", text(&output));
}

fn resume(dir: &Path, name: &str) -> Output {
    cmc(
        &["check", "--resume", name, "--json", "--progress", "off"],
        dir,
    )
}

/// The JSON report of a run.
fn report(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {:?}", text(output)))
}

/// The figures an uninterrupted run of `two-phase RM=rm` reports.
fn uninterrupted(dir: &Path, rm: u32) -> [serde_json::Value; 4] {
    let rm = format!("RM={rm}");
    let output = cmc(
        &["check", "two-phase", &rm, "--json", "--progress", "off"],
        dir,
    );
    figures(&report(&output))
}

fn figures(report: &serde_json::Value) -> [serde_json::Value; 4] {
    ["verdict", "distinct_states", "states_generated", "depth"].map(|key| report[key].clone())
}

/// Asserts that `output` is a refusal (exit 2) that names `file`.
fn assert_refused(output: &Output, file: &str) {
    let (stdout, stderr) = text(output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains(file) || stderr.contains(file),
        "the refusal names {file}: {stdout}{stderr}"
    );
}

/// Flips the byte at `offset` of `path`, or appends one to an empty file.
fn flip_byte(path: &Path, offset: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    if bytes.is_empty() {
        bytes.push(0);
    } else {
        let offset = offset.min(bytes.len() - 1);
        bytes[offset] ^= 0x01;
    }
    std::fs::write(path, bytes).unwrap();
}

/// Waits until the run writing to `dir` has made its first checkpoint.
fn wait_for_checkpoint(dir: &Path) {
    let started = Instant::now();
    while !dir.join("checkpoint/manifest").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no checkpoint in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_untouched_checkpoint_resumes_to_the_uninterrupted_figures() {
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "ckpt", &["two-phase", "RM=5"]);
    let resumed = resume(dir.path(), "ckpt");
    assert_eq!(resumed.status.code(), Some(0), "{:?}", text(&resumed));
    assert_eq!(figures(&report(&resumed)), uninterrupted(dir.path(), 5));
}

#[test]
fn a_flipped_byte_in_any_checkpoint_file_is_refused_naming_it() {
    for (file, offset) in [
        ("checkpoint/table.bin", 8),
        ("checkpoint/level.bin", 20),
        ("checkpoint/next.bin", 0),
        ("checkpoint/manifest", 300),
        // A record of the initial state (later records are rewritten on resume).
        ("trace.log", 5),
    ] {
        let dir = tempfile::tempdir().unwrap();
        checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
        flip_byte(&dir.path().join("ckpt").join(file), offset);
        assert_refused(&resume(dir.path(), "ckpt"), &format!("ckpt/{file}"));
    }
}

#[test]
fn an_edited_counter_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
    let manifest = dir.path().join("ckpt/checkpoint/manifest");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let edited = original.replace("\"states_generated\": 1,", "\"states_generated\": 7,");
    assert_ne!(edited, original, "the counter is in the manifest");
    std::fs::write(&manifest, edited).unwrap();
    assert_refused(&resume(dir.path(), "ckpt"), "ckpt/checkpoint/manifest");
}

#[test]
fn resealed_counters_out_of_range_are_refused_at_once() {
    for (from, to) in [
        (
            "\"table_capacity\": ",
            "\"table_capacity\": 4611686018427387904",
        ),
        ("\"wall_seconds\": ", "\"wall_seconds\": -5"),
        (
            "\"trace_next_block\": ",
            "\"trace_next_block\": 4611686018427387904",
        ),
        ("\"states_generated\": ", "\"states_generated\": 0"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
        let manifest = dir.path().join("ckpt/checkpoint/manifest");
        let sealed = std::fs::read_to_string(&manifest).unwrap();
        let body = cmc_search::sealed::unseal(&sealed).expect("sealed");
        let line = body
            .lines()
            .find(|line| line.trim_start().starts_with(from));
        let line = line.unwrap_or_else(|| panic!("{from} in {body}"));
        let comma = if line.ends_with(',') { "," } else { "" };
        let edited = body.replace(line, &format!("    {to}{comma}"));
        std::fs::write(&manifest, cmc_search::sealed::seal(&edited)).unwrap();
        let args = ["check", "--resume", "ckpt", "--progress", "off"];
        let output = cmc_within(&args, dir.path(), Duration::from_secs(20));
        assert_refused(&output, "ckpt/");
        assert!(
            !text(&output).1.contains("panicked"),
            "{to}: {:?}",
            text(&output)
        );
    }
}

#[test]
fn a_checkpoint_file_that_is_a_fifo_is_refused_at_once() {
    for file in ["checkpoint/manifest", "checkpoint/table.bin", "trace.log"] {
        let dir = tempfile::tempdir().unwrap();
        checkpointed(dir.path(), "ckpt", &["two-phase", "RM=3"]);
        let path = dir.path().join("ckpt").join(file);
        std::fs::remove_file(&path).unwrap();
        mkfifo(&path);
        let args = ["check", "--resume", "ckpt", "--progress", "off"];
        let output = cmc_within(&args, dir.path(), Duration::from_secs(20));
        assert_refused(&output, &format!("ckpt/{file}"));
        assert!(
            text(&output).1.contains("FIFO"),
            "{file}: {:?}",
            text(&output)
        );
    }
}

#[test]
fn files_swapped_between_two_checkpoints_are_refused() {
    // Checkpoints of two models: the same files, different contents.
    for file in ["table.bin", "level.bin"] {
        let dir = tempfile::tempdir().unwrap();
        checkpointed(dir.path(), "two-phase", &["two-phase", "RM=4"]);
        checkpointed(dir.path(), "tcommit", &["tcommit", "RM=4"]);
        let (two_phase, tcommit) = (
            dir.path().join("two-phase/checkpoint").join(file),
            dir.path().join("tcommit/checkpoint").join(file),
        );
        let swap = dir.path().join("swap");
        std::fs::rename(&two_phase, &swap).unwrap();
        std::fs::rename(&tcommit, &two_phase).unwrap();
        std::fs::rename(&swap, &tcommit).unwrap();
        assert_refused(
            &resume(dir.path(), "two-phase"),
            &format!("two-phase/checkpoint/{file}"),
        );
        assert_refused(
            &resume(dir.path(), "tcommit"),
            &format!("tcommit/checkpoint/{file}"),
        );
    }
    // A whole checkpoint moved next to another run's trace log.
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "two-phase", &["two-phase", "RM=4"]);
    checkpointed(dir.path(), "tcommit", &["tcommit", "RM=4"]);
    std::fs::remove_dir_all(dir.path().join("two-phase/checkpoint")).unwrap();
    std::fs::rename(
        dir.path().join("tcommit/checkpoint"),
        dir.path().join("two-phase/checkpoint"),
    )
    .unwrap();
    assert_refused(&resume(dir.path(), "two-phase"), "two-phase/trace.log");
}

#[test]
fn a_new_run_refuses_a_directory_holding_a_checkpoint_unless_told_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
    let args = ["check", "two-phase", "RM=3", "--checkpoint", "ckpt"];
    let refused = cmc(&args, dir.path());
    assert_refused(&refused, "ckpt/checkpoint");
    assert!(text(&refused).1.contains("--checkpoint-overwrite"));
    let overwritten = cmc(
        &[&args[..], &["--checkpoint-overwrite", "--progress", "off"]].concat(),
        dir.path(),
    );
    assert_eq!(
        overwritten.status.code(),
        Some(0),
        "{:?}",
        text(&overwritten)
    );
    // The directory now holds the new run's checkpoint.
    let resumed = resume(dir.path(), "ckpt");
    assert_eq!(figures(&report(&resumed)), uninterrupted(dir.path(), 3));
}

#[test]
fn a_second_run_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = spawn_cmc(
        &checkpointing("ckpt", &["two-phase", "RM=9", "--workers", "1"]),
        dir.path(),
    );
    wait_for_checkpoint(&dir.path().join("ckpt"));
    let second = cmc(
        &[
            "check",
            "two-phase",
            "RM=3",
            "--checkpoint",
            "ckpt",
            "--checkpoint-overwrite",
        ],
        dir.path(),
    );
    let resumed = resume(dir.path(), "ckpt");
    let still_running = first.try_wait().unwrap().is_none();
    let _ = first.kill();
    let _ = first.wait();
    assert!(still_running, "the first run was still running");
    for output in [second, resumed] {
        assert_refused(&output, "ckpt/lock");
        assert!(text(&output).0.contains("in use") || text(&output).1.contains("in use"));
    }
}

#[test]
fn symbolic_links_in_the_directory_are_refused() {
    // A data file of the checkpoint replaced by a link to an identical copy.
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
    let level = dir.path().join("ckpt/checkpoint/level.bin");
    let copy = dir.path().join("level-copy.bin");
    std::fs::rename(&level, &copy).unwrap();
    std::os::unix::fs::symlink(&copy, &level).unwrap();
    let refused = resume(dir.path(), "ckpt");
    assert_refused(&refused, "ckpt/checkpoint/level.bin");
    assert!(
        text(&refused).1.contains("symbolic link"),
        "{:?}",
        text(&refused)
    );

    // The checkpoint directory itself replaced by a link to an identical copy.
    let dir = tempfile::tempdir().unwrap();
    checkpointed(dir.path(), "ckpt", &["two-phase", "RM=4"]);
    let checkpoint = dir.path().join("ckpt/checkpoint");
    let copy = dir.path().join("checkpoint-copy");
    std::fs::rename(&checkpoint, &copy).unwrap();
    std::os::unix::fs::symlink(&copy, &checkpoint).unwrap();
    assert_refused(&resume(dir.path(), "ckpt"), "ckpt/checkpoint");

    // A new run whose trace log would be written through a link.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ckpt")).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("ckpt/trace.log")).unwrap();
    let refused = cmc(
        &["check", "two-phase", "RM=3", "--checkpoint", "ckpt"],
        dir.path(),
    );
    assert_refused(&refused, "ckpt/trace.log");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn a_run_killed_right_after_it_started_resumes_to_the_uninterrupted_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn_cmc(&checkpointing("ckpt", &["two-phase", "RM=7"]), dir.path());
    wait_for_checkpoint(&dir.path().join("ckpt"));
    let _ = run.kill(); // SIGKILL, long before --checkpoint-every's 300 s
    let _ = run.wait();
    let resumed = resume(dir.path(), "ckpt");
    assert_eq!(resumed.status.code(), Some(0), "{:?}", text(&resumed));
    assert_eq!(figures(&report(&resumed)), uninterrupted(dir.path(), 7));
}
