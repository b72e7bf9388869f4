//! Crash and hang containment: a core that dies or loops inside a step does
//! not take the verdict with it; the supervisor names the step and writes a
//! replay file of the path to it.
//!
//! The supervised child is this test binary itself, running `child_entry`.

mod common;

use std::process::Command;
use std::time::Duration;

use cmc_model::{Encode, Model};
use cmc_search::{Checker, ReplayFile};
use cmc_world::run::child::{child_from_env, finish, Message};
use cmc_world::run::recorder::Call;
use cmc_world::supervise::{path_to_fault, supervise, Ended, Supervision};
use cmc_world::world::action::Action;
use cmc_world::{build_world, Fault, FaultKind, WorldArgs};

const CHILD_CORE: &str = "CMC_TEST_CHILD_CORE";

const SUPERVISION: Supervision = Supervision {
    call_timeout: Duration::from_millis(500),
    threads: 2,
    interrupt: None,
};

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
    child_from_env().unwrap().expect("run under supervise");
    let world = build_world(&args(&core)).unwrap();
    let outcome = Checker::new(world).workers(2).run();
    finish(
        0,
        format!("child verdict: {:?}", outcome.verdict).as_bytes(),
    )
}

/// Runs the child on `core` and returns how it ended.
fn run_child(core: &str) -> Ended {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["child_entry", "--exact", "--nocapture"])
        .env(CHILD_CORE, core);
    supervise(child, "check", &SUPERVISION, &[]).unwrap()
}

/// The fault of a child that died in a step, named in-process, and its replay file.
fn supervised(core: &str) -> (Fault, ReplayFile) {
    let Ended::Died { kind, slot } = run_child(core) else {
        panic!("{core}: the child reported")
    };
    let slot = slot.expect("it died inside a core call");
    assert_eq!(slot.call, Some(Call::Step));
    let world = build_world(&args(core)).unwrap();
    let fault = Fault {
        kind,
        action: world.format_action(
            &Action::decode_exact(&slot.action).expect("a step's action, not the initial starts"),
        ),
        event: String::new(),
        pre_state: slot.pre_state,
    };
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
            .starts_with("CORE CRASHED: the core died with signal 11 (SIGSEGV) inside a step"),
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
            .starts_with("CORE HUNG: the core did not return within 500 ms inside a step"),
        "{fault}"
    );
    assert_eq!(replay.actions.last().unwrap().1, "CLIENT r0 -> n1");
}

#[test]
fn a_recorded_fault_comes_back_with_its_event() {
    let Ended::Message(Message::Fault { fault, action }) = run_child("liberror_code.so") else {
        panic!("the child sent no fault")
    };
    assert_eq!(
        fault.kind,
        FaultKind::CoreError("the step returned error code 7".into())
    );
    assert!(fault.event.contains("n1 CLIENT id=0"), "{fault}");
    assert!(!action.is_empty());
}

#[test]
fn a_child_that_reports_is_believed_and_one_that_does_not_is_not() {
    let Ended::Message(Message::Report { code, stdout }) = run_child("libreqack.so") else {
        panic!("a sound core's run reports")
    };
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8(stdout).unwrap(), "child verdict: Pass");
    // A child that exits 0 without its report is a fault, not a pass.
    let mut child = Command::new("true");
    child.arg("ignored");
    let ended = supervise(child, "check", &SUPERVISION, &[]).unwrap();
    assert!(
        matches!(
            ended,
            Ended::Died {
                kind: FaultKind::Exited(0),
                slot: None
            }
        ),
        "{ended:?}"
    );
}
