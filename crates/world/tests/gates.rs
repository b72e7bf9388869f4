//! The gates: purity, determinism, and robust loading of bad cores.

mod common;

use std::path::Path;
use std::sync::Arc;

use cmc_search::Checker;
use cmc_world::core::purity::{self, Offence};
use cmc_world::{CCore, FaultKind, World, WorldSpec};

fn load_error(path: &Path) -> String {
    match CCore::load(path) {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn purity_names_the_offending_symbol() {
    let report = purity::check(&common::fixture("calls_time.o")).unwrap();
    assert_eq!(report.offences, vec![Offence::Undefined("time".into())]);
    assert!(report
        .to_string()
        .contains("time: undefined symbol outside the allowlist"));
    let report = purity::check(&common::fixture("nondet_static.o")).unwrap();
    assert!(
        matches!(&report.offences[..], [Offence::WritableGlobal(name)] if name.starts_with("calls")),
        "{report}"
    );
    let report = purity::check(&common::fixture("reqack.o")).unwrap();
    assert!(report.is_pure(), "{report}");
    assert!(purity::check(Path::new("/nonexistent.o"))
        .unwrap_err()
        .contains("cannot read"));
    assert!(purity::check(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/Cargo.toml"
    )))
    .unwrap_err()
    .contains("not an object file"));
}

#[test]
fn bad_libraries_get_clear_errors() {
    assert!(load_error(&common::fixture("libno_entry.so"))
        .contains("is not a cmc core: it does not export `cmc_core_entry`"));
    assert!(load_error(&common::fixture("libwrong_abi.so"))
        .contains("built for cmc core ABI version 99"));
    assert!(load_error(&common::fixture("libhuge_state.so"))
        .contains("declares a state of 1073741828 bytes"));
    assert!(load_error(&common::fixture("libno_step.so")).contains("no step function"));
    let missing = std::env::temp_dir().join("cmc-no-such-dir/libmissing.so");
    assert!(load_error(&missing).contains("does not exist"));
    let not_a_library = std::env::temp_dir().join("cmc-world-not-a-library.so");
    std::fs::write(&not_a_library, "hello").unwrap();
    let error = CCore::load(&not_a_library)
        .err()
        .expect("a text file is no library");
    assert!(
        error.to_string().contains("cannot load core library"),
        "{error}"
    );
}

fn run_fault(name: &str, check_determinism: bool) -> cmc_world::Fault {
    let core = Arc::new(CCore::load(&common::fixture(name)).unwrap());
    let mut spec = WorldSpec::new(core, 2).unwrap();
    spec.set_all(&["requests=2", "clients=0,1"]).unwrap();
    spec.check_determinism = check_determinism;
    let world = World::new(spec);
    let checker = Checker::new(world).workers(1);
    let _ = checker.run();
    checker.model().fault().expect("the run records a fault")
}

#[test]
fn a_core_error_code_is_a_fault_with_its_step() {
    let fault = run_fault("liberror_code.so", false);
    assert_eq!(
        fault.kind,
        FaultKind::CoreError("the step returned error code 7".into())
    );
    assert_eq!(fault.action, "CLIENT r0 -> n0");
    assert!(
        fault.event.contains("n0 CLIENT id=0 (core `misbehave`)"),
        "{fault}"
    );
    assert!(!fault.pre_state.is_empty());
}

#[test]
fn non_determinism_is_reported_as_such() {
    for name in ["libnondet_static.so", "libnondet_uninit.so"] {
        let fault = run_fault(name, true);
        assert!(
            matches!(fault.kind, FaultKind::NonDeterminism(_)),
            "{name}: {fault}"
        );
        let text = fault.to_string();
        assert!(
            text.starts_with("NON-DETERMINISM: the same step run twice"),
            "{text}"
        );
        assert!(text.contains("output 0 differs"), "{text}");
        assert!(text.contains("action: CLIENT r0 -> n0"), "{text}");
    }
    // Without the gate the static counter goes unnoticed: no fault at all.
    let core = Arc::new(CCore::load(&common::fixture("libnondet_static.so")).unwrap());
    let world = World::new(WorldSpec::new(core, 1).unwrap());
    let checker = Checker::new(world).workers(1);
    let _ = checker.run();
    assert!(checker.model().fault().is_none());
}
