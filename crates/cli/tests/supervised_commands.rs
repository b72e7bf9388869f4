//! `cmc validate`, `cmc corpus` and `cmc explore` run cores as `cmc check`
//! does: in a supervised child, so a core that crashes or hangs while a
//! glue log or a pinned trace is replayed is a named fault (exit 2), and
//! one that hangs under the explorer is named and the explorer started
//! again, never a dead, hung or wedged `cmc`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{cmc, cmc_command, compile_c, core_check_args, explore, text};

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
        (
            "SEGV",
            "CORE CRASHED: the core died with signal 11 (SIGSEGV)",
        ),
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
        (
            "SEGV",
            "CORE CRASHED: the core died with signal 11 (SIGSEGV)",
        ),
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

/// `GET target` on 127.0.0.1:`port`: the status line, or why there is none
/// (the connection closed without an answer, or no answer within 10 s).
fn status_of(port: &str, target: &str) -> Result<String, String> {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut reply = Vec::new();
    match stream.read_to_end(&mut reply) {
        Ok(_) if reply.is_empty() => Err("closed without an answer".into()),
        Ok(_) => Ok(String::from_utf8_lossy(&reply)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A core that hangs on a client request, under the explorer: every page
/// that steps it (the initial state's page does) is cut off after the step timeout,
/// the hang is named on standard error, and the explorer goes on serving;
/// more such requests than it serves at once (16: the others are told to
/// try again) never wedge it.
#[test]
fn a_core_that_hangs_under_the_explorer_is_named_and_the_explorer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let core = misbehaving_core(dir.path(), "HANG");
    let core = core.to_str().unwrap();
    let args = [
        "--core",
        core,
        "--nodes",
        "2",
        "requests=1",
        "--step-timeout",
        "0.5",
    ];
    let (mut process, port) = explore(&args, dir.path());
    let started = Instant::now();
    let hung: Vec<_> = (0..20)
        .map(|_| {
            let port = port.clone();
            std::thread::spawn(move || status_of(&port, "/?path=0"))
        })
        .collect();
    for request in hung {
        // Cut off when the hung explorer is stopped, or (past 16 at once)
        // told at once to try again.
        let answer = request.join().unwrap();
        let busy = Ok("HTTP/1.1 503 Service Unavailable".to_string());
        assert!(
            answer == Err("closed without an answer".to_string()) || answer == busy,
            "a page that steps the hanging core: {answer:?}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    let other = status_of(&port, "/no-such-page");
    process.0.kill().unwrap();
    process.0.wait().unwrap();
    let mut stderr = String::new();
    process
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(other, Ok("HTTP/1.1 404 Not Found".to_string()), "{stderr}");
    assert!(
        stderr.contains("CORE HUNG: the core did not return within 500 ms inside a step"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the explorer was started again"),
        "{stderr}"
    );
}
