//! Link failures: one-way cuts (`oneway_cuts`), isolating a node
//! (`isolations`) and splitting the nodes in two groups (`splits`), each a
//! budgeted action besides the pair changes of `partitions`; the
//! quiescence check's fair schedule heals them all.

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Model;
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::EventKind;
use cmc_world::system::spec::WorldSpecBuilder;
use cmc_world::system::state::Budget;
use cmc_world::test_support::StepCore;
use cmc_world::{build_world, World, WorldArgs, WorldSpec};

#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Flags {
    bits: u32,
}

/// A core that does nothing: the World's states are then exactly its link
/// states and budgets.
fn quiet() -> StepCore<Flags> {
    StepCore::new("quiet", |_, _, _, _| Ok(()))
}

/// The link budgets of a brute-force enumeration.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Budgets {
    pairs: u8,
    oneway: u8,
    isolations: u8,
    splits: u8,
}

/// Counts the link states reachable in a World of `nodes` nodes, written
/// independently of the World: a state is the set of cut directions (bit
/// `src * nodes + dst`) and the budgets left.
fn enumerate(nodes: u32, budgets: Budgets) -> usize {
    let bit = |src: u32, dst: u32| 1u64 << (src * nodes + dst);
    let crossing = |group: u64| {
        let mut mask = 0;
        for a in (0..nodes).filter(|a| group & (1 << a) != 0) {
            for b in (0..nodes).filter(|b| group & (1 << b) == 0) {
                mask |= bit(a, b) | bit(b, a);
            }
        }
        mask
    };
    let mut seen = HashSet::new();
    let mut todo = vec![(0u64, budgets)];
    while let Some((cut, left)) = todo.pop() {
        if !seen.insert((cut, left)) {
            continue;
        }
        let mut next = Vec::new();
        if left.pairs > 0 {
            for a in 0..nodes {
                for b in a + 1..nodes {
                    let both = bit(a, b) | bit(b, a);
                    let toggled = if cut & both == 0 {
                        cut | both
                    } else {
                        cut & !both
                    };
                    next.push((
                        toggled,
                        Budgets {
                            pairs: left.pairs - 1,
                            ..left
                        },
                    ));
                }
            }
        }
        if left.oneway > 0 {
            for src in 0..nodes {
                for dst in (0..nodes).filter(|&dst| dst != src) {
                    let toggled = cut ^ bit(src, dst);
                    next.push((
                        toggled,
                        Budgets {
                            oneway: left.oneway - 1,
                            ..left
                        },
                    ));
                }
            }
        }
        let groups: Vec<(u64, bool)> = (0..nodes)
            .map(|node| (1u64 << node, true))
            .chain((0..(1u64 << (nodes - 1)) - 1).map(|rest| (1 | rest << 1, false)))
            .collect();
        for (group, isolation) in groups {
            let mask = crossing(group);
            let budget = if isolation {
                left.isolations
            } else {
                left.splits
            };
            if budget > 0 && cut & mask != mask {
                let spent = if isolation {
                    Budgets {
                        isolations: budget - 1,
                        ..left
                    }
                } else {
                    Budgets {
                        splits: budget - 1,
                        ..left
                    }
                };
                next.push((cut | mask, spent));
            }
        }
        todo.extend(next);
    }
    seen.len()
}

/// `nodes` nodes running `core`, with the link `budgets`.
fn builder_of(core: StepCore<Flags>, nodes: usize, budgets: Budgets) -> WorldSpecBuilder {
    WorldSpec::builder(Arc::new(core), nodes)
        .budget(Budget::Partitions, budgets.pairs)
        .budget(Budget::OneWayCuts, budgets.oneway)
        .budget(Budget::Isolations, budgets.isolations)
        .budget(Budget::Splits, budgets.splits)
}

/// The World of `nodes` nodes running `core`, with the link `budgets`.
fn world_of(core: StepCore<Flags>, nodes: usize, budgets: Budgets) -> World {
    World::new(builder_of(core, nodes, budgets).build().unwrap())
}

