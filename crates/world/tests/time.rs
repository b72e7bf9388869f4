//! Time in the World: timers with a deadline on their node's clock fire only
//! once the clock has reached it, and with `skew=K` no two clocks ever differ
//! by more than K. Counts are derived by hand or by an enumeration that does
//! not use the World.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Property;
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::{EventKind, OutputKind};
use cmc_world::system::action::{Action, NodeAction};
use cmc_world::system::state::WorldState;
use cmc_world::test_support::StepCore;
use cmc_world::{FaultKind, World, WorldSpec};

/// What the alarm core remembers: whether its timer fired, and at which clock.
#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Alarm {
    fired: u32,
    fired_at: u32,
}

/// How the alarm core arms its timer 0 at START.
#[derive(Clone, Copy)]
enum Arming {
    /// `SET_TIMER`: may fire at any moment.
    AnyMoment,
    /// `SET_TIMER_AT(deadline)`.
    At(u64),
    /// `SET_TIMER_AT(5)`, then `SET_TIMER_AT(2)` in the same step: the last wins.
    Rearmed,
    /// `SET_TIMER_AT(2)`, then `CANCEL_TIMER`: never fires.
    Cancelled,
    /// A SET_TIMER_AT output whose payload is not an 8-byte deadline.
    Malformed,
}

/// Arms timer 0 at START as `arming` says and records the clock at which it
/// fires.
fn alarm_core(arming: Arming) -> Arc<StepCore<Alarm>> {
    Arc::new(StepCore::new(
        "alarm",
        move |_, volatile: &mut Alarm, event, out| match event.kind() {
            Some(EventKind::Start) => match arming {
                Arming::AnyMoment => out.set_timer(0),
                Arming::At(deadline) => out.set_timer_at(0, deadline),
                Arming::Rearmed => {
                    out.set_timer_at(0, 5)?;
                    out.set_timer_at(0, 2)
                }
                Arming::Cancelled => {
                    out.set_timer_at(0, 2)?;
                    out.cancel_timer(0)
                }
                Arming::Malformed => out.emit(OutputKind::SetTimerAt, 0, 0, &[2, 0, 0, 0]),
            },
            Some(EventKind::Timer) => {
                *volatile = Alarm {
                    fired: 1,
                    fired_at: event.clock as u32,
                };
                Ok(())
            }
            _ => Ok(()),
        },
    ))
}

fn alarm(arming: Arming, nodes: usize, params: &[&str]) -> World {
    let mut spec = WorldSpec::new(alarm_core(arming), nodes).unwrap();
    spec.set_all(params).unwrap();
    World::new(spec)
}

/// Every node whose timer fired, with the clock it fired at.
fn firings(world: &World, state: &WorldState) -> Vec<u32> {
    let inspect = world.inspect(state);
    (0..inspect.nodes())
        .filter_map(|node| inspect.node(node).volatile_as::<Alarm>())
        .filter(|alarm| alarm.fired == 1)
        .map(|alarm| alarm.fired_at)
        .collect()
}

fn never_before(deadline: u32) -> Property<World> {
    Property::always("NeverEarly", move |world: &World, state| {
        firings(world, state).iter().all(|&at| at >= deadline)
    })
}

#[test]
fn a_timer_with_a_deadline_never_fires_early() {
    // One node, ticks=3, deadline 2. By hand: the clock goes 0..=3 with the
    // timer armed (4 states); the timer fires at clock 2 (then one TICK more
    // to 3: 2 states) or at clock 3 (1 state): 7.
    let checker =
        Checker::new(alarm(Arming::At(2), 1, &["ticks=3"]).with_property(never_before(2)))
            .workers(2);
    let outcome = checker.run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert!(checker.model().fault().is_none());
    assert_eq!(outcome.stats.distinct_states, 7);
    // A deadline the budget never lets the clock reach: the timer never fires.
    let late = Checker::new(alarm(Arming::At(4), 1, &["ticks=3"])).workers(1);
    let outcome = late.run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, 4, "clock 0..=3, never fired");
}

