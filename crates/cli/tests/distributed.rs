//! `cmc check --engine timely` on loopback: 2 and 3 processes on 127.0.0.1
//! give the native engine's exact counts and counterexample length, for
//! bundled models and Worlds of C and Rust cores; a peer with other
//! parameters or another core library is refused; a peer that dies, stops
//! (SIGSTOP) or never comes ends the run on every other process with a
//! clear error, in bounded time.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{cmc, cmc_command, compile_c, text};

/// Longest any process of these tests may run.
const RUN_BOUND: Duration = Duration::from_secs(120);

/// Writes a hostfile of `count` free loopback ports into `dir`.
fn hostfile(dir: &Path, count: usize) -> std::path::PathBuf {
    // Bound together so the ports differ; freed just before the run.
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let lines: Vec<String> = listeners
        .iter()
        .map(|listener| listener.local_addr().unwrap().to_string())
        .collect();
    let path = dir.join(format!("hosts-{count}"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Child processes killed when dropped (a failing test leaves none behind).
struct Processes(Vec<Option<Child>>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in self.0.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Processes {
    /// Starts process `i` of `count` with `words(i)` as its model and
    /// parameters, and `extra` options.
    fn start(
        dir: &Path,
        hosts: &Path,
        count: usize,
        words: impl Fn(usize) -> Vec<String>,
        extra: &[&str],
    ) -> Processes {
        let children = (0..count)
            .map(|index| {
                let mut command = cmc_command(&["check"], dir);
                command
                    .args(words(index))
                    .args(["--engine", "timely", "--workers", "1", "--json"])
                    .args(["--processes", &count.to_string()])
                    .args(["--process", &index.to_string()])
                    .arg("--hostfile")
                    .arg(hosts)
                    .args(["--connect-timeout", "30"])
                    .args(["--replay-out", &format!("trace-{index}.cmc")])
                    .args(extra);
                Some(command.spawn().expect("the cmc binary starts"))
            })
            .collect();
        Processes(children)
    }

    /// Waits for every remaining process, at most `bound` in all.
    fn wait_all(&mut self, bound: Duration) -> Vec<Output> {
        let deadline = Instant::now() + bound;
        let mut outputs = Vec::new();
        for slot in self.0.iter_mut() {
            let Some(mut child) = slot.take() else {
                continue;
            };
            loop {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    let output = child.wait_with_output().unwrap();
                    panic!(
                        "a cmc process did not end within {bound:?}; stderr: {}",
                        text(&output).1
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            outputs.push(child.wait_with_output().unwrap());
        }
        outputs
    }
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

fn json(output: &Output) -> serde_json::Value {
    let (stdout, stderr) = text(output);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("no JSON report; stdout: {stdout}; stderr: {stderr}"))
}

/// The native engine's JSON report of `model`.
fn native(dir: &Path, model: &str) -> serde_json::Value {
    let mut args = vec!["check"];
    args.extend(model.split_whitespace());
    args.extend(["--json", "--workers", "2", "--replay-out", "native.cmc"]);
    json(&cmc(&args, dir))
}

/// Runs `model` on `count` loopback processes; every process must agree.
fn distributed(dir: &Path, model: &str, count: usize) -> Vec<Output> {
    let hosts = hostfile(dir, count);
    Processes::start(dir, &hosts, count, |_| words(model), &[]).wait_all(RUN_BOUND)
}

#[test]
fn two_and_three_processes_count_two_phase_seven_rms_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let expected = native(dir.path(), "two-phase RM=7");
    assert_eq!(expected["distinct_states"], 296_448);
    for count in [2, 3] {
        for output in distributed(dir.path(), "two-phase RM=7", count) {
            assert_eq!(output.status.code(), Some(0), "{}", text(&output).1);
            let report = json(&output);
            assert_eq!(report["verdict"], "pass");
            assert_eq!(report["distinct_states"], 296_448, "{count} processes");
            assert_eq!(report["depth"], 23, "{count} processes");
            assert_eq!(report["states_generated"], expected["states_generated"]);
            assert_eq!(report["complete"], true);
            let stderr = text(&output).1;
            assert!(stderr.contains(&format!("{count} process(es)")), "{stderr}");
        }
    }
}

#[test]
fn two_and_three_processes_count_a_small_paxos_commit_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let model = "paxos-commit RM=1 ACCEPTORS=3 BALLOTS=2";
    let expected = native(dir.path(), model);
    assert_eq!(expected["verdict"], "pass", "{expected}");
    assert!(expected["distinct_states"].as_u64().unwrap() > 1000);
    for count in [2, 3] {
        for output in distributed(dir.path(), model, count) {
            assert_eq!(output.status.code(), Some(0), "{}", text(&output).1);
            let report = json(&output);
            for key in ["verdict", "distinct_states", "states_generated", "depth"] {
                assert_eq!(report[key], expected[key], "{key}, {count} processes");
            }
        }
    }
}

#[test]
fn a_violation_has_the_one_process_length_on_every_process() {
    let dir = tempfile::tempdir().unwrap();
    let model = "two-phase RM=5 INVARIANTS=NoRMCommitted";
    let expected = native(dir.path(), model);
    assert_eq!(expected["counterexample"]["length"], 13);
    let mut one = vec!["check"];
    one.extend(model.split_whitespace());
    one.extend(["--engine", "timely", "--json", "--replay-out", "one.cmc"]);
    let one = json(&cmc(&one, dir.path()));
    for count in [2, 3] {
        for output in distributed(dir.path(), model, count) {
            assert_eq!(output.status.code(), Some(1), "{}", text(&output).1);
            let report = json(&output);
            assert_eq!(report["property"], "NoRMCommitted");
            assert_eq!(report["counterexample"]["length"], 13);
            // Parent links keep the least parent, so the very trace is the
            // one a single process finds.
            assert_eq!(report["counterexample"], one["counterexample"]);
            assert_eq!(report["distinct_states"], expected["distinct_states"]);
        }
    }
}

/// Compiles the reqack example C core (with planted bug `bug`, if any)
/// into `dir`.
fn reqack_core(dir: &Path, bug: Option<u32>) -> std::path::PathBuf {
    let out = dir.join(format!("libreqack-{}.so", bug.unwrap_or(0)));
    let define = bug.map(|bug| format!("-DCMC_BUG={bug}"));
    let mut flags = vec!["-O1", "-shared", "-fPIC"];
    flags.extend(define.as_deref());
    compile_c(&["cores/reqack/reqack.c"], &flags, &out);
    out
}

#[test]
fn two_and_three_processes_count_a_c_core_world_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let core = reqack_core(dir.path(), None);
    let model = format!("--core {} --nodes 2 requests=2 drops=1", core.display());
    let expected = native(dir.path(), &model);
    assert_eq!(expected["verdict"], "pass", "{expected}");
    assert!(expected["distinct_states"].as_u64().unwrap() > 100);
    for count in [2, 3] {
        for output in distributed(dir.path(), &model, count) {
            assert_eq!(output.status.code(), Some(0), "{}", text(&output).1);
            let report = json(&output);
            for key in ["verdict", "distinct_states", "states_generated", "depth"] {
                assert_eq!(report[key], expected[key], "{key}, {count} processes");
            }
            assert!(text(&output).1.contains(&format!("{count} process(es)")));
        }
    }
}

#[test]
fn a_world_violation_has_the_native_length_on_two_and_three_processes() {
    let dir = tempfile::tempdir().unwrap();
    let model = "--core rust:reqack-bug2 --nodes 2 requests=2";
    let expected = native(dir.path(), model);
    assert_eq!(expected["property"], "AckedIsDurable", "{expected}");
    for count in [2, 3] {
        for output in distributed(dir.path(), model, count) {
            assert_eq!(output.status.code(), Some(1), "{}", text(&output).1);
            let report = json(&output);
            assert_eq!(report["property"], "AckedIsDurable");
            assert_eq!(
                report["counterexample"]["length"], expected["counterexample"]["length"],
                "{count} processes"
            );
            assert_eq!(report["distinct_states"], expected["distinct_states"]);
        }
    }
}

/// Raft's states carry the ghost variable `Votes`: states sent between
/// processes keep it (two terms, so it splits states; see
/// crates/protocols/tests/vote_once.rs).
#[test]
fn two_processes_count_a_world_with_a_ghost_variable_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let model =
        "--core rust:raft --nodes 2 cfg0=2 requests=0 crashes=1 restarts=1 crash_nodes=1 --no-deadlock";
    let expected = native(dir.path(), model);
    assert_eq!(
        (
            expected["verdict"].as_str(),
            expected["distinct_states"].as_u64()
        ),
        (Some("pass"), Some(66_166)),
        "{expected}"
    );
    for output in distributed(dir.path(), model, 2) {
        assert_eq!(output.status.code(), Some(0), "{}", text(&output).1);
        let report = json(&output);
        for key in ["verdict", "distinct_states", "states_generated", "depth"] {
            assert_eq!(report[key], expected[key], "{key}");
        }
    }
}

#[test]
fn a_process_with_another_core_library_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = hostfile(dir.path(), 2);
    let cores = [
        reqack_core(dir.path(), None),
        reqack_core(dir.path(), Some(2)),
    ];
    let model = |index: usize| {
        words(&format!(
            "--core {} --nodes 2 requests=1",
            cores[index].display()
        ))
    };
    let outputs = Processes::start(dir.path(), &hosts, 2, model, &[]).wait_all(RUN_BOUND);
    for output in outputs {
        let stderr = text(&output).1;
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("start every process with the same model"),
            "{stderr}"
        );
        assert!(stderr.contains("core_digest="), "{stderr}");
    }
}

