//! Partial-order reduction of the World (`--reduction`): what it explores,
//! what it keeps, and when it refuses.
//!
//! Two small protocols whose cores declare whom they send to
//! (`Core::may_send`): `pairs`, nodes 2k and 2k+1 ping-ponging on their own,
//! where the pairs' steps commute and the reduced search explores far fewer
//! states; and `race`, where a coordinator's two answers race and one
//! order is a bug that only a reduction sound about messages not yet sent
//! still finds.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Property;
use cmc_search::{Checker, Outcome, ReductionStats, Verdict};
use cmc_world::core::abi::{EventKind, Outputs};
use cmc_world::system::state::{GhostKind, WorldState};
use cmc_world::test_support::StepCore;
use cmc_world::{TypedCore, World, WorldSpec};

const PING: u8 = 1;
const PONG: u8 = 2;
/// Rounds of ping-pong before node 0 may answer its client.
const ROUNDS: u32 = 2;
const TIMER: u32 = 0;

#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Volatile {
    /// `pairs`: pongs received in order (even nodes). `race`: 1 when node 2
    /// answered first.
    count: u32,
    /// Client request id + 1 waiting for an answer; 0 for none.
    request: u32,
    /// Replies sent.
    replied: u32,
    /// `race`: answers received, a bit per answering node.
    answers: u32,
}

/// After the first `blinkers` nodes, nodes b+2k and b+2k+1 ping-pong
/// `ROUNDS` times, the first retransmitting on a timer, and answer their
/// client once their rounds are done. Bug 1: they answer again on every
/// late PONG (a retransmitted PING's). The first `blinkers` nodes flip a
/// bit on a timer, forever, and send nothing.
fn pairs(bug: u32, blinkers: u32) -> StepCore<Volatile> {
    let partner = move |node: u32| blinkers + ((node - blinkers) ^ 1);
    // Answers the waiting client request once the rounds are done: once,
    // or with bug 1 on every call.
    let answer = move |v: &mut Volatile, out: &mut Outputs| {
        let due = v.count == ROUNDS && v.request > 0;
        if due && (v.replied == 0 || bug == 1) {
            out.reply(v.request - 1, &[1])?;
            v.replied += 1;
        }
        Ok(())
    };
    StepCore::new("pairs", move |config, v: &mut Volatile, event, out| {
        if config.node < blinkers {
            if matches!(event.kind(), Some(EventKind::Timer)) {
                v.count ^= 1;
            }
            if matches!(event.kind(), Some(EventKind::Start | EventKind::Timer)) {
                out.set_timer(TIMER)?;
            }
            return Ok(());
        }
        let partner = partner(config.node);
        let done = |v: &Volatile| v.count == ROUNDS;
        match (event.kind(), event.payload()) {
            (Some(EventKind::Start), _) if (config.node - blinkers).is_multiple_of(2) => {
                out.send(partner, &[PING, 0])?;
                out.set_timer(TIMER)?;
            }
            (Some(EventKind::Timer), _) if !done(v) => {
                out.send(partner, &[PING, v.count as u8])?;
                out.set_timer(TIMER)?;
            }
            (Some(EventKind::Recv), &[PING, round]) => out.send(event.src, &[PONG, round])?,
            (Some(EventKind::Recv), &[PONG, round]) => {
                if u32::from(round) == v.count && !done(v) {
                    v.count += 1;
                    if done(v) {
                        out.cancel_timer(TIMER)?;
                    } else {
                        out.send(partner, &[PING, v.count as u8])?;
                    }
                }
                answer(v, out)?;
            }
            (Some(EventKind::Client), _) => {
                v.request = event.id + 1;
                answer(v, out)?;
            }
            _ => {}
        }
        Ok(())
    })
    .sending_only(move |config, dst| config.node >= blinkers && dst == partner(config.node))
}

/// Node 0, asked by its client, asks nodes 1 and 2; node 1 answers at
/// once, node 2 after a timer; node 0 replies once both answered. Bug 1:
/// when node 2's answer came first, node 0 replies twice.
fn race(bug: u32) -> StepCore<Volatile> {
    StepCore::new("race", move |config, v: &mut Volatile, event, out| {
        match (config.node, event.kind()) {
            (0, Some(EventKind::Client)) => {
                v.request = event.id + 1;
                out.send(1, &[PING])?;
                out.send(2, &[PING])?;
            }
            (0, Some(EventKind::Recv)) => {
                if v.answers == 0 && event.src == 2 {
                    v.count = 1; // node 2 answered first
                }
                v.answers |= 1 << event.src;
                if v.answers == 0b110 {
                    out.reply(v.request - 1, &[1])?;
                    if bug == 1 && v.count == 1 {
                        out.reply(v.request - 1, &[1])?;
                    }
                }
            }
            (1, Some(EventKind::Recv)) => out.send(0, &[PONG])?,
            (2, Some(EventKind::Recv)) => out.set_timer(TIMER)?,
            (2, Some(EventKind::Timer)) => out.send(0, &[PONG])?,
            _ => {}
        }
        Ok(())
    })
    .sending_only(|config, dst| match config.node {
        0 => dst == 1 || dst == 2,
        _ => dst == 0,
    })
}

