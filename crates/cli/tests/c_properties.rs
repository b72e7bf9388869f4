//! `cmc check --core` and `cmc describe` with properties written in C
//! (`cores/test/reqack_props.c` linked with the reqack core into one library).

mod common;

use std::path::{Path, PathBuf};

use common::{cmc, cmc_exiting, compile_c, core_check_args, text};

/// Builds the reqack core with its C properties (`-D<flag>` if given) into `dir`.
fn core_with_properties(dir: &Path, flag: Option<&str>) -> PathBuf {
    let out = dir.join(format!("libreqack_props_{}.so", flag.unwrap_or("plain")));
    let define = flag.map(|flag| format!("-D{flag}"));
    let mut flags = vec!["-O2", "-shared", "-fPIC"];
    flags.extend(define.as_deref());
    compile_c(
        &["cores/reqack/reqack.c", "cores/test/reqack_props.c"],
        &flags,
        &out,
    );
    out
}

fn check(core: &Path, dir: &Path) -> (Option<i32>, String, String) {
    let output = cmc(
        &core_check_args(core, &["--replay-out", "trace.cmc", "--step-timeout", "1"]),
        dir,
    );
    let (stdout, stderr) = text(&output);
    (output.status.code(), stdout, stderr)
}

#[test]
fn holding_c_properties_pass() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), None);
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No error has been found"), "{stdout}");
}

#[test]
fn a_violated_c_invariant_fails_by_name_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("VIOLATED"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Invariant NothingStored is violated"),
        "{stdout}"
    );
    let replay = cmc(&["replay", "trace.cmc"], dir.path());
    let (replayed, errors) = text(&replay);
    // A replay that reproduces the violation exits as the check did.
    assert_eq!(replay.status.code(), Some(1), "{replayed}{errors}");
    assert!(
        replayed.contains("Invariant NothingStored is violated"),
        "the replay reaches the same violation: {replayed}"
    );
}

#[test]
fn a_c_witness_never_reached_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("UNREACHED"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("without ever reaching TwoReplies"),
        "{stdout}"
    );
}

#[test]
fn a_crashing_c_property_is_a_core_fault() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("CRASHES"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "", "a fault gives no verdict");
    assert!(
        stderr.contains("CORE CRASHED") && stderr.contains("while checking property Crashes"),
        "{stderr}"
    );
}

#[test]
fn describe_prints_name_sizes_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("GOAL_NEVER"));
    let (stdout, _) = cmc_exiting(&["describe", core.to_str().unwrap()], dir.path(), 0);
    let expected = format!(
        "core reqack\n  library: {}\n  ABI version: 1\n  durable part: 8 bytes\n  \
         volatile part: 16 bytes\n  properties:\n    invariant        StoredOnlyIssued\n    \
         action           StoredGrows\n    witness          StoredAndReplied\n    \
         quiescence goal  NeverReached\n  registered as: rust:reqack: Rust core (--core \
         rust:reqack): request/acknowledge with retransmission (cmc-world's example); planted \
         bugs rust:reqack-bug1 to rust:reqack-bug3\n  default World parameters: none\n",
        core.display()
    );
    assert_eq!(stdout, expected);
    let missing = cmc(&["describe", "missing.so"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn a_c_property_that_writes_to_its_view_is_a_core_fault() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("WRITES"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "", "a fault gives no verdict");
    assert!(
        stderr.contains("CORE MEMORY VIOLATION")
            && stderr.contains("while checking property Writes")
            && !stderr.contains("0 step(s)"),
        "{stderr}"
    );
}

/// A write far past the node-view array (12 KiB to 64 MiB) reaches no
/// memory of the checker: the view is in a mapping of its own between
/// large inaccessible regions, so the write faults (or changes the view).
#[test]
fn a_c_property_that_writes_far_past_its_view_is_a_core_fault() {
    let dir = tempfile::tempdir().unwrap();
    for offset in ["12288", "1048576", "67108864"] {
        let core = core_with_properties(dir.path(), Some(&format!("WRITES_FAR={offset}")));
        let (code, stdout, stderr) = check(&core, dir.path());
        assert_eq!(code, Some(2), "{offset}: {stdout}{stderr}");
        assert_eq!(stdout, "", "a fault gives no verdict");
        assert!(
            (stderr.contains("CORE CRASHED") || stderr.contains("CORE MEMORY VIOLATION"))
                && stderr.contains("while checking property WritesFar"),
            "{offset}: {stderr}"
        );
    }
}

#[test]
fn a_c_property_that_hangs_is_a_core_fault() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("HANGS"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stdout, "", "a fault gives no verdict");
    assert!(
        stderr.contains("CORE HUNG") && stderr.contains("while checking property Hangs"),
        "{stderr}"
    );
}

/// A C invariant declared with `CMC_INVARIANT_WHY` says why it failed: the
/// report shows its text, in words and as the JSON `explanation`.
#[test]
fn a_c_invariant_says_why_it_failed() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("WHY"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Why the last state violates it:\n    n1 stored requests 0x1"),
        "{stdout}"
    );
    let json = cmc(&core_check_args(&core, &["--json"]), dir.path());
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["property"], "NothingStored");
    assert_eq!(report["explanation"], "n1 stored requests 0x1");
}

/// So does an action property declared with `CMC_ACTION_PROP_WHY`, about
/// the step that failed it.
#[test]
fn a_c_action_property_says_why_it_failed() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("WHY_STEP"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Why the last step violates it:\n    n1 stored 0x0, then 0x1"),
        "{stdout}"
    );
}

