//! `cmc gate FILE`: the reference gate file, and gate files of a user's own
//! cores with the ways a gate can fail (a variant that is not buggy, a build
//! that fails, a variant past its timeout, a malformed file).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{cmc, cmc_exiting, repository, text, C_WARNINGS};

fn reference_gate() -> PathBuf {
    repository().join("crates/protocols/gate.toml")
}

/// The C compiler command a gate file's build line uses for `cores/<source>`,
/// with the repository's header folders and warnings as errors.
fn cc(source: &str, defines: &str) -> String {
    let repo = repository();
    format!(
        "cc {C_WARNINGS} -O0 -fPIC -shared -I{include} -I{reqack} {defines} {source} -o {{library}}",
        include = repo.join("include").display(),
        reqack = repo.join("cores/reqack").display(),
        source = repo.join("cores").join(source).display(),
    )
}

/// A gate file of one `[[core]]` called `reqack`, two nodes and two
/// requests, built or loaded as `source` says (its `build = ...` or
/// `rust = ...` line), with the `[[core.bug]]` entries `bugs`.
fn reqack_gate(source: &str, bugs: &[String]) -> String {
    let core = format!(
        r#"
[[core]]
name = "reqack"
{source}
nodes = 2
params = ["requests=2"]
"#
    );
    core + &bugs.concat()
}

/// A `[[core.bug]]` entry of the `reqack` gate: planted bug `bug`, to be
/// caught by `AckedIsDurable` within depth 10 and `max_states` states.
/// Lines added after it (its own `build = ...`) belong to the entry.
fn reqack_bug(bug: u32, max_states: u32) -> String {
    format!(
        r#"
[[core.bug]]
bug = {bug}
expect = "AckedIsDurable"
max_depth = 10
max_states = {max_states}
"#
    )
}

/// Writes `text` as `gate.toml` in `dir` and runs `cmc gate` on it with its
/// evidence in `dir/evidence`: exit code, stdout, stderr.
fn gate(dir: &Path, file: &str) -> (Option<i32>, String, String) {
    std::fs::write(dir.join("gate.toml"), file).unwrap();
    let output = cmc(
        &[
            "gate",
            "gate.toml",
            "--evidence",
            "evidence",
            "--workers",
            "2",
        ],
        dir,
    );
    let (stdout, stderr) = text(&output);
    (output.status.code(), stdout, stderr)
}

/// The table line of `core` `variant`.
fn line<'a>(stdout: &'a str, core: &str, variant: &str) -> &'a str {
    stdout
        .lines()
        .find(|line| {
            let mut words = line.split_whitespace();
            words.next() == Some(core) && words.next() == Some(variant)
        })
        .unwrap_or_else(|| panic!("no line for {core} {variant} in:\n{stdout}"))
}

#[test]
fn every_planted_bug_of_the_reference_cores_is_in_the_reference_gate() {
    let text = std::fs::read_to_string(reference_gate()).unwrap();
    let file: toml::Table = text.parse().unwrap();
    let mut gated = BTreeSet::new();
    for core in file["core"].as_array().unwrap() {
        let protocol = match (core.get("rust"), core.get("build")) {
            (Some(rust), _) => rust.as_str().unwrap().to_string(),
            (None, Some(build)) if build.as_str().unwrap().contains("two_phase.c") => {
                "two_phase".to_string()
            }
            other => panic!("unexpected source {other:?}"),
        };
        for bug in core["bug"].as_array().unwrap() {
            gated.insert((protocol.clone(), bug["bug"].as_integer().unwrap() as u32));
        }
    }
    let planted: BTreeSet<(String, u32)> = [
        ("two_phase", cmc_protocols::two_phase::BUGS),
        ("paxos", cmc_protocols::paxos::BUGS),
        ("primary_backup", cmc_protocols::primary_backup::BUGS),
        ("abd", cmc_protocols::abd::BUGS),
        ("raft", cmc_protocols::raft::BUGS),
    ]
    .into_iter()
    .flat_map(|(core, bugs)| (1..=bugs).map(move |bug| (core.to_string(), bug)))
    .collect();
    assert_eq!(gated, planted);
}

