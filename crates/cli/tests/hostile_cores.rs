//! `cmc check --core` against cores that attack their checker
//! (`cores/test/hostile.c`): the verdict comes only from the supervisor, and
//! every attack is reported as a core fault (exit 2), never as a verdict.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    assert_contains_all, check_reqack_bug2, cmc, compile_c, core_check_args, spawn_cmc, text,
};

/// Compiles `cores/test/hostile.c` with `-D<flag>` for each of the
/// space-separated `flags` into `dir`.
fn hostile_core(dir: &Path, flags: &str) -> PathBuf {
    let out = dir.join(format!("lib{}.so", flags.replace(['=', ' '], "_")));
    let defines: Vec<String> = flags.split(' ').map(|flag| format!("-D{flag}")).collect();
    let mut args: Vec<&str> = defines.iter().map(String::as_str).collect();
    args.extend(["-O0", "-shared", "-fPIC"]);
    compile_c(&["cores/test/hostile.c"], &args, &out);
    out
}

/// [`core_check_args`] with a step timeout of one second before `extra`.
fn timed_check_args<'a>(core: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = core_check_args(core, &["--step-timeout", "1"]);
    args.extend_from_slice(extra);
    args
}

/// Checks the core built with `flag`; asserts exit 2 and an empty standard
/// output (no verdict at all), and returns standard error.
fn core_fault(flag: &str, dir: &Path) -> String {
    let core = hostile_core(dir, flag);
    let output = cmc(
        &timed_check_args(&core, &["--replay-out", "fault.cmc"]),
        dir,
    );
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{flag}: {stdout}{stderr}");
    assert_eq!(stdout, "", "{flag}: a fault gives no verdict");
    stderr
}

#[test]
fn a_core_that_exits_inside_a_step_is_a_fault_not_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, code) in [
        ("EXIT_IN_STEP=0", 0),
        ("EXIT_IN_STEP=1", 1),
        ("EXIT_IN_STEP=3", 3),
        ("UNDERSCORE_EXIT", 0),
    ] {
        let stderr = core_fault(flag, dir.path());
        assert!(
            stderr.contains(&format!(
                "CORE EXITED: the core ended the checking process with exit code {code} inside a step"
            )),
            "{flag}: {stderr}"
        );
        assert!(stderr.contains("action: CLIENT r0 -> n0"), "{stderr}");
        assert!(
            stderr.contains("event:  n0 CLIENT id=0 (core `hostile`)"),
            "{stderr}"
        );
        let trace = std::fs::read_to_string(dir.path().join("fault.cmc")).expect("a replay file");
        assert!(trace.contains("action CLIENT r0 -> n0\nend"), "{trace}");
        // The replay runs the core in-process (for gdb): an exit there is no verdict either.
        let replay = cmc(&["replay", "fault.cmc"], dir.path());
        let (stdout, stderr) = text(&replay);
        if flag != "UNDERSCORE_EXIT" {
            assert_eq!(replay.status.code(), Some(2), "{flag}: {stdout}{stderr}");
            assert!(stderr.contains("CORE EXITED"), "{stderr}");
        }
        std::fs::remove_file(dir.path().join("fault.cmc")).unwrap();
    }
}

/// A core that writes an end-of-run frame of its own to the supervisor's
/// pipe and ends the process at once: the frame lacks the nonce the
/// supervisor drew for this run, so it is never taken for the child's
/// report (a stray write of an old report cannot pass a run).
#[test]
fn a_frame_written_by_a_core_is_not_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = core_fault("FORGE_FRAME", dir.path());
    assert!(
        stderr.contains(
            "CORE EXITED: the core ended the checking process with exit code 0 inside a step"
        ),
        "{stderr}"
    );
}

