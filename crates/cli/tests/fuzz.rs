//! Seeded mutation fuzzing of the `cmc` front end: replay files (written by
//! bundled models and by Worlds of Rust cores), command lines, glue logs
//! (`cmc validate`), gate files (`cmc gate`, parsed but never run: `--only`
//! names no core), corpus manifests (`cmc corpus`) and checkpoint manifests
//! of both engines (`cmc check --resume`, half of them re-sealed so that the
//! edit reaches the checks behind the seal), mutated by truncation, byte flips, huge
//! numbers, unknown keywords, long lines and invalid UTF-8. Every input must end with exit code 0, 1 or 2 (or 4:
//! a replay file whose `violates` line no longer holds is stale), without a
//! panic (on any thread), a signal or a hang.
//!
//! Most inputs run in-process through [`cmc_cli::run`] (fast enough for
//! 10^4 inputs in CI); a smaller sample spawns the `cmc` binary to see exit
//! statuses and signals as a user would. `scripts/fuzz.sh` runs the long,
//! ignored version (10^6 inputs by default).
//!
//! Numbers the mutations draw are either small (so that a valid input is a
//! quick run) or outside every range cmc accepts: an in-range large number
//! (say `--walks 100000000000`) is a legitimately long run, not a defect.
//! Command lines never name `--core` in-process (a World check supervises
//! itself by re-running the current executable, here the test binary) nor
//! `gate`; the spawned sample covers `--core rust:...`.

mod common;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cmc_search::{Checker, ReplayFile};
use cmc_world::{build_world, WorldArgs};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Numbers that are either small or outside every accepted range.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "256",
    "4294967297",
    "1099511627776000000",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "1e3",
    "0x10",
    "1.5",
    "NaN",
    "inf",
    "",
    " 2",
];

/// Flags `cmc check` takes (never `--core`, see the module comment).
const FLAGS: &[&str] = &[
    "--workers",
    "--nodes",
    "--max-depth",
    "--walks",
    "--walk-length",
    "--seed",
    "--max-memory",
    "--step-timeout",
    "--checkpoint-every",
    "--progress",
    "--replay-out",
    "--trace-dir",
    "--checkpoint",
    "--resume",
    "--json",
    "--dfs",
    "--bfs",
    "--simulate",
    "--view-bfs",
    "--no-deadlock",
    "--check-determinism",
    "--disk-fingerprints",
    "--help",
];

/// Values for flags that take a word.
const WORDS: &[&str] = &[
    "fuzz.cmc",
    "ckpt",
    ".",
    "/dev/null",
    "/dev/zero",
    "fifo",
    "missing/x.cmc",
    "off",
    "plain",
    "auto",
    "512M",
    "1K",
    "9999999999T",
    "=",
    "--",
    "",
];

/// Model parameters.
const PARAMS: &[&str] = &[
    "RM",
    "INVARIANTS",
    "ACCEPTORS",
    "BALLOTS",
    "GOAL",
    "requests",
    "nodes",
    "quiescence",
    "",
];

/// Bases of the command lines, each a quick run when unmutated.
fn base_command_lines(replay: &Path) -> Vec<Vec<String>> {
    let replay = replay.display().to_string();
    let lines: &[&[&str]] = &[
        &["check", "die-hard", "--workers", "1"],
        &[
            "check",
            "die-hard",
            "INVARIANTS=NotSolved",
            "--workers",
            "2",
        ],
        &["check", "two-phase", "RM=2", "INVARIANTS=NoRMCommitted"],
        &["check", "tcommit", "RM=2", "--dfs", "--max-depth", "3"],
        &[
            "check",
            "die-hard",
            "--simulate",
            "--walks",
            "3",
            "--walk-length",
            "2",
        ],
        &["check", "two-phase", "RM=1", "--json", "--no-deadlock"],
        &["replay", "REPLAY"],
        &["replay", "REPLAY", "--json"],
        &["purity", "REPLAY"],
        &["list"],
    ];
    lines
        .iter()
        .map(|line| {
            line.iter()
                .map(|word| word.replace("REPLAY", &replay))
                .collect()
        })
        .collect()
}