#[test]
fn a_process_with_other_parameters_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = hostfile(dir.path(), 2);
    let model = |index: usize| {
        words(if index == 0 {
            "two-phase RM=7"
        } else {
            "two-phase RM=6"
        })
    };
    let outputs = Processes::start(dir.path(), &hosts, 2, model, &[]).wait_all(RUN_BOUND);
    for output in outputs {
        let stderr = text(&output).1;
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("RM=6") && stderr.contains("RM=7"),
            "{stderr}"
        );
        assert!(
            stderr.contains("start every process with the same model"),
            "{stderr}"
        );
    }
}

#[test]
fn a_process_that_never_comes_is_a_clear_error_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = hostfile(dir.path(), 2);
    let started = Instant::now();
    // Only process 1 starts: it cannot reach process 0.
    let output = cmc(
        &[
            "check",
            "two-phase",
            "RM=3",
            "--engine",
            "timely",
            "--processes",
            "2",
            "--process",
            "1",
            "--hostfile",
            hosts.to_str().unwrap(),
            "--connect-timeout",
            "2",
        ],
        dir.path(),
    );
    let stderr = text(&output).1;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("could not connect to process 0"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// How a peer is taken out of a run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takedown {
    /// SIGKILL: the process dies and its connections close.
    Kill,
    /// SIGSTOP: the process stays, its connections open but silent.
    Stop,
}