/// The flight recorder gives a thread's slot back when the thread ends: the
/// search starts its workers again for every level, and a step many levels
/// deep is recorded like the first (it was once reported as "outside any
/// core call", without its trace, once the first workers had taken every
/// slot). The faulting step is not the first from its pre-state, which the
/// recorder then holds from that first step.
#[test]
fn a_core_that_exits_deep_in_the_search_is_reported_with_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "EXIT_AFTER=6");
    for workers in ["1", "2"] {
        let core = core.to_str().unwrap();
        let args = [
            "check",
            "--core",
            core,
            "--nodes",
            "2",
            "requests=8",
            "clients=0,1",
        ];
        let output = cmc(&[&args[..], &["--workers", workers]].concat(), dir.path());
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
        assert_contains_all(
            &stderr,
            &[
                "exit code 0 inside a step",
                "action: CLIENT r6 -> n1",
                "trace: 7 step(s) to the faulting step",
            ],
        );
    }
}

#[test]
fn a_core_that_exits_or_loops_while_loading_is_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = core_fault("EXIT_IN_ENTRY", dir.path());
    assert_contains_all(
        &stderr,
        &["CORE EXITED", "while loading the core", "cmc_core_entry"],
    );

    let started = Instant::now();
    let stderr = core_fault("LOOP_IN_ENTRY", dir.path());
    assert_contains_all(
        &stderr,
        &[
            "CORE HUNG: the core did not return within 1000 ms",
            "while loading the core",
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_core_that_exits_while_describing_is_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = core_fault("EXIT_IN_DESCRIBE", dir.path());
    assert_contains_all(
        &stderr,
        &["CORE EXITED", "while describing the state of node"],
    );
}

#[test]
fn writes_out_of_bounds_or_into_read_only_buffers_are_faults() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, says) in [
        (
            "PAST_VOLATILE",
            "the step wrote past the end of its volatile part",
        ),
        (
            "INTO_DURABLE",
            "the step wrote into its read-only durable part",
        ),
        ("INTO_EVENT", "the step wrote into its read-only event"),
    ] {
        let stderr = core_fault(flag, dir.path());
        assert!(
            stderr.contains(&format!("CORE MEMORY VIOLATION: {says}")),
            "{flag}: {stderr}"
        );
        assert!(stderr.contains("action: CLIENT r0 -> n0"), "{stderr}");
        assert!(dir.path().join("fault.cmc").exists(), "{stderr}");
        std::fs::remove_file(dir.path().join("fault.cmc")).unwrap();
    }
}

/// A write far out of bounds (12 KiB to 64 MiB either side of the
/// buffers) reaches no memory of the checker: each thread's buffers are in
/// a mapping of their own between inaccessible regions of 1 GiB, so the
/// write kills the step, which is reported with its trace.
#[test]
fn wild_writes_far_from_the_buffers_are_caught_in_their_step() {
    let dir = tempfile::tempdir().unwrap();
    for offset in ["12288", "1048576", "67108864", "-16384", "-1048576"] {
        let stderr = core_fault(&format!("WILD_WRITE={offset}"), dir.path());
        assert!(
            stderr.contains("CORE CRASHED: the core died with signal 11 (SIGSEGV) inside a step"),
            "{offset}: {stderr}"
        );
        assert!(stderr.contains("action: CLIENT r0 -> n0"), "{stderr}");
    }
}

#[test]
fn a_core_that_prints_never_reaches_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "PRINTS");
    let output = cmc(&timed_check_args(&core, &["--json"]), dir.path());
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(report["verdict"], "pass");
    assert!(stderr.contains("hostile core: event"), "{stderr}");
}

