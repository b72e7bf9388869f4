//! Every fixed capacity of the World is explored faithfully or stops the run
//! with a capacity fault naming it, the node and the step: nothing a core
//! emits is lost without a budget.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Model;
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::test_support::StepCore;
use cmc_world::{Fault, FaultKind, World, WorldSpec};

/// Two counters, used as both the durable and the volatile part.
#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Counters {
    a: u32,
    b: u32,
}

/// The step of a test core (its durable part stays zero).
type Behaviour = fn(&Config, &mut Counters, &Event, &mut Outputs) -> Result<(), CoreError>;

/// The core whose step is `behaviour`.
fn scripted(behaviour: Behaviour) -> Arc<StepCore<Counters>> {
    Arc::new(StepCore::new("scripted", behaviour))
}

fn checker(behaviour: Behaviour, nodes: usize, params: &[&str]) -> Checker<World> {
    let mut spec = WorldSpec::new(scripted(behaviour), nodes).unwrap();
    spec.set_all(params).unwrap();
    Checker::new(World::new(spec)).workers(1)
}

/// The run's fault, which must be a capacity fault mentioning `capacity`.
fn capacity_fault(checker: &Checker<World>, capacity: &str) -> Fault {
    let fault = checker.model().fault().expect("the run stops at a fault");
    match &fault.kind {
        FaultKind::Capacity(why) => assert!(why.contains(capacity), "{why}"),
        other => panic!("expected a capacity fault naming {capacity}, got {other:?}"),
    }
    assert!(
        fault.to_string().starts_with("CAPACITY REACHED: "),
        "{fault}"
    );
    fault
}

/// Node 0 sends the same message three times at START; node 1 answers its
/// client once it has received all three. With `bug`, the third receipt
/// also answers a request nobody made.
fn thrice(
    config: &Config,
    v: &mut Counters,
    event: &Event,
    out: &mut Outputs,
    bug: bool,
) -> Result<(), CoreError> {
    match (config.node, event.kind()) {
        (0, Some(EventKind::Start)) => {
            for _ in 0..3 {
                out.send(1, b"m")?;
            }
        }
        (1, Some(EventKind::Client)) => v.a = event.id + 1,
        (1, Some(EventKind::Recv)) => {
            v.b = (v.b + 1).min(4);
            if bug && v.b == 3 {
                out.reply(7, &[0])?;
            }
        }
        _ => {}
    }
    if config.node == 1 && v.b >= 3 && v.a != 0 {
        out.reply(v.a - 1, &[1])?;
        v.a = 0;
    }
    Ok(())
}

/// Node 1 is the client node; net_bound=2 counts two copies, and the third
/// send makes a surplus ("more than two").
const THRICE: &[&str] = &["requests=1", "clients=1", "net_bound=2"];

#[test]
fn copies_beyond_net_bound_still_arrive() {
    // Before: the third copy was lost at net_bound=2, so node 1 never
    // answered and this correct core ended in a (false) deadlock.
    let checker = checker(|c, v, e, o| thrice(c, v, e, o, false), 2, THRICE);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None);
    assert_eq!(outcome.verdict, Verdict::Pass);
}

fn action_texts(checker: &Checker<World>, outcome: &cmc_search::Outcome<World>) -> Vec<String> {
    let trace = outcome.counterexample.as_ref().expect("a counterexample");
    trace
        .steps
        .iter()
        .filter_map(|step| step.action.as_ref())
        .map(|action| checker.model().format_action(action))
        .collect()
}

#[test]
fn a_bug_behind_the_third_copy_is_found() {
    // Before: the third copy never arrived, so the bug was never reached.
    let checker = checker(|c, v, e, o| thrice(c, v, e, o, true), 2, THRICE);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None);
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "ReplyToInvoked"),
        "{:?}",
        outcome.verdict
    );
    let texts = action_texts(&checker, &outcome);
    let deliveries: Vec<&String> = texts
        .iter()
        .filter(|t| t.starts_with("DELIVER n0->n1"))
        .collect();
    assert_eq!(deliveries.len(), 3, "{texts:?}");
    assert!(
        deliveries.iter().any(|t| t.contains("surplus")),
        "{texts:?}"
    );
}

#[test]
fn an_approximated_copy_count_is_marked_in_the_trace() {
    // With net_bound=1, "more than one" copy does not say "three": the
    // World also explores the path where only two arrive (an
    // over-approximation, so no real path is missed). The deadlock it finds
    // there is marked by the step that assumed the count.
    let params = ["requests=1", "clients=1", "net_bound=1"];
    let checker = checker(|c, v, e, o| thrice(c, v, e, o, false), 2, &params);
    let outcome = checker.run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "deadlock"),
        "{:?}",
        outcome.verdict
    );
    let texts = action_texts(&checker, &outcome);
    assert!(
        texts.iter().any(|t| t.ends_with("(last surplus copy)")),
        "{texts:?}"
    );
}

