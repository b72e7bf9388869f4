//! Properties written in C (`CMC_PROPERTIES`, `cores/test/reqack_props.c`
//! linked with the reqack core): they are checked by name like Rust
//! properties, read the World only through the explicit inspection path, and
//! never decide what is enabled.

mod common;

use std::collections::HashSet;
use std::path::Path;

use cmc_model::Model;
use cmc_search::{Checker, Verdict};
use cmc_world::core::property_table::CPropertyKind;
use cmc_world::{build_world, CCore, World, WorldArgs};

fn args(library: &Path, params: &[&str]) -> WorldArgs {
    WorldArgs {
        cores: vec![library.display().to_string()],
        nodes: 2,
        params: params.iter().map(|p| p.to_string()).collect(),
        check_determinism: false,
    }
}

fn check(library: &str, params: &[&str]) -> Verdict {
    let world = build_world(&args(&common::fixture(library), params)).unwrap();
    Checker::new(world).workers(1).run().verdict
}

#[test]
fn declared_properties_are_loaded_by_kind_and_name() {
    let core = CCore::load(&common::fixture("libreqack_props_GOAL_NEVER.so")).unwrap();
    let declared: Vec<(CPropertyKind, &str)> = core
        .properties()
        .iter()
        .map(|p| (p.kind(), p.name()))
        .collect();
    assert_eq!(
        declared,
        [
            (CPropertyKind::Invariant, "StoredOnlyIssued"),
            (CPropertyKind::Action, "StoredGrows"),
            (CPropertyKind::Witness, "StoredAndReplied"),
            (CPropertyKind::QuiescenceGoal, "NeverReached"),
        ]
    );
    let plain = CCore::load(&common::fixture("libreqack.so")).unwrap();
    assert!(plain.properties().is_empty());
}

#[test]
fn a_table_with_a_repeated_name_is_refused_at_load() {
    let library = common::fixture("libreqack_props_REPEATED.so");
    let error = CCore::load(&library)
        .err()
        .expect("a repeated name is refused");
    assert!(
        error
            .to_string()
            .contains("repeated name `StoredOnlyIssued`"),
        "{error}"
    );
    let built = build_world(&args(&library, &["requests=1"]));
    assert!(built.is_err(), "and so is a World of it");
}

#[test]
fn a_property_named_like_a_builtin_one_is_refused() {
    let library = common::fixture("libreqack_props_BUILTIN_NAME.so");
    let error = build_world(&args(&library, &["requests=1"]))
        .err()
        .expect("the name AtMostOneReply is taken");
    assert!(
        error.contains("named `AtMostOneReply`, which cmc already checks"),
        "{error}"
    );
}

#[test]
fn holding_properties_and_a_reached_witness_pass() {
    // The goal is declared but unused without quiescence=STEPS.
    assert_eq!(
        check("libreqack_props_GOAL_NEVER.so", &["requests=1", "drops=1"]),
        Verdict::Pass
    );
}

#[test]
fn a_violated_invariant_is_reported_by_name() {
    let verdict = check("libreqack_props_VIOLATED.so", &["requests=1"]);
    assert!(
        matches!(&verdict, Verdict::Violated { property, .. } if property == "NothingStored"),
        "{verdict:?}"
    );
}

#[test]
fn a_witness_never_reached_is_reported_as_such() {
    let verdict = check("libreqack_props_UNREACHED.so", &["requests=1", "dups=1"]);
    assert_eq!(
        verdict,
        Verdict::Vacuous {
            properties: vec!["TwoReplies".into()]
        }
    );
}

#[test]
fn the_quiescence_goal_declared_in_c_replaces_the_default() {
    let verdict = check(
        "libreqack_props_GOAL_NEVER.so",
        &["requests=1", "quiescence=30"],
    );
    assert!(
        matches!(&verdict, Verdict::Violated { property, .. } if property == "Quiescence"),
        "{verdict:?}"
    );
    let world = build_world(&args(
        &common::fixture("libreqack_props_GOAL_NEVER.so"),
        &["requests=1", "quiescence=30"],
    ))
    .unwrap();
    let mut init = Vec::new();
    world.init_states(&mut init);
    let run = world.fair_run(&init[0]).expect("no budgets to spend");
    assert!(run.to_string().contains("goal `NeverReached`"), "{run}");
}

#[test]
fn a_property_that_writes_to_its_view_is_a_fault() {
    let world = build_world(&args(
        &common::fixture("libreqack_props_WRITES.so"),
        &["requests=1"],
    ))
    .unwrap();
    let outcome = Checker::new(world).workers(1).run();
    assert!(
        matches!(&outcome.verdict, Verdict::Error { message } if message.contains("while checking property Writes")),
        "{:?}",
        outcome.verdict
    );
}

/// The number of calls the properties of `library` made so far (its
/// `reqack_props_calls`).
fn calls(library: &Path) -> u64 {
    // SAFETY: the fixture exports this function with this signature; the
    // library is already loaded by the World, so this only finds it.
    unsafe {
        let lib = libloading::Library::new(library).unwrap();
        let count = *lib
            .get::<unsafe extern "C" fn() -> u64>(b"reqack_props_calls")
            .unwrap();
        count()
    }
}

/// Every state reachable in `world` through `init_states`, `actions` and
/// `next_state` only (no property is evaluated), and the number of steps.
fn explore(world: &World) -> (HashSet<Vec<u8>>, usize) {
    use cmc_model::Encode;
    let mut frontier = Vec::new();
    world.init_states(&mut frontier);
    let mut seen: HashSet<Vec<u8>> = frontier.iter().map(Encode::to_bytes).collect();
    let mut steps = 0;
    while let Some(state) = frontier.pop() {
        let mut actions = Vec::new();
        world.actions(&state, &mut actions);
        for action in actions {
            if let Some(next) = world.next_state(&state, &action) {
                steps += 1;
                if seen.insert(next.to_bytes()) {
                    frontier.push(next);
                }
            }
        }
    }
    (seen, steps)
}

#[test]
fn properties_never_decide_what_is_enabled() {
    let library = common::fixture("libreqack_props.so");
    let params = ["requests=1", "drops=1", "crashes=1", "restarts=1"];
    let with = build_world(&args(&library, &params)).unwrap();
    assert!(with.properties().len() > 2, "the C properties are attached");
    // Enumerating what is enabled and taking steps never calls a property.
    let before = calls(&library);
    let (states, steps) = explore(&with);
    assert_eq!(
        calls(&library),
        before,
        "a C property was called by the search's step path"
    );
    // The same World without the C properties has the same state graph.
    let mut spec =
        cmc_world::WorldSpec::new(std::sync::Arc::new(CCore::load(&library).unwrap()), 2).unwrap();
    spec.set_all(&params).unwrap();
    let without = World::new(spec);
    assert_eq!(explore(&without), (states.clone(), steps));
    // Checking does call them, and explores the same states.
    let outcome = Checker::new(with).workers(1).run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, states.len() as u64);
    assert!(
        calls(&library) > before,
        "checking evaluates the C properties"
    );
    // And the environment's source has no path to them.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for file in [
        "system/env/mod.rs",
        "system/env/outputs.rs",
        "system/action.rs",
        "run/step.rs",
        "system/state/mod.rs",
        "system/state/node.rs",
    ] {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        assert!(
            !text.contains("c_properties") && !text.contains("CProperty"),
            "{file} refers to the C properties"
        );
    }
}