/// The two-phase configuration of the reference gate, which `cmc gate` runs
/// when no file is named (the C core, built by its build command,
/// supervised): control PASS, every bug CAUGHT with its evidence, which
/// replays. The whole file runs in scripts/main-job.sh.
#[test]
fn the_reference_gate_passes_on_the_c_core() {
    let dir = tempfile::tempdir().unwrap();
    // No file named: the reference gate of this source tree.
    let (stdout, _) = cmc_exiting(
        &[
            "gate",
            "--only",
            "two_phase",
            "--evidence",
            "evidence",
            "--workers",
            "2",
        ],
        dir.path(),
        0,
    );
    assert!(
        line(&stdout, "two_phase", "control").contains(" PASS "),
        "{stdout}"
    );
    let evidence = dir.path().join("evidence");
    for (bug, expected) in [
        (1, "NoCommitReplyBeforeFlush"),
        (2, "Validity"),
        (3, "Validity"),
        (4, "Agreement"),
    ] {
        let variant = format!("bug{bug}");
        let found = line(&stdout, "two_phase", &variant);
        assert!(found.contains(" CAUGHT "), "{found}");
        assert!(found.contains(expected), "{found}");
        let trace =
            std::fs::read_to_string(evidence.join(format!("two_phase-{variant}.cmc-trace")))
                .unwrap();
        assert!(trace.contains(&format!("violates {expected}")), "{trace}");
        let replay = cmc(
            &["replay", &format!("evidence/two_phase-{variant}.cmc-trace")],
            dir.path(),
        );
        assert_eq!(replay.status.code(), Some(1), "{:?}", text(&replay));
    }
    let summary = std::fs::read_to_string(evidence.join("summary.txt")).unwrap();
    assert!(summary.contains("gate: no holes"), "{summary}");
    assert!(
        summary.contains("# restarted coordinator answers STATUS from memory"),
        "{summary}"
    );
    assert_eq!(summary.lines().count(), 6, "{summary}");
}

#[test]
fn a_variant_that_is_not_buggy_is_a_hole() {
    let dir = tempfile::tempdir().unwrap();
    // Bug 2 is planted in reqack.c; bug 7 is not, so that "variant" is the
    // correct core and cannot be caught.
    let build = format!("build = \"{}\"", cc("reqack/reqack.c", "-DCMC_BUG={bug}"));
    let (code, stdout, stderr) = gate(
        dir.path(),
        &reqack_gate(&build, &[reqack_bug(2, 1000), reqack_bug(7, 1000)]),
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        line(&stdout, "reqack", "control").contains(" PASS "),
        "{stdout}"
    );
    assert!(
        line(&stdout, "reqack", "bug2").contains(" CAUGHT "),
        "{stdout}"
    );
    let hole = line(&stdout, "reqack", "bug7");
    assert!(
        hole.contains("HOLE (not caught: every property held)"),
        "{hole}"
    );
    assert!(stdout.contains("gate: 1 hole(s)"), "{stdout}");
}