/// A mutated command line: `cmc` then 1 to 3 mutations of a base.
fn mutate_command_line(rng: &mut Pcg64, bases: &[Vec<String>]) -> Vec<OsString> {
    let mut words: Vec<Vec<u8>> = bases
        .choose(rng)
        .expect("bases")
        .iter()
        .map(|word| word.clone().into_bytes())
        .collect();
    for _ in 0..rng.gen_range(1..=3) {
        let at = rng.gen_range(0..=words.len());
        match rng.gen_range(0..8) {
            0 => {
                let value = NUMBERS.choose(rng).unwrap().as_bytes().to_vec();
                let flag = FLAGS.choose(rng).unwrap().as_bytes().to_vec();
                words.splice(at..at, [flag, value]);
            }
            1 => {
                let value = WORDS.choose(rng).unwrap().as_bytes().to_vec();
                let flag = FLAGS.choose(rng).unwrap().as_bytes().to_vec();
                words.splice(at..at, [flag, value]);
            }
            2 => {
                let name = PARAMS.choose(rng).unwrap();
                let value = NUMBERS.choose(rng).unwrap();
                words.insert(at, format!("{name}={value}").into_bytes());
            }
            3 if !words.is_empty() => {
                // A number somewhere becomes another one.
                let at = rng.gen_range(0..words.len());
                let value = NUMBERS.choose(rng).unwrap();
                if let Some((name, _)) = String::from_utf8_lossy(&words[at]).split_once('=') {
                    words[at] = format!("{name}={value}").into_bytes();
                } else {
                    words[at] = value.as_bytes().to_vec();
                }
            }
            4 if !words.is_empty() => {
                words.remove(rng.gen_range(0..words.len()));
            }
            5 => words.insert(at, vec![0xff, b'x', 0xfe]),
            6 => words.insert(at, vec![b'a'; rng.gen_range(1000..70_000)]),
            _ if !words.is_empty() => {
                let from = rng.gen_range(0..words.len());
                let word = words[from].clone();
                words.insert(at.min(words.len()), word);
            }
            _ => {}
        }
    }
    std::iter::once(OsString::from("cmc"))
        .chain(words.into_iter().map(OsString::from_vec))
        .collect()
}

/// Junk lines the mutations insert.
const JUNK_LINES: &[&str] = &[
    "frobnicate 3",
    "param",
    "param =",
    "param RM=18446744073709551616",
    "param nodes=99999999999",
    "param requests=4294967296",
    "param quiescence=99999999999999",
    "param core=/dev/zero",
    "param core=rust:nope",
    "param core_digest=xxh3-128:00",
    "setting max-depth=99999999999999999999999",
    "setting",
    "init 18446744073709551616",
    "init 99999999",
    "action",
    "action \\u{110000}",
    "model",
    "cmc-replay 1",
    "cmc-replay 99999999999999999999",
    "end",
];

/// A mutated replay file: 1 to 3 mutations of a seed file.
fn mutate_replay_file(rng: &mut Pcg64, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = seeds.choose(rng).expect("seeds").clone();
    for _ in 0..rng.gen_range(1..=3) {
        let at = if bytes.is_empty() {
            0
        } else {
            rng.gen_range(0..bytes.len())
        };
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        match rng.gen_range(0..9) {
            0 => bytes.truncate(at),
            1 if !bytes.is_empty() => bytes[at] ^= 1 << rng.gen_range(0..8),
            2 => {
                // The number at `at` (if any) becomes a huge or odd one.
                let end = bytes[at..]
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .map_or(bytes.len(), |p| at + p);
                let number = NUMBERS.choose(rng).unwrap().as_bytes();
                bytes.splice(at..end, number.iter().copied());
            }
            3 => {
                let line = format!("{}\n", JUNK_LINES.choose(rng).unwrap());
                bytes.splice(line_start..line_start, line.into_bytes());
            }
            4 => {
                let long = vec![b'a'; rng.gen_range(1000..200_000)];
                let keyword: &[u8] = [&b"action "[..], b"model ", b"param x=", b""]
                    .choose(rng)
                    .unwrap();
                let line = [keyword, &long, b"\n"].concat();
                bytes.splice(line_start..line_start, line);
            }
            5 => {
                let invalid: &[u8] = [&[0xff][..], &[0xc3], &[0xed, 0xa0, 0x80], &[0]]
                    .choose(rng)
                    .unwrap();
                bytes.splice(at..at, invalid.iter().copied());
            }
            6 => {
                // A line repeated.
                let end = bytes[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| at + p + 1);
                let line = bytes[line_start..end].to_vec();
                bytes.splice(line_start..line_start, line);
            }
            7 => {
                // A line removed.
                let end = bytes[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| at + p + 1);
                bytes.drain(line_start..end);
            }
            _ => {
                // The tail of another seed.
                let other = seeds.choose(rng).unwrap();
                let from = rng.gen_range(0..=other.len());
                bytes.truncate(at);
                bytes.extend_from_slice(&other[from..]);
            }
        }
    }
    bytes
}

