//! In `cargo test`, a faulting core fails the test: a core fault (an error
//! code, a memory violation) or a panic is a failing verdict that names the
//! step, the event and the state, never a pass.

use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::EventKind;
use cmc_world::test_support::StepCore;
use cmc_world::{CCore, World, WorldSpec};

mod common;

fn c_core_world(name: &str) -> World {
    let core = Arc::new(CCore::load(&common::fixture(name)).unwrap());
    let mut spec = WorldSpec::new(core, 2).unwrap();
    spec.set_all(&["requests=1", "clients=0"]).unwrap();
    World::new(spec)
}

fn error_message(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Error { message } => message,
        other => panic!("expected a failing verdict, got {other:?}"),
    }
}

#[test]
fn a_core_error_code_is_a_failing_verdict_with_step_event_and_state() {
    let outcome = Checker::new(c_core_world("liberror_code.so")).run();
    let message = error_message(&outcome.verdict);
    assert!(
        message.contains("CORE ERROR: the step returned error code 7"),
        "{message}"
    );
    assert!(message.contains("action: CLIENT r0 -> n0"), "{message}");
    assert!(message.contains("event:  n0 CLIENT id=0"), "{message}");
    assert!(message.contains("pre-state:\n    n0 = "), "{message}");
    assert!(!outcome.stats.complete);
}

#[test]
#[should_panic(expected = "CORE ERROR: the step returned error code 7")]
fn assert_properties_panics_on_a_core_fault() {
    let _ = Checker::new(c_core_world("liberror_code.so")).assert_properties();
}

/// A Rust core that panics on client requests.
fn panicky() -> StepCore<u32> {
    StepCore::new("panicky", |_, _, event, _| {
        if event.kind() == Some(EventKind::Client) {
            panic!("request {} is not handled", event.id);
        }
        Ok(())
    })
}

/// A Rust core's panic is a core fault at its step, like a C core's error:
/// the action, the event and the pre-state, so the path there can be
/// written as a replay file.
#[test]
fn a_panicking_core_is_a_core_fault_with_its_action_event_and_state() {
    let mut spec = WorldSpec::new(Arc::new(panicky()), 2).unwrap();
    spec.set_all(&["requests=1"]).unwrap();
    let outcome = Checker::new(World::new(spec)).workers(2).run();
    let message = error_message(&outcome.verdict);
    assert!(
        message.contains("CORE ERROR: the core panicked: request 0 is not handled"),
        "{message}"
    );
    assert!(message.contains("action: CLIENT r0 -> n0"), "{message}");
    assert!(message.contains("event:  n0 CLIENT id=0"), "{message}");
    assert!(message.contains("pre-state:\n    n0 = "), "{message}");
}