/// Only invariants and action properties say why: a witness that claims to
/// is refused when the library is loaded, naming it.
#[test]
fn a_witness_that_claims_to_say_why_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("WHY_WITNESS"));
    let (code, stdout, stderr) = check(&core, dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("entry `Issued` (witness) cannot say why"),
        "{stderr}"
    );
}

/// A C core that exports `CMC_DESCRIBE` shows its replies and its client
/// operations as text in a counterexample and its replay, not as hex.
#[test]
fn a_c_core_describes_its_replies_and_operations() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("libreqack_described.so");
    compile_c(
        &["cores/reqack/reqack.c", "cores/test/reqack_props.c"],
        &["-O2", "-shared", "-fPIC", "-DCMC_BUG=1", "-DDESCRIBE"],
        &core,
    );
    assert_replies_and_operations_described(&core, dir.path());
}

/// The same core behind a heap-state adapter (`include/cmc_heap.h`) whose
/// library exports the same describe table: its counterexample reads as the
/// plain core's.
#[test]
fn a_heap_state_core_describes_its_replies_and_operations() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("libreqack_heap_described.so");
    compile_c(
        &[
            "cores/reqack/reqack.c",
            "cores/test/reqack_props.c",
            "cores/test/reqack_heap.c",
        ],
        &["-O2", "-shared", "-fPIC", "-DCMC_BUG=1", "-DDESCRIBE"],
        &core,
    );
    let (described, _) = cmc_exiting(&["describe", core.to_str().unwrap()], dir.path(), 0);
    assert!(
        described.contains("heap-state core reqack-heap"),
        "{described}"
    );
    assert!(
        described.contains("describes: replies, client operations"),
        "{described}"
    );
    assert_replies_and_operations_described(&core, dir.path());
}

/// Checks reqack with planted bug 1 from the library `core` (built with
/// `-DDESCRIBE`) and asserts that the counterexample and its replay show
/// the replies as `OK` and the operations as `op=N`.
fn assert_replies_and_operations_described(core: &Path, dir: &Path) {
    let extra = [
        "workload=put:2",
        "crashes=1",
        "restarts=1",
        "crash_nodes=0",
        "--replay-out",
        "trace.cmc",
    ];
    let output = cmc(&core_check_args(core, &extra), dir);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("invoke r0@n"), "{stdout}");
    assert!(
        stdout.contains(" op=0") || stdout.contains(" op=1"),
        "{stdout}"
    );
    assert!(stdout.contains("reply r0@n0 OK"), "{stdout}");
    let replay = cmc(&["replay", "trace.cmc"], dir);
    let (replayed, errors) = text(&replay);
    assert!(
        replayed.contains("output  REPLY r0 OK"),
        "{replayed}{errors}"
    );
    assert!(replayed.contains("CLIENT id=0 op="), "{replayed}");
}

/// `cmc check --core LIB args` in `dir`, with the reqack World of these tests.
fn check_with(core: &Path, args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let mut extra = vec!["--replay-out", "trace.cmc", "--step-timeout", "1"];
    extra.extend_from_slice(args);
    let output = cmc(&core_check_args(core, &extra), dir);
    let (stdout, stderr) = text(&output);
    (output.status.code(), stdout, stderr)
}

#[test]
fn a_c_property_reads_the_worlds_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_with_properties(dir.path(), Some("CONFIG"));
    // IssuedAtMostCfg0: at most cfg0 requests are issued, of the one there is.
    let (code, stdout, stderr) = check_with(&core, &["cfg0=1"], dir.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let (code, stdout, stderr) = check_with(&core, &["cfg0=0"], dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Invariant IssuedAtMostCfg0 is violated"),
        "{stdout}"
    );
}

#[test]
fn invariants_selects_a_librarys_properties_by_name() {
    let dir = tempfile::tempdir().unwrap();
    // NothingStored is violated; the other properties hold.
    let core = core_with_properties(dir.path(), Some("VIOLATED"));
    let (code, stdout, stderr) = check_with(
        &core,
        &["INVARIANTS=StoredOnlyIssued,StoredGrows", "--json"],
        dir.path(),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["properties"],
        serde_json::json!(["always StoredOnlyIssued", "step StoredGrows"])
    );

    // The selected invariant fails, and the trace records the selection:
    // its replay checks the same properties.
    let (code, stdout, stderr) = check_with(&core, &["INVARIANTS=NothingStored"], dir.path());
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let trace = std::fs::read_to_string(dir.path().join("trace.cmc")).unwrap();
    assert!(trace.contains("param INVARIANTS=NothingStored"), "{trace}");
    let replay = cmc(&["replay", "trace.cmc"], dir.path());
    let (replayed, errors) = text(&replay);
    assert_eq!(replay.status.code(), Some(1), "{replayed}{errors}");
    assert!(
        replayed.contains("Invariant NothingStored is violated"),
        "{replayed}"
    );

    // An unknown name is bad input that lists the names there are.
    let (code, stdout, stderr) = check_with(&core, &["INVARIANTS=NothingStord"], dir.path());
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "no property `NothingStord`; its properties are AtMostOneReply, ReplyToInvoked, \
             AckedIsDurable, StoredOnlyIssued, StoredGrows, StoredAndReplied, NothingStored"
        ),
        "{stderr}"
    );
}