/// The search child of the `cmc` process `pid`.
fn child_of(pid: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        if let Some(child) = children.split_whitespace().next() {
            return child.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "cmc started no child");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child of process `pid` other than `first`: the next child cmc starts.
fn next_child_of(pid: u32, first: u32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let next = children
            .split_whitespace()
            .map(|child| child.parse::<u32>().unwrap())
            .find(|child| *child != first);
        if let Some(child) = next {
            return child;
        }
        assert!(Instant::now() < deadline, "cmc started no second child");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// After a core's fault, the explainer searches the path to the faulting
/// step in a second child. The check's stop signal stops it too, and its
/// end is said to be an interruption, never the core failing again: the
/// fault itself is still reported (exit 2), without a replay file.
#[test]
fn a_stop_while_the_path_to_a_fault_is_searched_is_not_blamed_on_the_core() {
    let dir = tempfile::tempdir().unwrap();
    // The search and the explainer take seconds each (2 ms a step).
    let core = hostile_core(dir.path(), "SLOW EXIT_AFTER=6");
    let args = [
        "check",
        "--core",
        core.to_str().unwrap(),
        "--nodes",
        "3",
        "requests=8",
        "clients=0,1,2",
        "--workers",
        "1",
    ];
    let process = spawn_cmc(&args, dir.path());
    let checker = child_of(process.id());
    let explainer = next_child_of(process.id(), checker);
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(process.id() as i32, libc::SIGTERM) };
    let output = process.wait_with_output().unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("exit code 0 inside a step"), "{stderr}");
    assert!(
        stderr.contains(
            "no replay file: the search for the path to the step was interrupted before it finished"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("failed again"), "{stderr}");
    assert!(gone(explainer), "the explainer outlived cmc");
}

/// Whether process `pid` is gone (or a zombie nobody waits for).
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if status.is_empty() || status.contains(") Z ") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `cmc check` of three nodes of the slow core at `core`, each with a
/// client, followed by `extra`.
fn slow_check_args<'a>(core: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["check", "--core", core.to_str().unwrap(), "--nodes", "3"];
    args.extend(["requests=3", "clients=0,1,2", "ticks=3"]);
    args.extend_from_slice(extra);
    args
}

/// A slow check started in `dir`, checkpointing to `saved`.
fn slow_check(dir: &Path) -> std::process::Child {
    let core = hostile_core(dir, "SLOW");
    spawn_cmc(&slow_check_args(&core, &["--checkpoint", "saved"]), dir)
}

#[test]
fn sigterm_to_cmc_interrupts_the_supervised_search_with_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let process = slow_check(dir.path());
    let child = child_of(process.id());
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(process.id() as i32, libc::SIGTERM) };
    let output = process.wait_with_output().unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stdout.contains("The search was interrupted"), "{stdout}");
    assert!(dir.path().join("saved").read_dir().unwrap().count() > 0);
    assert!(gone(child), "the search child outlived cmc");
}

/// `timeout` signals its command, then the command's whole process group:
/// cmc gets the stop twice, and its search child once from the group and
/// once forwarded by cmc. That is one stop, never a core that exited or a
/// run without its summary.
#[test]
fn a_stop_delivered_twice_to_the_process_group_is_one_interruption() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "SLOW");
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let process = common::cmc_command(&slow_check_args(&core, &[]), dir.path())
            .process_group(0)
            .spawn()
            .unwrap();
        child_of(process.id());
        std::thread::sleep(Duration::from_millis(500));
        let pid = process.id() as i32;
        // SAFETY: signalling processes this test started.
        unsafe { libc::kill(pid, signal) };
        std::thread::sleep(Duration::from_millis(50));
        // SAFETY: as above (cmc leads its own process group).
        unsafe { libc::kill(-pid, signal) };
        let output = process.wait_with_output().unwrap();
        let (stdout, stderr) = text(&output);
        assert_eq!(
            output.status.code(),
            Some(3),
            "signal {signal}: {stdout}{stderr}"
        );
        assert!(stdout.contains("The search was interrupted"), "{stdout}");
        assert!(!stderr.contains("CORE"), "{stderr}");
    }
}