/// Starts `model` on `count` loopback processes with `extra` options, takes
/// the last one out with `takedown` once process 0 has reported level 3,
/// and returns the standard error of every survivor, each of which must end
/// within `bound` of the takedown, with exit code 2 and a clear error.
fn take_one_out_mid_run(
    model: &str,
    count: usize,
    takedown: Takedown,
    extra: &[&str],
    bound: Duration,
) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let hosts = hostfile(dir.path(), count);
    let mut options = vec!["--progress", "plain"];
    options.extend(extra);
    let mut processes = Processes::start(dir.path(), &hosts, count, |_| words(model), &options);
    // Wait until process 0 reports a level: the search is under way.
    let stderr = processes.0[0].as_mut().unwrap().stderr.take().unwrap();
    let (lines, seen) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let deadline = Instant::now() + RUN_BOUND;
    let mut collected = Vec::new();
    loop {
        let line = seen
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("process 0 reports levels");
        let searching = line.contains("cmc: level 3");
        collected.push(line);
        if searching {
            break;
        }
    }
    let victim = processes.0[count - 1].as_mut().unwrap();
    match takedown {
        Takedown::Kill => {
            victim.kill().unwrap();
            victim.wait().unwrap();
        }
        Takedown::Stop => {
            let pid = i32::try_from(victim.id()).unwrap();
            // SAFETY: signalling a child of this test, which it still owns.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        }
    }
    // The stopped one stays until `processes` is dropped (SIGKILL ends it).
    let victim = processes.0[count - 1].take();
    let taken_out_at = Instant::now();
    let outputs = processes.wait_all(bound);
    assert!(taken_out_at.elapsed() < bound);
    drop(Processes(vec![victim]));
    // The reader ends when process 0's stderr closes.
    while let Ok(line) = seen.recv_timeout(Duration::from_secs(10)) {
        collected.push(line);
    }
    let mut stderrs = vec![collected.join("\n")];
    stderrs.extend(outputs[1..].iter().map(|output| text(output).1));
    for (output, stderr) in outputs.iter().zip(&stderrs) {
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("was lost during the search")
                || stderr.contains("has not been heard from"),
            "{stderr}"
        );
    }
    stderrs
}

