//! The user's own front end, `mycheck`, as the user runs it: it checks,
//! fails, replays and gates the user's own model and core, and the core
//! exported as a shared library counts exactly like the core in process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::{Core, World, WorldSpec};
use rust_user::ring::TokenRing;
use rust_user::wal::{self, Wal};

/// `mycheck args` run in `dir`.
fn mycheck(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mycheck"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("mycheck runs")
}

/// The shared library this package's library is also built as: cargo
/// builds it with the rlib this test links, into `deps/` (only `cargo build`
/// also copies it next to the binaries).
fn core_library() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_mycheck")).parent().unwrap();
    let name = format!(
        "{}rust_user{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let built_with_the_tests = dir.join("deps").join(&name);
    if built_with_the_tests.is_file() {
        built_with_the_tests
    } else {
        dir.join(name)
    }
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Distinct states, generated states and depth of a JSON report.
fn counts(report: &serde_json::Value) -> (u64, u64, u64) {
    let count = |key: &str| report[key].as_u64().unwrap();
    (
        count("distinct_states"),
        count("states_generated"),
        count("depth"),
    )
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_model_is_checked_its_bug_found_and_replayed_by_the_users_binary() {
    let dir = tempfile::tempdir().unwrap();
    let passing = mycheck(&["check", "token-ring", "N=5", "--json"], dir.path());
    assert_eq!(passing.status.code(), Some(0), "{}", stderr(&passing));
    let in_process = Checker::new(TokenRing::new(5, 0)).workers(2).run();
    assert_eq!(in_process.verdict, Verdict::Pass);
    let expected = (
        in_process.stats.distinct_states,
        in_process.stats.states_generated,
        in_process.stats.depth,
    );
    assert_eq!(counts(&json(&passing)), expected);

    let failing = mycheck(
        &[
            "check",
            "token-ring",
            "BUG=1",
            "--json",
            "--replay-out",
            "ring.cmc-trace",
        ],
        dir.path(),
    );
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    assert_eq!(json(&failing)["property"], "MutualExclusion");
    let trace = dir.path().join("ring.cmc-trace");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("# written by mycheck:"), "{text}");
    assert_eq!(text.matches("replay FILE").count(), 1, "{text}");
    assert!(!text.contains("cmc replay"), "{text}");
    assert!(text.contains("param BUG=1"), "{text}");

    let replayed = mycheck(&["replay", "ring.cmc-trace"], dir.path());
    assert_eq!(replayed.status.code(), Some(1), "{}", stderr(&replayed));
    assert!(
        stdout(&replayed).contains("Invariant MutualExclusion is violated"),
        "{}",
        stdout(&replayed)
    );
    // cmc itself lacks the model: bad input, not a verdict.
    assert_eq!(cmc_cli::run(["cmc", "replay", trace.to_str().unwrap()]), 2);

    for strategy in [
        &["--dfs"][..],
        &["--simulate", "--walks", "50", "--seed", "3"],
    ] {
        let mut args = vec![
            "check",
            "token-ring",
            "BUG=1",
            "--replay-out",
            "other.cmc-trace",
        ];
        args.extend_from_slice(strategy);
        let output = mycheck(&args, dir.path());
        assert_eq!(
            output.status.code(),
            Some(1),
            "{strategy:?}: {}",
            stderr(&output)
        );
    }
    let unknown = mycheck(&["check", "token-ring", "NODES=4"], dir.path());
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown)
            .starts_with("mycheck: error: model `token-ring`: there is no parameter NODES"),
        "{}",
        stderr(&unknown)
    );
}

/// The World the tests check the wal core in.
const WAL_WORLD: [&str; 5] = ["--nodes", "1", "requests=3", "crashes=1", "restarts=1"];

/// One node running the correct wal core with World parameters `params`,
/// not equipped.
fn wal_world(params: &[&str]) -> World {
    let mut spec = WorldSpec::new(Arc::new(Wal::default()) as Arc<dyn Core>, 1).unwrap();
    spec.set_all(params).unwrap();
    World::new(spec)
}

/// Distinct states, generated states and depth of a passing check of `world`.
fn counts_in_process(world: World) -> (u64, u64, u64) {
    let checker = Checker::new(world).workers(2);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None);
    assert_eq!(outcome.verdict, Verdict::Pass);
    (
        outcome.stats.distinct_states,
        outcome.stats.states_generated,
        outcome.stats.depth,
    )
}