/// The seed replay files: counterexamples of bundled models (written by
/// `cmc check` itself) and of Worlds of Rust cores.
fn seed_replay_files(dir: &Path) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let checks: &[&[&str]] = &[
        &["two-phase", "RM=3", "INVARIANTS=NoRMCommitted"],
        &["die-hard", "INVARIANTS=NotSolved"],
        &["paxos-commit", "INVARIANTS=NoRMCommitted"],
    ];
    for (index, words) in checks.iter().enumerate() {
        let out = dir.join(format!("seed{index}.cmc"));
        let mut args = vec!["cmc", "check", "--workers", "1", "--json"];
        args.extend_from_slice(words);
        args.extend(["--replay-out", out.to_str().unwrap()]);
        assert_eq!(cmc_cli::run(&args), 1, "{args:?}");
        seeds.push(std::fs::read(&out).unwrap());
    }
    for (core, params) in [
        ("rust:reqack-bug2", &["requests=2"][..]),
        (
            "rust:reqack-bug1",
            &["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"][..],
        ),
    ] {
        let world = build_world(&WorldArgs {
            cores: vec![core.into()],
            nodes: 2,
            params: params.iter().map(|p| p.to_string()).collect(),
            check_determinism: false,
        })
        .unwrap();
        let checker = Checker::new(world).workers(1).check_deadlock(false);
        let outcome = checker.run();
        let trace = outcome.counterexample.expect("the planted bug is found");
        let file = ReplayFile::from_counterexample(checker.model(), &trace, None);
        seeds.push(file.to_text().into_bytes());
    }
    seeds
}

/// Every panic message seen on any thread since the hook was installed.
fn panics() -> &'static Mutex<Vec<String>> {
    static PANICS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    PANICS.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            panics()
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(info.to_string());
            default(info);
        }));
        Mutex::new(Vec::new())
    })
}

/// Figures of one fuzzing run.
#[derive(Debug, Default)]
struct Figures {
    inputs: u64,
    by_exit_code: [u64; 5],
    failures: Vec<String>,
}

/// One fuzzing input.
#[derive(Debug, Default)]
enum Input {
    #[default]
    None,
    /// The bytes of an input file (named by its kind, e.g. "replay file").
    File(&'static str, Vec<u8>),
    /// A command line.
    CommandLine(Vec<OsString>),
}

/// Stops the process, naming the input, when one input runs longer than
/// `limit` (a hang cannot be caught any other way in-process).
struct Watchdog {
    done: Arc<AtomicU64>,
    current: Arc<Mutex<Input>>,
}

impl Watchdog {
    fn start(limit: Duration) -> Watchdog {
        let done = Arc::new(AtomicU64::new(0));
        let current = Arc::new(Mutex::new(Input::None));
        let (seen, input) = (Arc::clone(&done), Arc::clone(&current));
        std::thread::spawn(move || {
            let mut last = (u64::MAX, Instant::now());
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let now = seen.load(Ordering::Relaxed);
                if now == u64::MAX {
                    return;
                }
                if now != last.0 {
                    last = (now, Instant::now());
                } else if last.1.elapsed() > limit {
                    let input = input.lock().unwrap_or_else(|p| p.into_inner());
                    let shown = match &*input {
                        Input::File(kind, bytes) => {
                            format!("the {kind} {:?}", String::from_utf8_lossy(bytes))
                        }
                        Input::CommandLine(args) => format!("{args:?}"),
                        Input::None => "none".into(),
                    };
                    let _ = writeln!(
                        saved_stderr(),
                        "fuzz: HANG: one input ran longer than {limit:?}: {shown}"
                    );
                    std::process::abort();
                }
            }
        });
        Watchdog { done, current }
    }

    fn starting(&self, input: Input) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = input;
    }

    fn finished(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(u64::MAX, Ordering::Relaxed);
    }
}

