//! Partial-order reduction on every configuration of the gate file.
//!
//! Persistent sets (`--reduction`): the reference cores' properties read
//! node state (what a node promised, learned, committed), which the World's
//! reduction cannot prove invisible to node steps, so it refuses, names such
//! a property, and the search is the unreduced one: the same verdict, the
//! same violated property and the same counts, control and planted bugs
//! alike.
//!
//! Sleep sets (`--sleep-sets`) need no invisibility: every state is found
//! at its depth, so the distinct states, the depth, the verdict and the
//! counterexample's length are exactly those of the search without them,
//! with fewer steps generated; configurations with symmetry are refused.

use cmc_model::Model;
use cmc_search::{Checker, Outcome, ReductionStats, Verdict};
use cmc_world::World;

/// One `[[core]]` of the gate file: its name, the Rust core it runs (none
/// for the C core two_phase), its nodes, its parameters and its bugs.
#[derive(Debug, Default)]
struct Configuration {
    name: String,
    rust: Option<String>,
    nodes: usize,
    params: Vec<String>,
    bugs: Vec<u32>,
}

/// The configurations of `gate.toml`, read line by line (each key the
/// test needs sits on one line).
fn gate_configurations() -> Vec<Configuration> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/gate.toml");
    let text = std::fs::read_to_string(path).expect("the gate file");
    let mut configurations: Vec<Configuration> = Vec::new();
    let quoted = |value: &str| value.trim().trim_matches('"').to_string();
    for line in text.lines().map(str::trim) {
        if line == "[[core]]" {
            configurations.push(Configuration::default());
            continue;
        }
        let (Some(core), Some((key, value))) = (configurations.last_mut(), line.split_once(" = "))
        else {
            continue;
        };
        match key {
            "name" => core.name = quoted(value),
            "rust" => core.rust = Some(quoted(value)),
            "nodes" => core.nodes = value.parse().expect("nodes is a number"),
            // The strings of a one-line array: every other piece between quotes.
            "params" => {
                core.params = value
                    .split('"')
                    .skip(1)
                    .step_by(2)
                    .map(String::from)
                    .collect()
            }
            "bug" => core.bugs.push(value.parse().expect("bug is a number")),
            _ => {}
        }
    }
    configurations
}

/// The World of `configuration` with `bug` planted (0: the control), with
/// the properties the gate checks.
fn world(configuration: &Configuration, bug: u32) -> World {
    // abd::world places the clients itself (on nodes 3 and 4, as the gate).
    let sets_its_clients = configuration.rust.as_deref() == Some("abd");
    let params: Vec<&str> = configuration
        .params
        .iter()
        .map(String::as_str)
        .filter(|param| !(sets_its_clients && param.starts_with("clients=")))
        .collect();
    let nodes = configuration.nodes;
    let made = match configuration.rust.as_deref() {
        None => cmc_protocols::two_phase::world(bug, nodes, &params),
        Some("paxos") => cmc_protocols::paxos::properties::world(bug, nodes, &params),
        Some("primary_backup") => cmc_protocols::primary_backup::world(bug, nodes, &params),
        Some("abd") => cmc_protocols::abd::properties::world(bug, nodes, &params),
        Some("raft") => cmc_protocols::raft::world(bug, nodes, &params),
        Some(other) => panic!("a gate configuration runs rust:{other}, unknown to this test"),
    };
    made.unwrap_or_else(|why| panic!("{}: {why}", configuration.name))
}

/// Levels searched per variant: enough for each to take every kind of
/// step, few enough for the test to stay fast.
const DEPTH: u64 = 7;

fn check(world: World, reduction: bool) -> Outcome<World> {
    Checker::new(world)
        .workers(1)
        .max_depth(DEPTH)
        .check_deadlock(false)
        .reduction(reduction)
        .run()
}

/// Levels searched with and without sleep sets: deeper than [`DEPTH`], so
/// that steps sleep through several levels and planted bugs are caught.
const SLEEP_DEPTH: u64 = 9;