/// Sends 15 new distinct messages to itself at START and at every timer.
fn flood(_: &Config, v: &mut Counters, event: &Event, out: &mut Outputs) -> Result<(), CoreError> {
    if matches!(event.kind(), Some(EventKind::Start | EventKind::Timer)) {
        for _ in 0..15 {
            out.send(0, &v.a.to_le_bytes())?;
            v.a += 1;
        }
        out.set_timer(0)?;
    }
    Ok(())
}

#[test]
fn too_many_messages_in_flight_is_a_capacity_fault() {
    // A duplicating network and a core that ignores what it receives keep
    // the state space a chain.
    let checker = checker(flood, 1, &["net=dup"]);
    let _ = checker.run();
    let fault = capacity_fault(&checker, "NET_MAX: 256 different messages");
    assert_eq!(fault.action, "FIRE n0 timer=0");
    assert!(fault.event.starts_with("n0 TIMER"), "{}", fault.event);
}

/// At a client request, node 0 sends A, B, A to node 1 (three runs).
fn alternate(
    config: &Config,
    _: &mut Counters,
    event: &Event,
    out: &mut Outputs,
) -> Result<(), CoreError> {
    if config.node == 0 && event.kind() == Some(EventKind::Client) {
        for message in [b"A", b"B", b"A"] {
            out.send(1, message)?;
        }
    }
    Ok(())
}

#[test]
fn a_full_fifo_link_is_a_capacity_fault() {
    // Before: the third message was dropped silently (two per link).
    let checker = checker(alternate, 2, &["net=fifo", "requests=1"]);
    let _ = checker.run();
    let fault = capacity_fault(&checker, "link_bound=2: the FIFO link n0->n1");
    assert_eq!(fault.action, "CLIENT r0 -> n0");
    assert!(fault.event.starts_with("n0 CLIENT"), "{}", fault.event);
    // Room for three runs: no fault, and every message is delivered.
    let roomy = self::checker(alternate, 2, &["net=fifo", "requests=1", "link_bound=3"]);
    let _ = roomy.run();
    assert_eq!(roomy.model().fault(), None);
}

/// Nine persists per client request.
fn hoard(_: &Config, _: &mut Counters, event: &Event, out: &mut Outputs) -> Result<(), CoreError> {
    if event.kind() == Some(EventKind::Client) {
        for _ in 0..9 {
            out.persist(0, &[1])?;
        }
        out.reply(event.id, &[1])?;
    }
    Ok(())
}

#[test]
fn too_many_unflushed_persists_is_a_capacity_fault() {
    let checker = checker(hoard, 1, &["requests=2"]);
    let _ = checker.run();
    let fault = capacity_fault(
        &checker,
        "PERSISTS_MAX: n0 already has 16 unflushed persists",
    );
    assert_eq!(fault.action, "CLIENT r1 -> n0");
}

/// Emits 17 outputs and a 65-byte payload, ignoring the helpers' errors.
fn sloppy(_: &Config, _: &mut Counters, event: &Event, out: &mut Outputs) -> Result<(), CoreError> {
    if event.kind() == Some(EventKind::Client) {
        for _ in 0..17 {
            let _ = out.wake(1);
        }
        let _ = out.send(0, &[0; 65]);
    }
    Ok(())
}

#[test]
fn outputs_refused_by_the_helpers_are_a_capacity_fault() {
    // Before: the 17th output and the long payload vanished without a word.
    let checker = checker(sloppy, 1, &["requests=1"]);
    let _ = checker.run();
    let fault = capacity_fault(
        &checker,
        "OUTPUTS_MAX/PAYLOAD_MAX: the step tried to emit 2 output(s)",
    );
    assert_eq!(fault.action, "CLIENT r0 -> n0");
}

/// Replies to request 0 sixteen times at every timer (a buggy core).
fn chatter(
    _: &Config,
    _: &mut Counters,
    event: &Event,
    out: &mut Outputs,
) -> Result<(), CoreError> {
    match event.kind() {
        Some(EventKind::Start) => out.set_timer(0)?,
        Some(EventKind::Timer) => {
            for _ in 0..15 {
                out.reply(0, &[1])?;
            }
            out.set_timer(0)?;
        }
        _ => {}
    }
    Ok(())
}

#[test]
fn a_full_ghost_history_is_a_capacity_fault() {
    // The search stops at the first duplicate reply, but a fair run (here
    // towards a goal never reached) keeps stepping the core.
    let mut spec = WorldSpec::new(scripted(chatter), 1).unwrap();
    spec.set_all(&["requests=1"]).unwrap();
    let world = World::new(spec).with_quiescence(1000, "never", |_, _| false);
    let mut init = Vec::new();
    world.init_states(&mut init);
    let run = world.fair_run(&init[0]).expect("no fault budgets");
    assert!(!run.reached);
    let fault = world.fault().expect("the fair run stops at a fault");
    assert!(
        matches!(&fault.kind, FaultKind::Capacity(why) if why.contains("GHOST_MAX: the ghost history already holds 128")),
        "{fault}"
    );
    assert_eq!(fault.action, "FIRE n0 timer=0");
}