/// The process's stderr as it was before [`quiet`] (for the hang report).
fn saved_stderr() -> std::fs::File {
    use std::os::fd::FromRawFd;
    static SAVED: OnceLock<i32> = OnceLock::new();
    // SAFETY: dup of the process's stderr, kept open for its whole life.
    let fd = *SAVED.get_or_init(|| unsafe { libc::dup(2) });
    // SAFETY: a fresh duplicate of `fd`, owned by the File returned.
    unsafe { std::fs::File::from_raw_fd(libc::dup(fd)) }
}

/// Writes `bytes` to a new file at `path`. Not truncating the old one keeps
/// ext4 from flushing it (`auto_da_alloc`), which made writes 50 times slower.
fn replace_file(path: &Path, bytes: &[u8]) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).unwrap();
}

/// Runs `count` inputs from `seed` in-process and returns the figures.
fn fuzz_in_process(seed: u64, count: u64, dir: &Path) -> Figures {
    let seeds = seed_replay_files(dir);
    let replay_path = dir.join("input.cmc");
    std::fs::write(&replay_path, &seeds[0]).unwrap();
    let bases = base_command_lines(&replay_path);
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut figures = Figures::default();
    let watchdog = Watchdog::start(Duration::from_secs(60));
    let files = SeedFiles::new(dir);
    for index in 0..count {
        // A third replay files, a third command lines, a third the other files.
        let args: Vec<OsString> = match index % 6 {
            0 | 2 => {
                let bytes = mutate_replay_file(&mut rng, &seeds);
                replace_file(&replay_path, &bytes);
                let mut args = vec!["cmc".into(), "replay".into(), replay_path.clone().into()];
                if rng.gen_bool(0.3) {
                    args.push("--json".into());
                }
                watchdog.starting(Input::File("replay file", bytes));
                args
            }
            1 | 3 | 5 => {
                replace_file(&replay_path, seeds.choose(&mut rng).unwrap());
                let args = mutate_command_line(&mut rng, &bases);
                watchdog.starting(Input::CommandLine(args.clone()));
                args
            }
            _ => {
                let (kind, bytes, args) = files.mutated(&mut rng, dir);
                watchdog.starting(Input::File(kind, bytes));
                args.iter().map(OsString::from).collect()
            }
        };
        let panics_before = panics().lock().unwrap().len();
        let code = catch_unwind(AssertUnwindSafe(|| cmc_cli::run(args.clone())));
        watchdog.finished();
        figures.inputs += 1;
        if figures.inputs % 100_000 == 0 {
            let _ = writeln!(
                saved_stderr(),
                "fuzz: {} inputs, {} failures",
                figures.inputs,
                figures.failures.len()
            );
        }
        // Any thread's panic counts, even one the front end caught.
        let panicked = panics().lock().unwrap().get(panics_before).cloned();
        match (code, panicked) {
            (_, Some(panic)) => figures.failures.push(format!("{panic} for {args:?}")),
            (Ok(code @ (0..=2 | 4)), None) => figures.by_exit_code[code as usize] += 1,
            (Ok(code), None) => figures
                .failures
                .push(format!("exit code {code} for {args:?}")),
            (Err(_), None) => figures.failures.push(format!("panic for {args:?}")),
        }
    }
    figures
}

/// Node 0's first request under the reqack core, as a correct glue logs it.
const GLUE_LOG: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../cores/reqack/first_request.gluelog"
));

/// A gate file of one Rust core and one planted bug.
const GATE_FILE: &str = "timeout = 30\n\n[[core]]\nname = \"reqack\"\nrust = \"reqack\"\nnodes = 2\nparams = [\"requests=1\"]\n\n[[core.bug]]\nbug = 2\nexpect = \"Linearizable\"\nmax_depth = 12\nmax_states = 1000\n";

/// A corpus that pins the seed replay files (see [`seed_replay_files`]).
const CORPUS: &str = "[[pin]]\ntrace = \"seed0.cmc\"\nfixed = [\"INVARIANTS=TPTypeOK\"]\n\n[[pin]]\ntrace = \"seed1.cmc\"\nfixed = [\"INVARIANTS=TypeOK\"]\n";

/// The seeds of the files other than replay files: a glue log, a gate file,
/// a corpus manifest, the sealed manifest of a checkpoint saved in
/// `DIR/ckpt-seed` and that of a timely checkpoint saved in
/// `DIR/timely-seed` (process 0's).
struct SeedFiles {
    checkpoint_manifest: String,
    timely_manifest: String,
}