#[test]
fn link_states_match_an_independent_enumeration() {
    let none = Budgets::default();
    let cases = [
        // By hand: from no cut, two one-way changes among 2 directions:
        // {} (2 left), {01} or {10} (1 left), {} or {01,10} (0 left): 5.
        (2, Budgets { oneway: 2, ..none }, 5),
        // 6 directions, 2 changes: 1 + 6 + (1 + 15) = 23.
        (3, Budgets { oneway: 2, ..none }, 23),
        (
            3,
            Budgets {
                pairs: 1,
                oneway: 1,
                ..none
            },
            0,
        ),
        (
            3,
            Budgets {
                isolations: 1,
                splits: 1,
                ..none
            },
            0,
        ),
        (
            4,
            Budgets {
                pairs: 1,
                isolations: 1,
                splits: 2,
                ..none
            },
            0,
        ),
        (
            4,
            Budgets {
                oneway: 1,
                splits: 1,
                isolations: 1,
                pairs: 1,
            },
            0,
        ),
    ];
    for (nodes, budgets, by_hand) in cases {
        let expected = enumerate(nodes, budgets);
        if by_hand > 0 {
            assert_eq!(expected, by_hand, "the enumeration itself, {nodes} nodes");
        }
        let checker = Checker::new(world_of(quiet(), nodes as usize, budgets)).workers(1);
        let outcome = checker.run();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(
            outcome.stats.distinct_states, expected as u64,
            "{nodes} nodes"
        );
    }
}

/// Every node says hello to every other at START.
fn hello() -> StepCore<Flags> {
    StepCore::new("hello", |config, v: &mut Flags, event, out| {
        match event.kind() {
            Some(EventKind::Start) => {
                for peer in (0..config.nodes).filter(|&peer| peer != config.node) {
                    out.send(peer, b"hi")?;
                }
            }
            Some(EventKind::Recv) => v.bits |= 1 << event.src,
            _ => {}
        }
        Ok(())
    })
}

#[test]
fn a_one_way_cut_blocks_one_direction_only() {
    let one_way = Budgets {
        oneway: 1,
        ..Budgets::default()
    };
    let world = world_of(hello(), 2, one_way);
    let initial = common::initial_state(&world);
    let cut = common::action_named(&world, &initial, "LINK cut n0->n1");
    let after = world.next_state(&initial, &cut).unwrap();
    let texts = common::action_texts(&world, &after);
    let after = world.inspect(&after);
    assert!(
        texts.iter().any(|t| t.starts_with("DELIVER n1->n0")),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.starts_with("DELIVER n0->n1")),
        "{texts:?}"
    );
    assert!(!after.link_up(0, 1) && after.link_up(1, 0));
}

#[test]
fn isolation_and_split_cut_every_link_across() {
    let budgets = Budgets {
        isolations: 1,
        splits: 1,
        ..Budgets::default()
    };
    let world = world_of(hello(), 4, budgets);
    let initial = common::initial_state(&world);
    let texts = common::action_texts(&world, &initial);
    // 4 isolations and 2^3 - 1 = 7 splits (node 0's group never holds everyone).
    assert_eq!(texts.iter().filter(|t| t.starts_with("ISOLATE")).count(), 4);
    assert_eq!(texts.iter().filter(|t| t.starts_with("SPLIT")).count(), 7);
    let split = common::action_named(&world, &initial, "SPLIT n0,n2 | n1,n3");
    let after = world.next_state(&initial, &split).unwrap();
    let after = world.inspect(&after);
    for (a, b) in [(0, 1), (0, 3), (2, 1), (2, 3)] {
        assert!(!after.link_up(a, b) && !after.link_up(b, a), "{a}-{b}");
    }
    assert!(after.link_up(0, 2) && after.link_up(1, 3));
}

