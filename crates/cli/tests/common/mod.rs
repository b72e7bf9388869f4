//! Running the `cmc` binary and compiling C cores from the integration tests.

#![allow(dead_code)] // each test file uses the part it needs

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The `cmc` binary on `args`, run in `dir`, with standard output and
/// standard error piped.
pub fn cmc_command(args: &[&str], dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cmc"));
    command
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `cmc args` in `dir` to completion.
pub fn cmc(args: &[&str], dir: &Path) -> Output {
    cmc_command(args, dir)
        .output()
        .expect("the cmc binary runs")
}

/// Starts `cmc args` in `dir` with piped standard output and standard error.
pub fn spawn_cmc(args: &[&str], dir: &Path) -> Child {
    cmc_command(args, dir).spawn().expect("the cmc binary runs")
}

/// Asserts that `text` contains each of `parts`, showing `text` if not.
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

/// A running `cmc`, killed when dropped (a failing assertion leaves no
/// server behind).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmc explore ARGS --port 0` in `dir`; the child and the port
/// of the URL it prints.
pub fn explore(args: &[&str], dir: &Path) -> (Running, String) {
    let mut all = vec!["explore", "--port", "0"];
    all.extend_from_slice(args);
    let mut child = Running(spawn_cmc(&all, dir));
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split_whitespace()
        .find_map(|word| word.strip_prefix("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("a loopback URL in {line:?}"))
        .trim_end_matches('/')
        .to_string();
    (child, port)
}

/// Runs `cmc args` in `dir`, failing the test (after killing it) if it has
/// not ended within `limit`: a hang is a failure, not a wait.
pub fn cmc_within(args: &[&str], dir: &Path, limit: std::time::Duration) -> Output {
    let mut child = cmc_command(args, dir)
        .stdin(Stdio::null())
        .spawn()
        .expect("the cmc binary runs");
    let started = std::time::Instant::now();
    while child.try_wait().expect("waitable").is_none() {
        if started.elapsed() > limit {
            child.kill().expect("killable");
            let output = child.wait_with_output().expect("waitable");
            panic!(
                "cmc {args:?} did not end within {limit:?}: {:?}",
                text(&output)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("waitable")
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Standard output and standard error as text.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The root of the repository (where `include/` and `cores/` are).
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Warnings are errors in every C build of the tests: a core or
/// `include/cmc.h` that warns fails the test that builds it.
pub const C_WARNINGS: &str = "-Wall -Wextra -Werror";

/// Compiles the C `sources` (paths relative to the repository) with the
/// repository's header folders (`include/`, `cores/reqack/`), [`C_WARNINGS`]
/// and `flags` into `out`, using `$CC` (default `cc`); fails the test,
/// showing the command, if the compiler does not succeed.
pub fn compile_c(sources: &[&str], flags: &[&str], out: &Path) {
    let repo = repository();
    let mut command = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    command
        .args(C_WARNINGS.split(' '))
        .args(flags)
        .arg("-I")
        .arg(repo.join("include"))
        .arg("-I")
        .arg(repo.join("cores/reqack"))
        .args(sources.iter().map(|source| repo.join(source)))
        .arg("-o")
        .arg(out);
    let status = command
        .status()
        .expect("a C compiler is installed (scripts/setup.sh)");
    assert!(status.success(), "cc failed: {command:?}");
}

/// Runs `cmc args` in `dir`, asserts that it exits with `code` (showing both
/// streams if not), and returns standard output and standard error as text.
pub fn cmc_exiting(args: &[&str], dir: &Path, code: i32) -> (String, String) {
    let output = cmc(args, dir);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(code), "{stdout}{stderr}");
    (stdout, stderr)
}

/// Checks the Rust reqack core with planted bug 2 on two nodes and two
/// requests, writing the replay file to `replay_out`; asserts that the
/// violation of `AckedIsDurable` is reported (exit 1) and returns standard
/// output and standard error.
pub fn check_reqack_bug2(dir: &Path, replay_out: &str) -> (String, String) {
    check_reqack_bug2_with(dir, replay_out, &[])
}

/// As [`check_reqack_bug2`], with the further `cmc check` arguments `extra`.
pub fn check_reqack_bug2_with(dir: &Path, replay_out: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "check",
        "--core",
        "rust:reqack-bug2",
        "--nodes",
        "2",
        "requests=2",
        "--replay-out",
        replay_out,
    ];
    args.extend_from_slice(extra);
    let (stdout, stderr) = cmc_exiting(&args, dir, 1);
    assert!(
        stdout.contains("Invariant AckedIsDurable is violated"),
        "{stdout}"
    );
    (stdout, stderr)
}

/// The arguments of `cmc check` on a World of two nodes of `core` (a
/// path or a name such as `rust:reqack`) with one request, followed by
/// `extra`.
pub fn check_args<'a>(core: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["check", "--core", core, "--nodes", "2", "requests=1"];
    args.extend_from_slice(extra);
    args
}

/// `--core core` on five nodes, of which nodes 0 to 2 may crash once and
/// restart (the crashes of the reference protocols' checks), followed by
/// `extra`.
pub fn five_crashing_nodes<'a>(core: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--core", core, "--nodes", "5"];
    args.extend(["crash_nodes=0,1,2", "crashes=1", "restarts=1"]);
    args.extend_from_slice(extra);
    args
}

/// `cmc validate glue.log` against a World of two reqack nodes.
pub const VALIDATE_GLUE_LOG: [&str; 6] = [
    "validate",
    "glue.log",
    "--core",
    "rust:reqack",
    "--nodes",
    "2",
];

/// [`check_args`] of the core library at `core`.
pub fn core_check_args<'a>(core: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    check_args(core.to_str().unwrap(), extra)
}