fn world(core: impl TypedCore + 'static, nodes: usize) -> World {
    let spec = WorldSpec::builder(Arc::new(core), nodes).requests(1);
    World::new(spec.build().expect("a valid spec"))
}

fn check(world: World, reduction: bool) -> Outcome<World> {
    check_with_workers(world, reduction, 1)
}

fn check_with_workers(world: World, reduction: bool, workers: usize) -> Outcome<World> {
    Checker::new(world)
        .workers(workers)
        .check_determinism(true)
        .reduction(reduction)
        .run()
}

/// Asserts that the search of `outcome`, with `reduction` on or off, found
/// `property` violated.
fn assert_violated(outcome: &Outcome<World>, property: &str, reduction: bool) {
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property: found, .. } if found == property),
        "reduction {reduction}: {:?}",
        outcome.verdict
    );
}

/// With and without reduction: the World of the correct core (`world(0)`)
/// passes, and the double reply of bug 1 (`world(1)`) is found. Returns
/// the correct World's outcome with reduction.
fn the_correct_core_passes_and_bug_1_is_found(world: impl Fn(u32) -> World) -> Outcome<World> {
    let [_, reduced] = [false, true].map(|reduction| {
        let correct = check(world(0), reduction);
        assert_eq!(correct.verdict, Verdict::Pass, "reduction {reduction}");
        assert_violated(&check(world(1), reduction), "AtMostOneReply", reduction);
        correct
    });
    reduced
}

fn reduced_states(outcome: &Outcome<World>) -> u64 {
    match &outcome.stats.reduction {
        Some(ReductionStats::On { reduced, .. }) => *reduced,
        other => panic!("the reduction was not on: {other:?}"),
    }
}

/// Independent pairs: the same verdict, far fewer states, and the report
/// counts the states expanded through a persistent set.
#[test]
fn independent_pairs_pass_with_fewer_states() {
    let full = check(world(pairs(0, 0), 4), false);
    let reduced = check(world(pairs(0, 0), 4), true);
    assert_eq!(full.verdict, Verdict::Pass, "{:?}", full.verdict);
    assert_eq!(reduced.verdict, Verdict::Pass, "{:?}", reduced.verdict);
    assert!(full.stats.complete && reduced.stats.complete);
    assert_eq!(full.stats.reduction, None);
    assert!(reduced_states(&reduced) > 0);
    let (all, some) = (full.stats.distinct_states, reduced.stats.distinct_states);
    eprintln!(
        "pairs, 4 nodes: {all} states in {:?} without reduction, {some} in {:?} with: {:?}",
        full.stats.wall, reduced.stats.wall, reduced.stats.reduction
    );
    // Measured: 51842 states without, 26114 with (one worker).
    assert!(some * 3 < all * 2, "{some} states reduced, {all} without");
}

/// The double reply of bug 1 is found with and without reduction, by one
/// worker or two (whose reduced counts may differ, their verdict not).
#[test]
fn the_pairs_double_reply_is_found_with_reduction() {
    for (reduction, workers) in [(false, 1), (true, 1), (true, 2)] {
        let outcome = check_with_workers(world(pairs(1, 0), 4), reduction, workers);
        assert_violated(&outcome, "AtMostOneReply", reduction);
    }
}

/// Node 0 blinks forever, a step whose persistent set is the smallest;
/// its second blink returns to a state stored before. Were the proviso not
/// to expand that state fully, the pair of nodes 1 and 2 would never step
/// and its double reply would go unseen.
#[test]
fn a_step_back_to_a_stored_state_does_not_hide_the_others_forever() {
    let blinking = |bug| {
        let spec = WorldSpec::builder(Arc::new(pairs(bug, 1)), 3)
            .requests(1)
            .param("clients", 1);
        World::new(spec.build().expect("a valid spec"))
    };
    let reduced = the_correct_core_passes_and_bug_1_is_found(blinking);
    assert!(reduced_states(&reduced) > 0);
}

/// Nodes 0 and 1 each answer their own client after a timer. Which answers
/// first is visible to a property of the history: a reply is never in a
/// persistent set, so both orders are explored.
#[test]
fn replies_are_visible_and_both_orders_are_explored() {
    let responder = StepCore::new(
        "responder",
        |_, request: &mut u32, event, out| match event.kind() {
            Some(EventKind::Client) => {
                *request = event.id;
                out.set_timer(TIMER)
            }
            Some(EventKind::Timer) => out.reply(*request, &[1]),
            _ => Ok(()),
        },
    )
    .never_sends();
    let responder = Arc::new(responder);
    let first_reply_to_request_0 = Property::always(
        "FirstReplyToRequest0",
        |world: &World, state: &WorldState| {
            let history = world.inspect(state).ghost();
            let mut replies = history.iter().filter(|e| e.kind == GhostKind::Reply);
            replies.next().is_none_or(|first| first.request == 0)
        },
    );
    for reduction in [false, true] {
        let mut spec = WorldSpec::new(responder.clone(), 2).expect("a spec");
        spec.set_all(&["requests=2", "clients=0,1", "spread=1"])
            .expect("valid parameters");
        let world = World::new(spec).with_history_property(first_reply_to_request_0.clone());
        let outcome = check(world, reduction);
        assert_violated(&outcome, "FirstReplyToRequest0", reduction);
    }
}