/// n0 takes the client's request, asks n1 and n2, and answers with the
/// first response: a single cut pair leaves it a path, but not every link
/// of n0 cut at once.
fn ask_two_core() -> StepCore<Flags> {
    StepCore::new("ask-two", |config, v: &mut Flags, event, out| {
        match (config.node, event.kind()) {
            (0, Some(EventKind::Client)) => {
                v.bits = 1;
                out.send(1, b"req")?;
                out.send(2, b"req")?;
            }
            (0, Some(EventKind::Recv)) if v.bits == 1 => {
                v.bits = 2;
                out.reply(0, &[1])?;
            }
            (_, Some(EventKind::Recv)) if config.node != 0 => out.send(0, b"resp")?,
            _ => {}
        }
        Ok(())
    })
}

fn ask_two(budgets: Budgets, quiescence: Option<u32>) -> Checker<World> {
    let mut builder = builder_of(ask_two_core(), 3, budgets).requests(1);
    if let Some(steps) = quiescence {
        builder = builder.quiescence(steps);
    }
    Checker::new(World::new(builder.build().unwrap())).workers(1)
}

#[test]
fn isolating_a_node_exposes_what_one_pair_cut_cannot() {
    let none = Budgets::default();
    let outcome = ask_two(Budgets { pairs: 1, ..none }, None).run();
    assert_eq!(outcome.verdict, Verdict::Pass, "one cut pair leaves a path");
    let checker = ask_two(
        Budgets {
            isolations: 1,
            ..none
        },
        None,
    );
    let outcome = checker.run();
    match &outcome.verdict {
        Verdict::Violated { property, .. } => assert_eq!(property, "deadlock"),
        other => panic!("expected a deadlock, got {other:?}"),
    }
    let trace = outcome.counterexample.as_ref().unwrap();
    let texts: Vec<String> = trace
        .steps
        .iter()
        .filter_map(|s| s.action.as_ref())
        .map(|a| checker.model().format_action(a))
        .collect();
    assert!(texts.contains(&"ISOLATE n0".to_string()), "{texts:?}");
}

#[test]
fn the_fair_schedule_heals_one_way_cuts_isolations_and_splits() {
    // Without the deadlock check, a cut that is never healed leaves the
    // request unanswered; quiescence heals every cut direction first, so
    // the correct core passes. Without healing, the fair run from the
    // deadlocked states would be stuck and Quiescence violated.
    let none = Budgets::default();
    for budgets in [
        Budgets { oneway: 2, ..none },
        Budgets {
            isolations: 1,
            ..none
        },
        Budgets { splits: 1, ..none },
    ] {
        let deadlocks = ask_two(budgets, None).run();
        assert!(
            matches!(&deadlocks.verdict, Verdict::Violated { property, .. } if property == "deadlock"),
            "the cut alone leaves the request unanswered"
        );
        let outcome = ask_two(budgets, Some(20)).check_deadlock(false).run();
        assert_eq!(outcome.verdict, Verdict::Pass);
    }
}

fn c_view_check(params: &[&str]) -> Verdict {
    let args = WorldArgs {
        cores: vec![common::fixture("libdice_links.so").display().to_string()],
        nodes: 3,
        params: params.iter().map(|p| p.to_string()).collect(),
        check_determinism: false,
    };
    let world = build_world(&args).unwrap();
    Checker::new(world).workers(1).run().verdict
}

#[test]
fn c_properties_see_each_cut_direction() {
    // The C core only draws among cfg0=1 value; its properties read the
    // view's `cut` matrix and `links_down`. Pair cuts keep the matrix
    // symmetric; a one-way cut does not, and both views agree throughout.
    let pass = c_view_check(&["cfg0=1", "partitions=2", "isolations=1", "splits=1"]);
    assert_eq!(pass, Verdict::Pass);
    match c_view_check(&["cfg0=1", "oneway_cuts=1"]) {
        Verdict::Violated { property, .. } => assert_eq!(property, "CutsAreSymmetric"),
        other => panic!("expected CutsAreSymmetric violated, got {other:?}"),
    }
}
