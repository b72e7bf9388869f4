//! Linearizability of the client history, on a tiny replicated register:
//! node 0 holds the value; node 1 forwards requests to it and relays the
//! answers. The planted bug answers reads at node 1 from a local copy that is
//! never refreshed: a stale read after a completed write.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
use cmc_linearizability::Consistency;
use cmc_model::{Encode, Model, PropertyKind};
use cmc_search::{Checker, Outcome, Verdict};
use cmc_world::core::abi::EventKind;
use cmc_world::properties::consistency::{self, ClientHistory, ReplyMeaning};
use cmc_world::system::state::WorldState;
use cmc_world::test_support::StepCore;
use cmc_world::{World, WorldSpec};

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct Value {
    value: u32,
}

/// Request `r` writes `r + 1` when `r` is even and reads when it is odd.
fn op_of(request: u32, _node: u8) -> RegisterOp {
    if request.is_multiple_of(2) {
        RegisterOp::Write(request as u64 + 1)
    } else {
        RegisterOp::Read
    }
}

fn ret_of(op: &RegisterOp, reply: &[u8]) -> ReplyMeaning<RegisterRet> {
    ReplyMeaning::Returned(match op {
        RegisterOp::Write(_) => RegisterRet::Ack,
        RegisterOp::Read => RegisterRet::Value(reply[0] as u64),
    })
}

/// The register: node 0 holds the value, node 1 forwards requests to it and
/// relays the answers (with `stale_reads`, answers reads from its own copy).
fn forwarding(stale_reads: bool) -> Arc<StepCore<Value>> {
    Arc::new(StepCore::new(
        "forwarding",
        move |config, v: &mut Value, ev, out| {
            let apply = |v: &mut Value, request: u32| {
                if let RegisterOp::Write(value) = op_of(request, 0) {
                    v.value = value as u32;
                }
                v.value as u8
            };
            match (ev.kind(), config.node) {
                (Some(EventKind::Client), 0) => out.reply(ev.id, &[apply(v, ev.id)]),
                (Some(EventKind::Client), _) if stale_reads && !ev.id.is_multiple_of(2) => {
                    out.reply(ev.id, &[v.value as u8])
                }
                (Some(EventKind::Client), _) => out.send(0, &[ev.id as u8]),
                (Some(EventKind::Recv), 0) => {
                    let request = ev.payload()[0];
                    let value = apply(v, request as u32);
                    out.send(ev.src, &[request, value])
                }
                (Some(EventKind::Recv), _) => out.reply(ev.payload()[0] as u32, &[ev.payload()[1]]),
                _ => Ok(()),
            }
        },
    ))
}

/// The history's explanation of why the last state of `outcome`'s
/// counterexample breaks `consistency` (`None` without a counterexample).
fn explanation(
    outcome: &Outcome<World>,
    history: &ClientHistory<Register>,
    consistency: Consistency,
) -> Option<String> {
    outcome
        .counterexample
        .as_ref()
        .and_then(|trace| trace.last_state())
        .and_then(|state| history.explain(state, consistency))
}

fn check(stale_reads: bool, consistency: Consistency) -> (Verdict, Option<String>) {
    let mut spec = WorldSpec::new(forwarding(stale_reads), 2).unwrap();
    spec.set_all(&["requests=3", "clients=0,1"]).unwrap();
    let history = ClientHistory::new(Register, op_of, ret_of);
    let property = match consistency {
        Consistency::Linearizable => consistency::linearizable(history.clone()),
        Consistency::Sequential => consistency::sequentially_consistent(history.clone()),
    };
    let checker = Checker::new(World::new(spec).with_property(property)).workers(1);
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    let explanation = explanation(&outcome, &history, consistency);
    (outcome.verdict, explanation)
}

#[test]
fn forwarding_register_is_linearizable() {
    let (verdict, _) = check(false, Consistency::Linearizable);
    assert_eq!(verdict, Verdict::Pass);
}

#[test]
fn stale_read_is_caught_with_its_explanation() {
    let (verdict, explanation) = check(true, Consistency::Linearizable);
    assert!(
        matches!(&verdict, Verdict::Violated { property, .. } if property == "Linearizable"),
        "{verdict:?}"
    );
    let explanation = explanation.expect("the last state fails");
    assert!(explanation.contains("Write(1) -> Ack"), "{explanation}");
    assert!(explanation.contains("Read -> Value(0)"), "{explanation}");
}

