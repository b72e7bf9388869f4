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
use cmc_world::supervise::{explainer_options, path_to_fault, supervise, Ended, Supervision};
use cmc_world::system::action::Action;
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
    let options = explainer_options(&cmc_search::SearchOptions::default(), None, None);
    let replay = path_to_fault(&world, &fault, &options).unwrap();
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
    let Ended::Message(Message::Fault { fault, action, .. }) = run_child("liberror_code.so") else {
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

/// Fails on the twelfth client request a node serves: a fault that only
/// deep paths reach (a third of the 36 requests to one of three nodes).
struct TwelfthFails;

impl cmc_world::TypedCore for TwelfthFails {
    type Durable = u32;
    type Volatile = u32;
    fn name(&self) -> &str {
        "twelfth-fails"
    }
    fn step(
        &self,
        _: &cmc_world::core::abi::Config,
        _: &u32,
        served: &mut u32,
        event: &cmc_world::core::abi::Event,
        out: &mut cmc_world::core::abi::Outputs,
    ) -> Result<(), cmc_world::core::abi::CoreError> {
        if event.kind() != Some(cmc_world::core::abi::EventKind::Client) {
            return Ok(());
        }
        *served += 1;
        if *served == 12 {
            return Err(cmc_world::core::abi::CoreError::Code(7));
        }
        out.reply(event.id, &[])
    }
}

/// Three nodes each served by every client, 36 requests: breadth-first
/// search to the twelfth request of one node goes through millions of
/// states; random walks of 40 steps reach it at once.
fn deep_fault_world() -> cmc_world::World {
    let spec = cmc_world::WorldSpec::builder(std::sync::Arc::new(TwelfthFails), 3)
        .requests(36)
        .clients(&[0, 1, 2])
        .build()
        .unwrap();
    cmc_world::World::new(spec)
}

/// The fault a search with `options` meets in [`deep_fault_world`].
fn deep_fault(options: &cmc_search::SearchOptions) -> Fault {
    let checker = Checker::new(deep_fault_world()).options(options.clone());
    checker.run();
    checker.model().fault().expect("the twelfth request fails")
}

/// A fault met by random walks is explained by the walks themselves, run
/// again from their seed in their order: the path is the walk's, found in
/// the time of the walks, with no search of the whole space (which the
/// time limit given here would cut).
#[test]
fn a_fault_met_by_random_walks_is_explained_by_the_walk_that_met_it() {
    for swarm in [false, true] {
        let walks = cmc_search::SearchOptions {
            strategy: cmc_search::Strategy::Simulate(cmc_search::RandomWalks {
                walks: 500,
                walk_length: 40,
                seed: 1,
            }),
            swarm,
            workers: 1,
            ..cmc_search::SearchOptions::default()
        };
        let fault = deep_fault(&walks);
        let options = explainer_options(&walks, Some(Duration::from_secs(20)), None);
        let file = path_to_fault(&deep_fault_world(), &fault, &options).unwrap();
        let (_, last) = file.actions.last().unwrap();
        assert_eq!(last, &fault.action);
        assert!(file.actions.len() >= 12, "{}", file.to_text());
        assert!(file.actions.len() <= 41, "{}", file.to_text());
        // The path leads to the faulting step: replayed, it faults there.
        let world = deep_fault_world();
        let replayed = cmc_search::AnyModel::replay(&world, &file);
        assert!(world.fault().is_some(), "{:?}", replayed.map(|r| r.verdict));
    }
}

/// The explainer's search stops where the check's time limit ends, and
/// says so.
#[test]
fn the_search_for_a_faults_path_stops_at_the_time_limit_and_says_so() {
    let walks = cmc_search::SearchOptions {
        strategy: cmc_search::Strategy::Simulate(cmc_search::RandomWalks {
            walks: 500,
            walk_length: 40,
            seed: 1,
        }),
        workers: 1,
        ..cmc_search::SearchOptions::default()
    };
    let fault = deep_fault(&walks);
    // Breadth-first, as after a breadth-first check, with no time left.
    let bfs = explainer_options(
        &cmc_search::SearchOptions::default(),
        Some(Duration::from_millis(200)),
        None,
    );
    let started = std::time::Instant::now();
    let problem = path_to_fault(&deep_fault_world(), &fault, &bfs).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        problem.contains("reached the check's --time-limit (0.2 s were left of it)"),
        "{problem}"
    );
}