/// Node 2's answer is sent only after node 2's timer fires, so when node 1's
/// answer is already waiting at node 0, node 2's is not yet sent. A
/// reduction that took node 0's delivery alone there (the two are steps of
/// different nodes) would never let node 2's answer arrive first, and miss
/// the bug; node 2 may send to node 0, so both are kept.
#[test]
fn an_answer_not_yet_sent_still_races_one_in_flight() {
    let reduced = the_correct_core_passes_and_bug_1_is_found(|bug| world(race(bug), 3));
    // On, though every state here has a node that may send to another
    // one's: nothing is left out.
    assert!(matches!(
        reduced.stats.reduction,
        Some(ReductionStats::On { .. })
    ));
}

/// A core that sends where its `may_send` says it never does is a fault:
/// the reduction's independence rests on the declaration.
#[test]
fn a_send_the_core_did_not_declare_is_a_fault() {
    let liar = StepCore::<u32>::new("liar", |_, _, event, out| {
        if event.kind() == Some(EventKind::Client) {
            out.send(1, &[PING])?;
        }
        Ok(())
    })
    .never_sends();
    let outcome = check(world(liar, 2), true);
    match &outcome.verdict {
        Verdict::Error { message } => assert!(
            message.contains("may_send does not allow n0 to send to n1"),
            "{message}"
        ),
        other => panic!("expected the fault, got {other:?}"),
    }
}

/// Reduction is refused, with the reason in the outcome, when a property may
/// read node state, with quiescence, and with link faults; every step is
/// then explored and the counts are those of a search without it.
#[test]
fn reduction_is_refused_with_its_reason_when_it_could_hide_a_violation() {
    let reads_nodes = || Property::always("ReadsNodes", |_: &World, _: &WorldState| true);
    let with_params = |params: &[&str]| {
        let mut spec = WorldSpec::new(Arc::new(pairs(0, 0)), 2).expect("a spec");
        spec.set_all(params).expect("valid parameters");
        World::new(spec)
    };
    let refused = |make: &dyn Fn() -> World, reason: &str| {
        let full = check(make(), false);
        let outcome = check(make(), true);
        match &outcome.stats.reduction {
            Some(ReductionStats::Off { why }) => assert!(why.contains(reason), "{why}"),
            other => panic!("expected a refusal naming {reason}, got {other:?}"),
        }
        assert_eq!(outcome.stats.distinct_states, full.stats.distinct_states);
        assert_eq!(outcome.verdict, full.verdict);
    };
    refused(
        &|| world(pairs(0, 0), 2).with_property(reads_nodes()),
        "ReadsNodes",
    );
    refused(
        &|| with_params(&["requests=1", "quiescence=20"]),
        "quiescence",
    );
    refused(
        &|| with_params(&["requests=1", "partitions=1"]),
        "link faults",
    );
    // The same property, declared as reading the history only, leaves it on.
    let on = check(
        world(pairs(0, 0), 4).with_history_property(reads_nodes()),
        true,
    );
    assert!(reduced_states(&on) > 0);
}

/// The bundled reqack core sends DATA from node 0 to every receiver and
/// ACKs back, declaring no `may_send`: with its history properties only
/// (the built-in reply properties), reduction is on, keeps the verdicts of
/// the correct core and of bug 1 (a double reply after a crash), and
/// finds little to leave out, since any active node may send to any other.
#[test]
fn reqack_with_history_properties_keeps_its_verdicts() {
    use cmc_world::example_cores::reqack::ReqAck;
    let reqack = |bug, params: &[&str]| {
        let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), 3).expect("a spec");
        spec.set_all(params).expect("valid parameters");
        World::new(spec)
    };
    let plain = ["requests=2"];
    let full = check(reqack(0, &plain), false);
    let reduced = check(reqack(0, &plain), true);
    assert_eq!(
        (&full.verdict, &reduced.verdict),
        (&Verdict::Pass, &Verdict::Pass)
    );
    eprintln!(
        "reqack, 3 nodes, requests=2: {} states without reduction, {} with: {:?}",
        full.stats.distinct_states, reduced.stats.distinct_states, reduced.stats.reduction
    );
    assert!(reduced.stats.distinct_states <= full.stats.distinct_states);
    let crash = ["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"];
    for reduction in [false, true] {
        assert_violated(
            &check(reqack(1, &crash), reduction),
            "AtMostOneReply",
            reduction,
        );
    }
}