#[test]
fn stale_read_is_sequentially_consistent() {
    // Reads of 0 can always be ordered first when real time does not count.
    let (verdict, _) = check(true, Consistency::Sequential);
    assert_eq!(verdict, Verdict::Pass);
}

/// The forwarding register World with `params`, `Linearizable` on the
/// summary of the history (`summarised`) or on the whole history.
fn register_world(stale_reads: bool, params: &[&str], summarised: bool) -> World {
    let mut spec = WorldSpec::new(forwarding(stale_reads), 2).unwrap();
    spec.set_all(params).unwrap();
    let history = ClientHistory::new(Register, op_of, ret_of);
    if summarised {
        consistency::linearizable_summarised(World::new(spec), history)
    } else {
        World::new(spec).with_property(consistency::linearizable(history))
    }
}

#[test]
fn the_summary_gives_the_same_verdicts_shortest_traces_and_explanation() {
    let params = ["requests=3", "clients=0,1", "local_fails=1"];
    let history = ClientHistory::new(Register, op_of, ret_of);
    for stale_reads in [false, true] {
        let run = |summarised| {
            let checker = Checker::new(register_world(stale_reads, &params, summarised)).workers(1);
            let outcome = checker.run();
            assert!(checker.model().fault().is_none());
            // The counterexample is rebuilt by replay: its states hold the
            // history in order, so the explanation is the whole history's.
            let explanation = explanation(&outcome, &history, Consistency::Linearizable);
            let length = outcome.counterexample.as_ref().map(|trace| trace.len());
            (
                outcome.verdict,
                length,
                explanation,
                outcome.stats.distinct_states,
            )
        };
        let (full, summary) = (run(false), run(true));
        assert_eq!(full.0, summary.0, "stale_reads={stale_reads}");
        assert_eq!(
            full.1, summary.1,
            "stale_reads={stale_reads}: shortest lengths"
        );
        assert_eq!(full.2, summary.2, "stale_reads={stale_reads}: explanations");
        assert!(summary.3 <= full.3);
        if !stale_reads {
            assert_eq!(full.0, Verdict::Pass);
            assert!(
                summary.3 < full.3,
                "orders merged: {} of {}",
                summary.3,
                full.3
            );
        } else {
            assert!(full.2.is_some(), "a violation with its explanation");
        }
    }
}

/// The summarised encoding keeps each request's entries but not the order
/// between requests: a state decoded from it must enable the same actions
/// and lead to the same successors (by encoding) and verdicts as the state
/// itself, whose history is in order. Random walks with retries, local
/// failures (also after a reply) and crashes, where the environment reads
/// the history most.
#[test]
fn a_state_decoded_from_its_summary_behaves_as_the_state() {
    let params = [
        "requests=3",
        "clients=0,1",
        "local_fails=2",
        "local_fail_after_reply=1",
        "retries=2",
        "crashes=1",
        "restarts=1",
    ];
    let world = register_world(false, &params, true);
    let properties = world.properties();
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut random = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut reordered = 0;
    for _ in 0..300 {
        let mut init = Vec::new();
        world.init_states(&mut init);
        let mut state = init.pop().unwrap();
        for _ in 0..14 {
            let decoded = WorldState::decode_exact(&state.to_bytes()).unwrap();
            reordered +=
                usize::from(world.inspect(&decoded).ghost() != world.inspect(&state).ghost());
            let (mut mine, mut theirs) = (Vec::new(), Vec::new());
            world.actions(&state, &mut mine);
            world.actions(&decoded, &mut theirs);
            let text = |actions: &[_]| -> Vec<String> {
                actions.iter().map(|a| world.format_action(a)).collect()
            };
            assert_eq!(text(&mine), text(&theirs), "actions of {state:?}");
            for property in &properties {
                if let PropertyKind::Always(holds) = &property.kind {
                    assert_eq!(
                        holds(&world, &state),
                        holds(&world, &decoded),
                        "{}",
                        property.name
                    );
                }
            }
            let successors: Vec<(usize, WorldState)> = mine
                .iter()
                .enumerate()
                .filter_map(|(at, action)| Some((at, world.next_state(&state, action)?)))
                .collect();
            for (at, next) in &successors {
                let other = world
                    .next_state(&decoded, &theirs[*at])
                    .expect("enabled too");
                assert_eq!(
                    next.to_bytes(),
                    other.to_bytes(),
                    "{}",
                    world.format_action(&mine[*at])
                );
            }
            if successors.is_empty() {
                break;
            }
            state = successors[random(successors.len())].1.clone();
        }
    }
    assert!(
        reordered > 100,
        "only {reordered} states held their history out of order"
    );
}