#[test]
fn a_failing_build_and_a_state_budget_overrun_are_holes() {
    let dir = tempfile::tempdir().unwrap();
    // Bug 1 has a build of its own, which fails; bug 2 needs more than 5 states.
    let failing_build = format!("build = \"{}\"\n", cc("no_such_core.c", ""));
    let (code, stdout, stderr) = gate(
        dir.path(),
        &reqack_gate(
            "rust = \"reqack\"",
            &[reqack_bug(1, 1000) + &failing_build, reqack_bug(2, 5)],
        ),
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let build = line(&stdout, "reqack", "bug1");
    assert!(build.contains("HOLE (build failed"), "{build}");
    let log = std::fs::read_to_string(dir.path().join("evidence/build/reqack-bug1.log")).unwrap();
    assert!(log.contains("no_such_core.c"), "{log}");
    let budget = line(&stdout, "reqack", "bug2");
    assert!(
        budget.contains("HOLE (caught beyond its budget)"),
        "{budget}"
    );
}

#[test]
fn a_variant_past_its_timeout_is_killed_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    // The core spins forever in its first client step; the gate's timeout
    // (1 s) comes before the check's own step timeout (10 s).
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = gate(
        dir.path(),
        &format!(
            r#"
            [[core]]
            name = "spins"
            build = "{}"
            nodes = 2
            params = ["requests=1"]
            timeout = 1
            "#,
            cc("test/misbehave.c", "-DHANG")
        ),
    );
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        line(&stdout, "spins", "control").contains(" TIMEOUT "),
        "{stdout}"
    );
    assert!(started.elapsed().as_secs() < 8, "{:?}", started.elapsed());
    // Neither the check nor the supervised search it started is left
    // running (SIGKILL takes a moment to end a process).
    let library = dir.path().join("evidence/build/libspins-control.so");
    let library = library.to_str().unwrap();
    let mut survivors = processes_naming(library);
    for _ in 0..50 {
        if survivors.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        survivors = processes_naming(library);
    }
    assert!(survivors.is_empty(), "{survivors:?}");
}

/// The command lines of the running processes that mention `text`.
fn processes_naming(text: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(text))
        .collect()
}

#[test]
fn a_malformed_gate_file_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = gate(
        dir.path(),
        "[[core]]\nname = \"x\"\nrust = \"reqack\"\nnodes = two\n",
    );
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("gate.toml"), "{stderr}");
    assert!(stderr.contains("line 4"), "{stderr}");
    let (code, _, stderr) = gate(
        dir.path(),
        "[[core]]\nname = \"x\"\nnodes = 2\n\n[[core.bug]]\nbug = 1\nexpect = \"P\"\nmax_depth = 3\nmax_states = 3\n",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("line 2: core `x`: give exactly one of build, library or rust"),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join("gate.toml"),
        "[[core]]\nname = \"x\"\nrust = \"reqack\"\nnodes = 2\n",
    )
    .unwrap();
    let unknown = cmc(&["gate", "gate.toml", "--only", "y"], dir.path());
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown)
        .1
        .contains("--only y: no [[core]] of that name"));
    let missing = cmc(&["gate", "no-such-gate.toml"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing).1.contains("cannot read the gate file"));
}

#[test]
fn a_bug_found_by_random_walks_is_gated_by_walks_with_their_seed() {
    let dir = tempfile::tempdir().unwrap();
    let walks = reqack_bug(2, 100_000)
        + "search = { strategy = \"walks\", walks = 2000, walk_length = 20, seed = 7 }\n";
    let (code, stdout, stderr) = gate(dir.path(), &reqack_gate("rust = \"reqack\"", &[walks]));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let caught = line(&stdout, "reqack", "bug2");
    assert!(
        caught.contains(" CAUGHT ") && caught.contains(" walks="),
        "{caught}"
    );
    let report = std::fs::read_to_string(dir.path().join("evidence/reqack-bug2.json")).unwrap();
    assert!(report.contains("\"strategy\": \"simulate\""), "{report}");
    assert!(report.contains("seed=7"), "{report}");
}

#[test]
fn a_command_line_option_in_params_is_refused_not_run() {
    // A control bounded to 5 states would "pass" on a buggy core.
    let dir = tempfile::tempdir().unwrap();
    let file = "[[core]]\nname = \"x\"\nrust = \"reqack-bug2\"\nnodes = 2\nparams = [\"requests=2\", \"--max-states=5\"]\n";
    let (code, stdout, stderr) = gate(dir.path(), file);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("line 2") && stderr.contains("`--max-states=5` is not one"),
        "{stderr}"
    );
    assert!(!stdout.contains("PASS"), "{stdout}");
}
