//! `cmc validate` and `cmc corpus` run cores as `cmc check` does: in a
//! supervised child, so a core that crashes or hangs while a glue log or a
//! pinned trace is replayed is a named fault (exit 2), never a dead or hung
//! `cmc`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::{cmc, cmc_command, compile_c, core_check_args, text};

/// Compiles `cores/test/misbehave.c` with `-D<flag>` (the step crashes or
/// never returns on a client request) into `dir`.
fn misbehaving_core(dir: &Path, flag: &str) -> PathBuf {
    let out = dir.join(format!("lib{flag}.so"));
    let define = format!("-D{flag}");
    compile_c(
        &["cores/test/misbehave.c"],
        &[&define, "-O0", "-shared", "-fPIC"],
        &out,
    );
    out
}

/// Runs `cmc args` in `dir`, killing it (and failing) past 30 s.
fn bounded(args: &[&str], dir: &Path) -> Output {
    let mut process = cmc_command(args, dir).spawn().unwrap();
    let started = Instant::now();
    while process.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            process.kill().unwrap();
            panic!("cmc {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    process.wait_with_output().unwrap()
}

/// Asserts a core fault (exit 2, nothing on standard output) whose report
/// says `says`, and returns standard error.
fn assert_fault(output: &Output, says: &str) -> String {
    let (stdout, stderr) = text(output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "", "a fault gives no verdict");
    assert!(stderr.contains(says), "{stderr}");
    stderr
}

#[test]
fn a_core_that_crashes_or_hangs_while_a_glue_log_is_validated_is_a_named_fault() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("glue.log"),
        "cmc-glue-log 1\nevent 0 START\nevent 1 START\nevent 0 CLIENT\n",
    )
    .unwrap();
    for (flag, says) in [
        ("SEGV", "CORE CRASHED: the core died with signal 11 (SIGSEGV)"),
        ("HANG", "CORE HUNG: the core did not return within 500 ms"),
    ] {
        let core = misbehaving_core(dir.path(), flag);
        let args = [
            "validate",
            "glue.log",
            "--core",
            core.to_str().unwrap(),
            "--nodes",
            "2",
            "--step-timeout",
            "0.5",
        ];
        let stderr = assert_fault(&bounded(&args, dir.path()), says);
        assert!(
            stderr.contains("while replaying line 4 of the glue log (node 0's step)"),
            "{stderr}"
        );
    }
}

#[test]
fn a_core_that_crashes_or_hangs_while_a_pinned_trace_is_replayed_is_a_named_fault() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, says) in [
        ("SEGV", "CORE CRASHED: the core died with signal 11 (SIGSEGV)"),
        ("HANG", "CORE HUNG: the core did not return within 500 ms"),
    ] {
        // The trace to the faulting step, as `cmc check` writes it, pinned
        // as a violation (the corpus replays it on this core).
        let core = misbehaving_core(dir.path(), flag);
        let check = core_check_args(&core, &["--step-timeout", "0.5", "--replay-out", "t.cmc"]);
        assert_eq!(cmc(&check, dir.path()).status.code(), Some(2));
        let trace = std::fs::read_to_string(dir.path().join("t.cmc")).unwrap();
        let pinned = trace.replacen("\ninit ", "\nviolates AtMostOneReply\ninit ", 1);
        std::fs::write(dir.path().join("pin.cmc-trace"), pinned).unwrap();
        std::fs::write(
            dir.path().join("corpus.toml"),
            "[[pin]]\ntrace = \"pin.cmc-trace\"\nfixed = [\"core=rust:reqack\"]\n",
        )
        .unwrap();
        let args = ["corpus", ".", "--step-timeout", "0.5"];
        let stderr = assert_fault(&bounded(&args, dir.path()), says);
        assert!(stderr.contains("inside a step"), "{stderr}");
    }
}