#[test]
fn a_timer_without_a_deadline_still_fires_at_any_moment() {
    // The same node with SET_TIMER: armed at clock 0..=3 (4 states), fired at
    // clock f in 0..=3 then ticked up to 3 (4 + 3 + 2 + 1 = 10 states): 14.
    let checker =
        Checker::new(alarm(Arming::AnyMoment, 1, &["ticks=3"]).with_property(never_before(2)))
            .workers(1);
    let outcome = checker.run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "NeverEarly"),
        "{:?}",
        outcome.verdict
    );
    let free = Checker::new(alarm(Arming::AnyMoment, 1, &["ticks=3"])).workers(1);
    assert_eq!(free.run().stats.distinct_states, 14);
}

#[test]
fn rearming_replaces_the_deadline_and_cancel_removes_it() {
    let rearmed =
        Checker::new(alarm(Arming::Rearmed, 1, &["ticks=3"]).with_property(never_before(2)))
            .workers(1);
    let outcome = rearmed.run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, 7, "as with deadline 2 alone");
    let cancelled = Checker::new(alarm(Arming::Cancelled, 1, &["ticks=3"])).workers(1);
    let outcome = cancelled.run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, 4, "the timer never fires");
}

#[test]
fn a_deadline_past_the_largest_clock_is_a_capacity_fault() {
    let checker = Checker::new(alarm(Arming::At(1 << 32), 1, &[])).workers(1);
    let outcome = checker.run();
    assert!(
        matches!(outcome.verdict, Verdict::Error { .. }),
        "{:?}",
        outcome.verdict
    );
    let fault = checker.model().fault().expect("a fault");
    assert!(
        matches!(&fault.kind, FaultKind::Capacity(why) if why.contains("deadline 4294967296 of timer 0 is beyond the largest clock value")),
        "{fault}"
    );
}

#[test]
fn a_deadline_that_is_not_eight_bytes_is_a_bad_output() {
    let checker = Checker::new(alarm(Arming::Malformed, 1, &[])).workers(1);
    assert!(matches!(checker.run().verdict, Verdict::Error { .. }));
    let fault = checker.model().fault().expect("a fault");
    assert!(
        fault
            .to_string()
            .contains("the deadline must be 8 little-endian bytes, not 4"),
        "{fault}"
    );
}

/// The number of clock vectors of `nodes` clocks that start at 0, with at
/// most `ticks` increments in total and no two clocks more than `skew`
/// apart: every such vector is reachable (raise the slowest clock first),
/// and the tick budget left is determined by the vector.
fn clock_vectors(nodes: usize, ticks: u32, skew: u32) -> u64 {
    fn count(prefix: &mut Vec<u32>, nodes: usize, ticks: u32, skew: u32) -> u64 {
        if prefix.len() == nodes {
            let (low, high) = (prefix.iter().min().unwrap(), prefix.iter().max().unwrap());
            return u64::from(high - low <= skew);
        }
        let used: u32 = prefix.iter().sum();
        (0..=ticks - used)
            .map(|clock| {
                prefix.push(clock);
                let found = count(prefix, nodes, ticks, skew);
                prefix.pop();
                found
            })
            .sum()
    }
    count(&mut Vec::new(), nodes, ticks, skew)
}

/// The largest difference between two clocks of `state`.
fn spread(world: &World, state: &WorldState) -> u32 {
    let inspect = world.inspect(state);
    let clocks = (0..inspect.nodes()).map(|node| inspect.node(node).env.clock);
    clocks.clone().max().unwrap() - clocks.min().unwrap()
}

