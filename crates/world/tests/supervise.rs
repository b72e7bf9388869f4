//! Crash and hang containment: a core that dies or loops inside a step does
//! not take the verdict with it; the supervisor names the step and writes a
//! replay file of the path to it.
//!
//! The supervised child is this test binary itself, running `child_entry`.

mod common;

use std::process::Command;
use std::time::Duration;

use cmc_search::{Checker, ReplayFile};
use cmc_world::recorder::Recorder;
use cmc_world::supervise::{path_to_fault, supervise, Supervised};
use cmc_world::{build_world, FaultKind, WorldArgs};

const CHILD_CORE: &str = "CMC_TEST_CHILD_CORE";

fn args(core: &str) -> WorldArgs {
    WorldArgs {
        cores: vec![common::fixture(core).display().to_string()],
        nodes: 2,
        params: vec!["requests=1".into(), "clients=1".into()],
        check_determinism: false,
    }
}

/// The child: checks the World for the core named in the environment.
#[test]
fn child_entry() {
    let Ok(core) = std::env::var(CHILD_CORE) else {
        return;
    };
    let recorder = Recorder::from_env().expect("run under supervise").unwrap();
    let world = build_world(&args(&core)).unwrap().with_recorder(recorder);
    let outcome = Checker::new(world).workers(2).run();
    println!("child verdict: {:?}", outcome.verdict);
}

fn supervised(core: &str) -> (cmc_world::Fault, ReplayFile) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["child_entry", "--exact", "--nocapture"])
        .env(CHILD_CORE, core);
    let recorder = std::env::temp_dir().join(format!("cmc-world-test-{core}.rec"));
    let outcome = supervise(child, &recorder, Duration::from_millis(500)).unwrap();
    let Supervised::Fault(recorded) = outcome else {
        panic!("{core}: the child finished: {outcome:?}")
    };
    let world = build_world(&args(core)).unwrap();
    let fault = recorded.into_fault(&world);
    let replay = path_to_fault(&world, &fault).unwrap();
    (fault, replay)
}

#[test]
fn a_segfaulting_core_is_contained_and_replayable() {
    let (fault, replay) = supervised("libsegv.so");
    assert_eq!(fault.kind, FaultKind::Signal(libc::SIGSEGV));
    assert_eq!(fault.action, "CLIENT r0 -> n1");
    assert!(
        fault
            .to_string()
            .starts_with("CORE CRASHED: the core died with signal 11 (SIGSEGV)"),
        "{fault}"
    );
    let text = replay.to_text();
    assert!(text.contains("action CLIENT r0 -> n1\nend"), "{text}");
    assert!(text.contains("param core="), "{text}");
    assert_eq!(ReplayFile::parse(&text).unwrap().actions.len(), 1);
}

#[test]
fn a_hanging_core_is_killed_and_named() {
    let (fault, replay) = supervised("libhang.so");
    assert_eq!(fault.kind, FaultKind::Hang(500));
    assert_eq!(fault.action, "CLIENT r0 -> n1");
    assert!(
        fault
            .to_string()
            .starts_with("CORE HUNG: a step did not return within 500 ms"),
        "{fault}"
    );
    assert_eq!(replay.actions.last().unwrap().1, "CLIENT r0 -> n1");
}

#[test]
fn a_recorded_fault_comes_back_with_its_event() {
    let (fault, _) = supervised("liberror_code.so");
    assert_eq!(
        fault.kind,
        FaultKind::CoreError("the step returned error code 7".into())
    );
    assert!(fault.event.contains("n1 CLIENT id=0"), "{fault}");
}