/// Where a timely checkpoint keeps process 0's manifest.
const TIMELY_MANIFEST: &str = "process-0/manifest.json";

/// A timely run of two workers stopped by its time limit at its first level
/// boundary (its set-up alone takes longer), so that it keeps its checkpoint
/// (a complete run removes it): the same checkpoint on every run.
const TIMELY_SEED_RUN: &[&str] = &[
    "cmc",
    "check",
    "two-phase",
    "RM=3",
    "--engine",
    "timely",
    "--workers",
    "2",
    "--checkpoint",
    "timely-seed",
    "--time-limit",
    "0.001",
    "--progress",
    "off",
];

/// `sealed` mutated: half the time its body, sealed again (so that the edit
/// reaches the checks behind the seal), else the sealed text as it is.
fn mutate_sealed(rng: &mut Pcg64, sealed: &str) -> Vec<u8> {
    let body = cmc_search::sealed::unseal(sealed).unwrap();
    if rng.gen_bool(0.5) {
        let edited = mutate_replay_file(rng, &[body.as_bytes().to_vec()]);
        match String::from_utf8(edited) {
            Ok(text) => cmc_search::sealed::seal(&text).into_bytes(),
            Err(raw) => raw.into_bytes(),
        }
    } else {
        mutate_replay_file(rng, &[sealed.as_bytes().to_vec()])
    }
}

impl SeedFiles {
    fn new(dir: &Path) -> SeedFiles {
        let args = [
            "cmc",
            "check",
            "two-phase",
            "RM=3",
            "--checkpoint",
            "ckpt-seed",
        ];
        assert_eq!(cmc_cli::run(args), 0);
        let manifest = dir.join("ckpt-seed/checkpoint/manifest");
        // Bounded by time: exit code 2, the checkpoint kept.
        assert_eq!(cmc_cli::run(TIMELY_SEED_RUN), 2);
        let timely = dir.join("timely-seed").join(TIMELY_MANIFEST);
        SeedFiles {
            checkpoint_manifest: std::fs::read_to_string(manifest).unwrap(),
            timely_manifest: std::fs::read_to_string(timely).unwrap(),
        }
    }

    /// A mutated file of a kind drawn at random, written where its command
    /// reads it: its kind, its bytes and the command line.
    fn mutated(&self, rng: &mut Pcg64, dir: &Path) -> (&'static str, Vec<u8>, Vec<&'static str>) {
        match rng.gen_range(0..5) {
            0 => {
                let bytes = mutate_replay_file(rng, &[GLUE_LOG.as_bytes().to_vec()]);
                replace_file(&dir.join("glue.log"), &bytes);
                let args = [&["cmc"][..], &common::VALIDATE_GLUE_LOG].concat();
                ("glue log", bytes, args)
            }
            1 => {
                let bytes = mutate_replay_file(rng, &[GATE_FILE.as_bytes().to_vec()]);
                replace_file(&dir.join("gate.toml"), &bytes);
                let args = ["cmc", "gate", "gate.toml", "--only", "no-such-core"];
                ("gate file", bytes, args.to_vec())
            }
            2 => {
                let bytes = mutate_replay_file(rng, &[CORPUS.as_bytes().to_vec()]);
                replace_file(&dir.join("corpus.toml"), &bytes);
                ("corpus manifest", bytes, ["cmc", "corpus", "."].to_vec())
            }
            3 => {
                let bytes = mutate_sealed(rng, &self.checkpoint_manifest);
                copy_dir(&dir.join("ckpt-seed"), &dir.join("ckpt-fuzz"));
                replace_file(&dir.join("ckpt-fuzz/checkpoint/manifest"), &bytes);
                let args = ["cmc", "check", "--resume", "ckpt-fuzz", "--progress", "off"];
                ("checkpoint manifest", bytes, args.to_vec())
            }
            _ => {
                let bytes = mutate_sealed(rng, &self.timely_manifest);
                copy_dir(&dir.join("timely-seed"), &dir.join("timely-fuzz"));
                replace_file(&dir.join("timely-fuzz").join(TIMELY_MANIFEST), &bytes);
                let args = [
                    "cmc",
                    "check",
                    "--resume",
                    "timely-fuzz",
                    "--engine",
                    "timely",
                    "--workers",
                    "2",
                    "--progress",
                    "off",
                ];
                ("timely checkpoint manifest", bytes, args.to_vec())
            }
        }
    }
}