#[test]
fn the_skew_bound_holds_in_every_reachable_state() {
    for (nodes, ticks, skew) in [(3, 6, 1), (3, 6, 2), (2, 7, 3)] {
        let params = [format!("ticks={ticks}"), format!("skew={skew}")];
        let mut spec = WorldSpec::new(alarm_core(Arming::At(1_000)), nodes).unwrap();
        spec.set_all(&params).unwrap();
        let bound = Property::always("SkewBound", move |world: &World, state: &WorldState| {
            spread(world, state) <= skew
        });
        let checker = Checker::new(World::new(spec).with_property(bound)).workers(2);
        let outcome = checker.run();
        assert_eq!(outcome.verdict, Verdict::Pass, "{params:?}");
        assert_eq!(
            outcome.stats.distinct_states,
            clock_vectors(nodes, ticks, skew),
            "{params:?}"
        );
    }
    // Without a bound every vector with at most `ticks` increments is reached.
    let free = Checker::new(alarm(Arming::At(1_000), 3, &["ticks=6"])).workers(1);
    assert_eq!(free.run().stats.distinct_states, clock_vectors(3, 6, 6));
    // The enumeration itself, by hand: with skew 1, a vector is a slowest
    // clock m and j clocks at m + 1 (j = 0..=2, in 1, 3, 3 ways), with
    // 3m + j <= 6: 7 for m = 0, 7 for m = 1, 1 for m = 2.
    assert_eq!(clock_vectors(3, 6, 1), 15);
}

#[test]
fn a_crashed_node_does_not_hold_time_back() {
    // Two nodes, skew=1: with n1 down, n0 still reaches clock 3 because n1's
    // clock keeps running; and the bound holds with a node down too.
    let world = alarm(
        Arming::At(1_000),
        2,
        &["ticks=6", "skew=1", "crashes=1", "crash_nodes=1"],
    )
    .with_property(Property::always(
        "SkewBound",
        |world: &World, state: &WorldState| spread(world, state) <= 1,
    ))
    .with_property(Property::sometimes(
        "TimePassesWhileDown",
        |world: &World, state: &WorldState| {
            let view = world.inspect(state);
            view.node(1).env.crashed && view.node(0).env.clock == 3
        },
    ));
    let outcome = Checker::new(world).workers(1).run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    // Without a bound, a crashed node's clock stays as it was (as before),
    // while with one it moves: the step property fails there.
    let frozen = || {
        Property::step(
            "FrozenWhileDown",
            |world: &World, pre: &WorldState, _: &Action, post: &WorldState| {
                let (pre, post) = (
                    world.inspect(pre).node(1).env,
                    world.inspect(post).node(1).env,
                );
                !(pre.crashed && post.crashed) || pre.clock == post.clock
            },
        )
    };
    let params = ["ticks=2", "crashes=1", "crash_nodes=1"];
    let free = alarm(Arming::At(1_000), 2, &params).with_property(frozen());
    assert_eq!(Checker::new(free).workers(1).run().verdict, Verdict::Pass);
    let bounded =
        alarm(Arming::At(1_000), 2, &[&params[..], &["skew=2"]].concat()).with_property(frozen());
    let outcome = Checker::new(bounded).workers(1).run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "FrozenWhileDown"),
        "{:?}",
        outcome.verdict
    );
}

#[test]
fn an_early_fire_is_not_enabled_even_when_asked_for_directly() {
    // What a replay file or a hand-written action list would ask for: the
    // World refuses FIRE before the deadline, then allows it once reached.
    use cmc_model::Model;
    let world = alarm(Arming::At(1), 1, &["ticks=1"]);
    let mut init = Vec::new();
    world.init_states(&mut init);
    let fire = Action::Node(NodeAction::Fire { node: 0, timer: 0 });
    assert!(world.next_state(&init[0], &fire).is_none(), "clock 0 < 1");
    let mut enabled = Vec::new();
    world.actions(&init[0], &mut enabled);
    assert_eq!(enabled, vec![Action::Node(NodeAction::Tick { node: 0 })]);
    let ticked = world
        .next_state(&init[0], &Action::Node(NodeAction::Tick { node: 0 }))
        .unwrap();
    let fired = world.next_state(&ticked, &fire).expect("clock 1 reached 1");
    assert_eq!(firings(&world, &fired), vec![1]);
    assert!(
        world.inspect(&fired).node(0).env.deadlines.is_empty(),
        "a fired timer is disarmed"
    );
}