#[test]
fn a_peer_killed_mid_run_ends_the_others_with_a_clear_error() {
    // Large enough never to finish before the kill.
    let stderrs = take_one_out_mid_run(
        "two-phase RM=9",
        3,
        Takedown::Kill,
        &[],
        Duration::from_secs(60),
    );
    // The first survivor to notice names the dead peer; the other may see
    // the first survivor leave before it sees the dead peer.
    assert!(
        stderrs
            .iter()
            .any(|stderr| stderr.contains("the connection to process 2 was lost")),
        "{stderrs:?}"
    );
}

#[test]
fn a_world_process_killed_mid_run_ends_the_other_with_a_clear_error() {
    // Its supervised child dies with it (PR_SET_PDEATHSIG).
    let stderrs = take_one_out_mid_run(
        "--core rust:reqack --nodes 3 requests=2 drops=1 crashes=1",
        2,
        Takedown::Kill,
        &[],
        Duration::from_secs(60),
    );
    assert!(
        stderrs[0].contains("the connection to process 1 was lost"),
        "{stderrs:?}"
    );
}

#[test]
fn a_peer_stopped_mid_run_ends_the_others_within_the_peer_timeout() {
    // A stopped process keeps its connections open: only its silence shows.
    let stderrs = take_one_out_mid_run(
        "two-phase RM=9",
        3,
        Takedown::Stop,
        &["--peer-timeout", "2"],
        Duration::from_secs(20),
    );
    assert!(
        stderrs.iter().any(|stderr| stderr.contains(
            "process 2 has not been heard from for 2 s: it is stopped, hung or unreachable"
        )),
        "{stderrs:?}"
    );
}

/// Starts `count` processes with `words(i)`, waits until process 0 reports
/// level `level`, sends it SIGINT, and returns every process's output.
fn interrupt_at_level(
    dir: &Path,
    hosts: &Path,
    count: usize,
    words: impl Fn(usize) -> Vec<String>,
    level: u64,
) -> Vec<Output> {
    let mut processes = Processes::start(dir, hosts, count, words, &["--progress", "plain"]);
    let first = processes.0[0].as_mut().unwrap();
    let stderr = first.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines().map_while(Result::ok);
    let wanted = format!("cmc: level {level}:");
    assert!(
        lines.any(|line| line.starts_with(&wanted)),
        "process 0 never reported level {level}"
    );
    let pid = i32::try_from(first.id()).unwrap();
    // SAFETY: signalling a child of this test, which it still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    // Keep process 0's stderr drained until it ends.
    std::thread::spawn(move || lines.for_each(drop));
    processes.wait_all(RUN_BOUND)
}

#[test]
fn an_interrupted_run_of_two_processes_resumes_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let expected = native(dir.path(), "two-phase RM=7");
    let hosts = hostfile(dir.path(), 2);
    let checkpointed = |_: usize| words("two-phase RM=7 --checkpoint ck --checkpoint-every 3600");
    // Interrupted early (the run has 23 levels): every process stops at the
    // same level boundary and saves its part there.
    for output in interrupt_at_level(dir.path(), &hosts, 2, checkpointed, 2) {
        assert_eq!(output.status.code(), Some(3), "{}", text(&output).1);
        let report = json(&output);
        assert_eq!(report["verdict"], "interrupted");
        assert!(report["states_left_on_queue"].as_u64().unwrap() > 0);
    }
    assert!(dir.path().join("ck/process-0/manifest.json").is_file());
    assert!(dir.path().join("ck/process-1/manifest.json").is_file());
    // Resuming with another process count is refused at once.
    let three = hostfile(dir.path(), 3);
    let mut refused = cmc_command(
        &["check", "--resume", "ck", "--engine", "timely"],
        dir.path(),
    );
    refused
        .args(["--workers", "1", "--processes", "3", "--process", "0"])
        .arg("--hostfile")
        .arg(&three);
    let refused = refused.output().unwrap();
    let stderr = text(&refused).1;
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("process 0 of 2"), "{stderr}");
    // Resumed, the run ends with the whole run's counts.
    let resume = |_: usize| words("--resume ck");
    let outputs = Processes::start(dir.path(), &hosts, 2, resume, &[]).wait_all(RUN_BOUND);
    for output in outputs {
        assert_eq!(output.status.code(), Some(0), "{}", text(&output).1);
        let report = json(&output);
        assert_eq!(report["verdict"], "pass");
        assert_eq!(report["distinct_states"], 296_448);
        assert_eq!(report["depth"], 23);
        assert_eq!(report["states_generated"], expected["states_generated"]);
        assert_eq!(report["complete"], true);
    }
}