/// Random walks stop at SIGINT too, with their summary (exit 3), in
/// process (a bundled model) and supervised (a core, the terminal's SIGINT
/// reaching cmc and its child).
#[test]
fn sigint_stops_random_walks_with_their_summary() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "SLOW");
    let walks = ["--simulate", "--walks", "100000000", "--walk-length", "20"];
    let bundled = [&["check", "two-phase", "RM=5"][..], &walks].concat();
    let supervised = [
        &[
            "check",
            "--core",
            core.to_str().unwrap(),
            "--nodes",
            "2",
            "requests=2",
        ][..],
        &walks,
    ]
    .concat();
    for (args, group) in [(bundled, false), (supervised, true)] {
        let process = common::cmc_command(&args, dir.path())
            .process_group(0)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let pid = process.id() as i32;
        // SAFETY: signalling processes this test started.
        unsafe { libc::kill(if group { -pid } else { pid }, libc::SIGINT) };
        let output = process.wait_with_output().unwrap();
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {stdout}{stderr}");
        assert!(stdout.contains("The search was interrupted"), "{stdout}");
        assert!(
            stdout.contains("Walks:"),
            "the walks so far are summarised: {stdout}"
        );
    }
}

#[test]
fn the_search_child_never_outlives_a_killed_cmc() {
    let dir = tempfile::tempdir().unwrap();
    let mut process = slow_check(dir.path());
    let child = child_of(process.id());
    process.kill().unwrap();
    process.wait().unwrap();
    assert!(gone(child), "the search child outlived cmc");
}

#[test]
fn a_working_directory_that_cannot_be_written_is_no_obstacle() {
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "NONE");
    let gone_dir = dir.path().join("removed");
    std::fs::create_dir(&gone_dir).unwrap();
    // The working directory is removed under cmc: nothing can be created in it.
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd {gone} && rmdir {gone} && exec {cmc} check --core {core} --nodes 2 requests=1",
            gone = gone_dir.display(),
            cmc = env!("CARGO_BIN_EXE_cmc"),
            core = core.display()
        ))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No error has been found"), "{stdout}");
}

#[test]
fn a_replay_file_that_cannot_be_written_does_not_hide_the_violation() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = check_reqack_bug2(dir.path(), "no/such/dir/bug2.cmc");
    assert!(
        stdout.contains("CLIENT r0 -> n0"),
        "the trace is printed: {stdout}"
    );
    assert!(
        stderr.contains("cannot write the replay file no/such/dir/bug2.cmc"),
        "{stderr}"
    );
}

/// A core that exits deep in a random walk (its third node's fifteenth
/// request, reached by 30-step walks but by no breadth-first search in
/// time): the path to the faulting step is the walks' own, found again from
/// their seed, well within the check's time limit; it replays to the exit.
/// With two workers, the other worker is anywhere when the process ends
/// (even half way through writing its slot of the flight recorder): the
/// exiting thread is the one blamed, whatever the seed.
#[test]
fn a_core_that_exits_deep_in_a_random_walk_is_reported_with_the_walks_trace() {
    let dir = tempfile::tempdir().unwrap();
    let core = hostile_core(dir.path(), "EXIT_AFTER=14");
    let core = core.to_str().unwrap();
    for seed in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        let args = [
            "check",
            "--core",
            core,
            "--nodes",
            "3",
            "requests=30",
            "clients=0,1,2",
            "--simulate",
            "--swarm",
            "--walks",
            "100000",
            "--walk-length",
            "30",
            "--seed",
            seed,
            "--workers",
            "2",
            "--time-limit",
            "60",
            "--replay-out",
            "fault.cmc",
        ];
        let output = common::cmc_within(&args, dir.path(), Duration::from_secs(60));
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
        assert!(stderr.contains("exit code 0 inside a step"), "{stderr}");
        assert!(stderr.contains("-> n2\n"), "seed {seed}: {stderr}");
        assert!(
            stderr.contains("step(s) to the faulting step (random walk "),
            "{stderr}"
        );
        let trace = std::fs::read_to_string(dir.path().join("fault.cmc")).unwrap();
        let requests = trace.lines().filter(|line| line.contains("-> n2")).count();
        assert_eq!(requests, 15, "seed {seed}: {trace}");
        let replay = cmc(&["replay", "fault.cmc"], dir.path());
        let (stdout, stderr) = text(&replay);
        assert_eq!(replay.status.code(), Some(2), "{stdout}{stderr}");
        assert!(stderr.contains("CORE EXITED"), "{stderr}");
    }
}