/// The `[name, value]` pairs of a JSON report's parameters.
fn params(report: &serde_json::Value) -> Vec<String> {
    report["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            format!(
                "{}={}",
                pair[0].as_str().unwrap(),
                pair[1].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_cores_registered_defaults_apply_unless_the_command_line_gives_them() {
    let dir = tempfile::tempdir().unwrap();
    // No World parameters: the registration's (requests=3 crashes=1
    // restarts=1), recorded in the report as if given.
    let output = mycheck(
        &["check", "--core", "rust:wal", "--nodes", "1", "--json"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    for default in wal::DEFAULTS {
        assert!(params(&report).contains(&default.to_string()), "{report}");
    }
    let with_defaults = counts_in_process(wal::equip(wal_world(&wal::DEFAULTS)));
    assert_eq!(counts(&report), with_defaults);

    // The command line overrides one default and keeps the others.
    let output = mycheck(
        &[
            "check",
            "--core",
            "rust:wal",
            "--nodes",
            "1",
            "requests=1",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert!(
        params(&report).contains(&"requests=1".to_string()),
        "{report}"
    );
    assert!(
        !params(&report).contains(&"requests=3".to_string()),
        "{report}"
    );
    let overridden = counts_in_process(wal::equip(wal_world(&[
        "requests=1",
        "crashes=1",
        "restarts=1",
    ])));
    assert_eq!(counts(&report), overridden);
    assert_ne!(overridden, with_defaults);

    // A planted bug with the defaults alone is caught, and its trace, which
    // records them, replays.
    let output = mycheck(
        &["check", "--core", "rust:wal-bug2", "--nodes", "1", "--json"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(json(&output)["property"], "AckedIsDurable");
    let trace = std::fs::read_to_string(dir.path().join("world.cmc-trace")).unwrap();
    assert!(trace.contains("param requests=3"), "{trace}");
    let replayed = mycheck(&["replay", "world.cmc-trace"], dir.path());
    assert_eq!(replayed.status.code(), Some(1), "{}", stderr(&replayed));
}

#[test]
fn the_registration_equips_the_world_and_the_summary_takes_fewer_states() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["check", "--core", "rust:wal", "--json"];
    args.extend_from_slice(&WAL_WORLD);
    let output = mycheck(&args, dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    let checked: Vec<&str> = report["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(checked.contains(&"always Linearizable"), "{checked:?}");
    assert!(checked.contains(&"always AckedIsDurable"), "{checked:?}");
    let equipped = counts(&report);
    assert_eq!(
        equipped,
        counts_in_process(wal::equip(wal_world(&WAL_WORLD[2..])))
    );
    // The same World with the properties alone keeps the whole client
    // history in each state's identity.
    let whole_history =
        counts_in_process(wal_world(&WAL_WORLD[2..]).with_properties(wal::properties()));
    eprintln!(
        "distinct states: {} equipped, {} with the whole history",
        equipped.0, whole_history.0
    );
    assert!(
        equipped.0 < whole_history.0,
        "{equipped:?} {whole_history:?}"
    );
}

#[test]
fn describe_list_and_check_help_show_a_cores_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = wal::DEFAULTS.join(" ");
    let described = mycheck(&["describe", "rust:wal-bug1"], dir.path());
    assert_eq!(described.status.code(), Some(0), "{}", stderr(&described));
    let text = stdout(&described);
    assert!(text.contains("durable part: 4 bytes"), "{text}");
    assert!(
        text.contains(&format!("default World parameters: {defaults}")),
        "{text}"
    );
    let listed = stdout(&mycheck(&["list"], dir.path()));
    assert!(
        listed.lines().any(|line| line.starts_with("rust:wal ")
            && line.ends_with(&format!("defaults: {defaults}"))),
        "{listed}"
    );
    let help = stdout(&mycheck(&["check", "--help"], dir.path()));
    assert!(help.contains(&format!("wal: {defaults}")), "{help}");
    let unknown = mycheck(&["describe", "rust:wall"], dir.path());
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("unknown core `rust:wall`"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn the_core_exported_as_a_library_counts_as_the_core_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let checker = Checker::new(wal::equip(wal_world(&WAL_WORLD[2..]))).workers(2);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None);
    assert_eq!(outcome.verdict, Verdict::Pass);
    let in_process = (
        outcome.stats.distinct_states,
        outcome.stats.states_generated,
        outcome.stats.depth,
    );
    let library = core_library();
    assert!(library.is_file(), "{} was built", library.display());
    for core in ["rust:wal", library.to_str().unwrap()] {
        let mut args = vec!["check", "--core", core, "--json", "--check-determinism"];
        args.extend_from_slice(&WAL_WORLD);
        let output = mycheck(&args, dir.path());
        assert_eq!(output.status.code(), Some(0), "{core}: {}", stderr(&output));
        assert_eq!(counts(&json(&output)), in_process, "{core}");
    }

    // A planted bug through the user's core registry, caught by its
    // property, and its World trace replayed through the same core.
    let mut args = vec!["check", "--core", "rust:wal-bug2", "--json"];
    args.extend_from_slice(&WAL_WORLD);
    let output = mycheck(&args, dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(json(&output)["property"], "AckedIsDurable");
    let replayed = mycheck(&["replay", "world.cmc-trace"], dir.path());
    assert_eq!(replayed.status.code(), Some(1), "{}", stderr(&replayed));
    assert!(
        stdout(&replayed).contains("AckedIsDurable"),
        "{}",
        stdout(&replayed)
    );
}

#[test]
fn the_gate_file_of_the_users_core_has_no_holes() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Path::new(env!("CARGO_MANIFEST_DIR")).join("gate.toml");
    let output = mycheck(
        &["gate", gate.to_str().unwrap(), "--evidence", "evidence"],
        dir.path(),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let text = stdout(&output);
    let verdicts: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split_whitespace().nth(3))
        .collect();
    assert_eq!(verdicts[..3], ["PASS", "CAUGHT", "CAUGHT"], "{text}");
    assert!(text.contains("gate: no holes"), "{text}");
    assert!(dir.path().join("evidence/wal-bug2.cmc-trace").is_file());
}

/// `mycheck explore` serves the web explorer on the user's own model: its
/// first page lists the token ring's initial state, and its first state's page
/// shows its fields and enabled actions.
#[test]
fn the_explorer_serves_the_users_own_model() {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut server = Command::new(env!("CARGO_BIN_EXE_mycheck"))
        .args(["explore", "token-ring", "N=3", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("mycheck runs");
    let mut first_line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let get = |path: &str| {
        let address = first_line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no URL in {first_line:?}"));
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    };
    let initial = get("/");
    let state = get("/?path=0");
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        first_line.starts_with("mycheck explore: serving http://127.0.0.1:"),
        "{first_line}"
    );
    assert!(initial.starts_with("HTTP/1.1 200"), "{initial}");
    assert!(initial.contains("token-ring"), "{initial}");
    assert!(state.starts_with("HTTP/1.1 200"), "{state}");
    assert!(state.contains("<h2>Enabled actions ("), "{state}");
    assert!(state.contains("<h2>Fields"), "{state}");
}

/// `mycheck check WORDS` on 2 loopback processes of the timely engine, each
/// in `dir`; every process's output.
fn mycheck_on_two_processes(words: &[&str], dir: &Path) -> Vec<Output> {
    // Bound together so the ports differ; freed just before the run.
    let listeners: Vec<std::net::TcpListener> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let hosts: Vec<String> = listeners
        .iter()
        .map(|listener| listener.local_addr().unwrap().to_string())
        .collect();
    std::fs::write(dir.join("hosts"), hosts.join("\n")).unwrap();
    drop(listeners);
    let children: Vec<std::process::Child> = (0..2)
        .map(|index: usize| {
            Command::new(env!("CARGO_BIN_EXE_mycheck"))
                .arg("check")
                .args(words)
                .args(["--engine", "timely", "--workers", "1", "--json"])
                .args(["--processes", "2", "--process", &index.to_string()])
                .args(["--hostfile", "hosts", "--connect-timeout", "30"])
                .args(["--replay-out", &format!("trace-{index}.cmc")])
                .current_dir(dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("mycheck starts")
        })
        .collect();
    children
        .into_iter()
        .map(|child| child.wait_with_output().expect("mycheck ends"))
        .collect()
}

#[test]
fn the_users_model_runs_on_two_timely_processes() {
    let dir = tempfile::tempdir().unwrap();
    let native = json(&mycheck(
        &["check", "token-ring", "N=6", "--json"],
        dir.path(),
    ));
    for output in mycheck_on_two_processes(&["token-ring", "N=6"], dir.path()) {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(counts(&json(&output)), counts(&native));
        assert!(
            stderr(&output).contains("2 process(es)"),
            "{}",
            stderr(&output)
        );
    }
    let native = json(&mycheck(
        &["check", "token-ring", "N=5", "BUG=1", "--json"],
        dir.path(),
    ));
    assert_eq!(native["property"], "MutualExclusion", "{native}");
    for output in mycheck_on_two_processes(&["token-ring", "N=5", "BUG=1"], dir.path()) {
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let report = json(&output);
        assert_eq!(report["property"], "MutualExclusion");
        assert_eq!(report["counterexample"], native["counterexample"]);
    }
}