/// Replaces `to` with a copy of the directory tree `from`.
fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Prepares the directory in-process runs work in (they write replay files
/// and checkpoints into the current directory).
fn fuzz_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    let status = Command::new("mkfifo").arg("fifo").status().unwrap();
    assert!(status.success());
    dir
}

fn seed_from_env(default: u64) -> u64 {
    std::env::var("CMC_FUZZ_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(default)
}

#[test]
fn ten_thousand_mutated_inputs_in_process_end_in_0_1_or_2() {
    panics();
    let dir = fuzz_dir();
    let started = Instant::now();
    let figures = fuzz_in_process(seed_from_env(1), 10_000, dir.path());
    eprintln!("fuzz: {figures:?} in {:?}", started.elapsed());
    assert_eq!(figures.inputs, 10_000);
    assert!(figures.failures.is_empty(), "{:#?}", figures.failures);
    // The mutations reach every outcome, not only errors.
    assert!(
        figures.by_exit_code.iter().take(3).all(|&n| n > 0),
        "{figures:?}"
    );
}

/// The long run of `scripts/fuzz.sh`: `CMC_FUZZ_INPUTS` inputs (default
/// 10^6) from `CMC_FUZZ_SEED`, with the program's own output silenced.
#[test]
#[ignore = "long: run by scripts/fuzz.sh"]
fn fuzz_long() {
    panics();
    let count = std::env::var("CMC_FUZZ_INPUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let dir = fuzz_dir();
    let mut report = saved_stderr();
    let devnull = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    // SAFETY: redirecting stdout and stderr to /dev/null for the run; the
    // figures go to the saved copy of stderr.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::dup2(devnull.as_raw_fd(), 1);
        libc::dup2(devnull.as_raw_fd(), 2);
    }
    let started = Instant::now();
    let seed = seed_from_env(7);
    let figures = fuzz_in_process(seed, count, dir.path());
    let _ = writeln!(
        report,
        "fuzz: seed {seed}: {} inputs in {:.1} s; exit codes 0/1/2/4: {}/{}/{}/{}; failures: {}",
        figures.inputs,
        started.elapsed().as_secs_f64(),
        figures.by_exit_code[0],
        figures.by_exit_code[1],
        figures.by_exit_code[2],
        figures.by_exit_code[4],
        figures.failures.len()
    );
    for failure in figures.failures.iter().take(20) {
        let _ = writeln!(report, "  {failure}");
    }
    assert!(figures.failures.is_empty());
}

/// Runs the `cmc` binary on `args` in `dir`; an error text if it ends other
/// than with 0, 1, 2 or 4 (stale) and no panic text, or runs longer than `limit`.
fn spawned_failure(args: &[OsString], dir: &Path, limit: Duration) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(&args[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cmc binary runs");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("hang (> {limit:?}) for {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = reader.join().unwrap();
    match (status.code(), status.signal()) {
        (_, Some(signal)) => Some(format!("signal {signal} for {args:?}: {stderr}")),
        (Some(0..=2 | 4), _) if !stderr.contains("panicked") => None,
        (code, _) => Some(format!("exit code {code:?} for {args:?}: {stderr}")),
    }
}

#[test]
fn three_hundred_mutated_inputs_to_the_binary_end_in_0_1_or_2() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = seed_replay_files(dir.path());
    let status = Command::new("mkfifo")
        .arg(dir.path().join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut bases = base_command_lines(Path::new("input.cmc"));
    bases.push(
        [
            "check",
            "--core",
            "rust:reqack",
            "requests=1",
            "--nodes",
            "2",
        ]
        .map(String::from)
        .to_vec(),
    );
    bases.push(
        ["check", "--core", "rust:reqack-bug2", "requests=2"]
            .map(String::from)
            .to_vec(),
    );
    let mut rng = Pcg64::seed_from_u64(seed_from_env(2));
    let mut failures = Vec::new();
    let input: PathBuf = dir.path().join("input.cmc");
    for index in 0..300 {
        let args = if index % 2 == 0 {
            replace_file(&input, &mutate_replay_file(&mut rng, &seeds));
            vec!["cmc".into(), "replay".into(), "input.cmc".into()]
        } else {
            replace_file(&input, seeds.choose(&mut rng).unwrap());
            mutate_command_line(&mut rng, &bases)
        };
        if let Some(failure) = spawned_failure(&args, dir.path(), Duration::from_secs(60)) {
            failures.push(failure);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