fn check_sleeping(world: World, sleep_sets: bool, workers: usize) -> Outcome<World> {
    Checker::new(world)
        .workers(workers)
        .max_depth(SLEEP_DEPTH)
        .check_deadlock(false)
        .sleep_sets(sleep_sets)
        .run()
}

fn verdict(outcome: &Outcome<World>) -> String {
    match &outcome.verdict {
        Verdict::Violated { property, .. } => property.clone(),
        other => other.as_str().to_string(),
    }
}

#[test]
fn every_gate_configuration_keeps_its_verdict_and_says_why_it_is_not_reduced() {
    let configurations = gate_configurations();
    assert!(configurations.len() >= 6, "{configurations:?}");
    for configuration in &configurations {
        for bug in std::iter::once(0).chain(configuration.bugs.iter().copied()) {
            let label = format!("{} bug {bug}", configuration.name);
            let probe = world(configuration, bug);
            let why = probe
                .reduction_support()
                .expect_err("a reference core's properties read node state");
            let node_reading: Vec<String> = probe
                .properties()
                .iter()
                .map(|property| property.name.clone())
                .filter(|name| why.contains(&format!("property {name} ")))
                .collect();
            assert_eq!(node_reading.len(), 1, "{label}: {why}");
            let full = check(world(configuration, bug), false);
            let asked = check(world(configuration, bug), true);
            assert_eq!(verdict(&full), verdict(&asked), "{label}");
            assert_eq!(
                full.stats.distinct_states, asked.stats.distinct_states,
                "{label}"
            );
            assert_eq!(
                asked.stats.reduction,
                Some(ReductionStats::Off { why: why.clone() }),
                "{label}"
            );
        }
    }
}

/// The length in states of the outcome's counterexample, if any.
fn counterexample_length(outcome: &Outcome<World>) -> Option<usize> {
    outcome.counterexample.as_ref().map(|c| c.steps.len() + 1)
}

#[test]
fn every_gate_configuration_finds_the_same_states_with_sleep_sets_and_generates_fewer() {
    let configurations = gate_configurations();
    let mut reduced = 0;
    for configuration in &configurations {
        for bug in std::iter::once(0).chain(configuration.bugs.iter().copied()) {
            let label = format!("{} bug {bug}", configuration.name);
            let full = check_sleeping(world(configuration, bug), false, 1);
            // Two workers share the sets of a level: the counts are exact
            // whatever the worker count.
            let workers = if bug == 0 { 2 } else { 1 };
            let asleep = check_sleeping(world(configuration, bug), true, workers);
            assert_eq!(verdict(&full), verdict(&asleep), "{label}");
            assert_eq!(
                (full.stats.distinct_states, full.stats.depth),
                (asleep.stats.distinct_states, asleep.stats.depth),
                "{label}: every state, at its depth"
            );
            assert_eq!(
                counterexample_length(&full),
                counterexample_length(&asleep),
                "{label}: the shortest counterexample"
            );
            match asleep.stats.reduction {
                Some(ReductionStats::Sleep { skipped }) => {
                    assert!(skipped > 0, "{label}: no step slept");
                    assert!(
                        asleep.stats.states_generated < full.stats.states_generated,
                        "{label}: {} steps generated with sleep sets, {} without",
                        asleep.stats.states_generated,
                        full.stats.states_generated
                    );
                    reduced += 1;
                }
                Some(ReductionStats::Off { ref why }) => {
                    let symmetric = configuration
                        .params
                        .iter()
                        .any(|p| p.starts_with("symmetry="));
                    // Raft's registration keeps the Votes ghost, whose
                    // updates sleep sets do not reorder.
                    let refused =
                        (symmetric && why.contains("symmetry")) || why.contains("ghost variable");
                    assert!(refused, "{label}: {why}");
                    assert_eq!(full.stats.states_generated, asleep.stats.states_generated);
                }
                ref other => panic!("{label}: {other:?}"),
            }
        }
    }
    assert!(
        reduced >= configurations.len(),
        "{reduced} variants reduced"
    );
}
