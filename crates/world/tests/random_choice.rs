//! Random choices: a core asks for a value among k (CHOOSE), the
//! environment answers with a CHOICE event. Breadth-first search explores
//! every value; a random walk draws one from its seed.

mod common;

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Model;
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::EventKind;
use cmc_world::test_support::StepCore;
use cmc_world::{CCore, World, WorldSpec};

/// The two values drawn (each 0 until drawn, then value + 1).
#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Drawn {
    first: u32,
    second: u32,
}

/// At START asks for choice 0 among `cfg0` values and choice 1 among
/// `cfg1`, and records each value when it comes.
fn two_dice() -> StepCore<Drawn> {
    StepCore::new("two-dice", |config, v: &mut Drawn, event, out| {
        match event.kind() {
            Some(EventKind::Start) => {
                out.choose(0, config.params[0] as u8)?;
                out.choose(1, config.params[1] as u8)?;
            }
            Some(EventKind::Choice) => {
                let value = event.payload[0] as u32 + 1;
                match event.id {
                    0 => v.first = value,
                    _ => v.second = value,
                }
            }
            _ => {}
        }
        Ok(())
    })
}

fn dice_checker(k0: u8, k1: u8) -> Checker<World> {
    let spec = WorldSpec::builder(Arc::new(two_dice()), 1)
        .core_param(0, k0 as u64)
        .core_param(1, k1 as u64)
        .build()
        .unwrap();
    Checker::new(World::new(spec)).workers(1)
}

#[test]
fn every_value_of_every_choice_is_explored() {
    // Each choice is independently pending or made with one of its k
    // values, and each state is reachable (make the choices in either
    // order): (1 + k0) * (1 + k1) states; the deepest makes both (depth 3).
    for (k0, k1) in [(2, 3), (1, 4), (5, 1)] {
        let checker = dice_checker(k0, k1);
        let outcome = checker.run();
        assert_eq!(outcome.verdict, Verdict::Pass, "k = {k0}, {k1}");
        let expected = (1 + k0 as u64) * (1 + k1 as u64);
        assert_eq!(outcome.stats.distinct_states, expected, "k = {k0}, {k1}");
        assert_eq!(outcome.stats.depth, 3);
    }
}

#[test]
fn a_choice_of_zero_values_is_a_bad_output() {
    let checker = dice_checker(0, 2);
    let outcome = checker.run();
    assert!(matches!(outcome.verdict, Verdict::Error { .. }));
    let fault = checker.model().fault().expect("a fault");
    assert!(fault.to_string().contains("CHOOSE"), "{fault}");
    assert!(fault.to_string().contains("k (1 to 255)"), "{fault}");
}

/// The client's node draws a slot among 4 for its request and replies when
/// the slot is written. With the `bug`, slot 3 is "written" twice, so the
/// request is answered twice: only the value 3 shows it.
fn slot_picker(bug: bool) -> StepCore<Drawn> {
    StepCore::new("slot-picker", move |_, v: &mut Drawn, event, out| {
        match event.kind() {
            Some(EventKind::Client) => {
                v.first = event.id + 1;
                out.choose(0, 4)?;
            }
            Some(EventKind::Choice) => {
                let slot = event.payload[0];
                out.reply(v.first - 1, &[slot])?;
                if bug && slot == 3 {
                    out.reply(v.first - 1, &[slot])?;
                }
            }
            _ => {}
        }
        Ok(())
    })
}

fn slot_checker(bug: bool) -> Checker<World> {
    let spec = WorldSpec::builder(Arc::new(slot_picker(bug)), 1)
        .requests(1)
        .build()
        .unwrap();
    Checker::new(World::new(spec)).workers(1)
}

#[test]
fn a_bug_behind_one_random_value_is_found_by_breadth_first_search() {
    // init, the request issued (choice pending), then one state per slot:
    // 1 + 1 + 4 states when correct.
    let outcome = slot_checker(false).run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, 6);
    let checker = slot_checker(true);
    let outcome = checker.run();
    match &outcome.verdict {
        Verdict::Violated { property, .. } => assert_eq!(property, "AtMostOneReply"),
        other => panic!("expected AtMostOneReply violated, got {other:?}"),
    }
    let trace = outcome.counterexample.as_ref().expect("a counterexample");
    let last = trace.steps.last().and_then(|step| step.action.as_ref());
    let text = checker.model().format_action(last.expect("an action"));
    assert_eq!(text, "CHOICE n0 id=0 value=3");
}

#[test]
fn a_random_walk_draws_the_value_from_its_seed() {
    // Each walk issues the request and then draws one of the 4 values;
    // over 64 walks some seed-driven draw is 3 (probability 1 - (3/4)^64),
    // and the same seed gives the same walk, hence the same trace.
    let run = |seed| {
        let checker = slot_checker(true).simulate(64, 10, seed);
        let outcome = checker.run();
        let trace = outcome.counterexample.expect("some walk drew 3");
        let texts: Vec<String> = trace
            .steps
            .iter()
            .filter_map(|step| step.action.as_ref())
            .map(|action| checker.model().format_action(action))
            .collect();
        texts
    };
    let first = run(7);
    assert_eq!(first.last().unwrap(), "CHOICE n0 id=0 value=3");
    assert_eq!(run(7), first);
}

#[test]
fn a_c_core_draws_through_the_same_abi() {
    // START asks for one choice among k: the initial state, then one state
    // per value: 1 + k states, and the C core records each value.
    let core = CCore::load(&common::fixture("libdice.so")).unwrap();
    for k in [1u8, 3, 7] {
        let spec = WorldSpec::builder(
            Arc::new(CCore::load(&common::fixture("libdice.so")).unwrap()),
            1,
        )
        .core_param(0, k as u64)
        .build()
        .unwrap();
        let world = World::new(spec);
        let outcome = Checker::new(world).workers(1).run();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(outcome.stats.distinct_states, 1 + k as u64, "k = {k}");
    }
    let spec = WorldSpec::builder(Arc::new(core), 1)
        .core_param(0, 3)
        .build()
        .unwrap();
    let world = World::new(spec);
    let initial = common::initial_state(&world);
    let actions = common::enabled_actions(&world, &initial);
    let after = world.next_state(&initial, &actions[2]).unwrap();
    assert_eq!(world.format_action(&actions[2]), "CHOICE n0 id=0 value=2");
    let drawn = world.inspect(&after).node(0).volatile_as::<u32>().unwrap();
    assert_eq!(drawn, 3, "the C core saw value 2");
}
